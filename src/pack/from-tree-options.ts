/** What packFromTree (from-tree.ts) is asked to do, and what it reports. */
import type { PackSummary, PackWriterOptions } from './writer.js';

export interface FromTreeOptions extends Omit<PackWriterOptions, 'base' | 'keep'> {
  /** Append to the pack already in the directory (default: when there is one). */
  append?: boolean;
  /**
   * The tree's paths that changed (or are gone) since the tree the pack appended to was made
   * from (a build's changed paths). The other paths answer as in that pack: the new index keeps
   * their records without the files being read, or even looked up (PackWriterOptions.keep). The
   * changed paths are stored without being compared with their old answers. Without it, every
   * file is read, and a record kept where the old answer is the same bytes.
   */
  changed?: ReadonlySet<string>;
  /** Store the tree's `_manifest.json` too, as an entry of the same path (what verify reads). */
  withManifest?: boolean;
  /**
   * The sha256 of that manifest as its build wrote it: the bytes stored must have it (else the
   * file is hashed again once stored, and must not have changed meanwhile).
   */
  manifestSha256?: string;
  /** Called every 4096 files with the count so far. */
  onProgress?: (files: number) => void;
  /**
   * The recipe hints of the documents the build that made the tree wrote (hints.ts): such a
   * document is a recipe from its hint, unread, when the hint holds. Only the build's own, for
   * the tree it just published.
   */
  hints?: readonly string[];
  /**
   * Not appending, with `changed` relative to the pack in the directory (which this one replaces):
   * the address and block documents `changed` does not name are recipes taken from that pack
   * (rebase.ts), unread.
   */
  rebase?: boolean;
}

export interface FromTreeSummary extends PackSummary {
  /** Files the manifest listed (all of them are in the pack). */
  files: number;
  /** Their total size in the tree. */
  treeBytes: number;
  /** Files stored as `.hex` derived from raw bytes. */
  hexEntries: number;
  /** Files kept from the previous pack without writing their bytes again. */
  reused: number;
  /** Of those, the ones kept on `changed`'s word, not read. */
  carried: number;
  /** Documents stored as recipes over the tx documents they embed. */
  recipes: number;
  /** Tx `.bin` and `.hex` files stored as slices of their block's `.bin`. */
  slices: number;
  /** Of the recipes, the ones made from their document's hint, unread. */
  hinted: number;
  /** Of the recipes, the ones taken from the pack this one replaces (FromTreeOptions.rebase), unread. */
  rebased: number;
  /** Of the recipes, changed documents over their answer in the pack appended to (delta.ts). */
  deltas: number;
  /** Chunks of the stored `_manifest.json` (FromTreeOptions.withManifest), and those taken from the pack appended to. */
  manifestChunks: number;
  manifestChunksKept: number;
}
