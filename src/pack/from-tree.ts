/**
 * Converts a finished snapshot tree into a pack: every file its `_manifest.json` lists, under its
 * tree path, byte for byte. When the pack directory already holds a pack, the new one appends to
 * it: entries whose answer is unchanged keep pointing into the old parts, only new or changed
 * files are written, into new parts. Given the paths that changed (a build's), the other paths'
 * records are copied from the old index as the new one is written, not looked up one by one.
 *
 * Each byte is stored once where the tree repeats it (docs/pack-format.md, "What is stored once"):
 * - a `.hex` file that is exactly the lowercase hex of some bytes is a HEX entry over them;
 * - a tx's `.bin` and `.hex` are a slice of its block's `.bin` blob (found by parsing the block);
 * - address and block documents are recipes over the blobs of the tx documents they embed (an
 *   address or block document the build just wrote from the hint it kept then, unread: hints.ts;
 *   not appending, the read thread makes those recipes);
 * - appending, another changed document is a recipe over its previous answer (delta.ts), and the
 *   `_manifest.json` stored (withManifest) keeps the previous one's unchanged chunks (manifest-chunks.ts).
 * The manifest is read twice (once with `changed`, the second pass's few lines kept from the first):
 * first everything but address and block documents (a block's `.bin` comes before its txs' files
 * in path order, and its txs' documents are written as the block is read, so a block's and an
 * address's txs lie near each other in the part), then those documents. With the read thread
 * making the recipes, a third reading takes the tx raw files' lines (slices: records only)
 * between the second pass's documents.
 */
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 as zcrc32 } from 'node:zlib';
import { isTxRawPath, MANIFEST_PATH } from '../contract/layout.js';
import { manifestHash } from '../index/state.js';
import { blobOf, Encoding, PACK_POINTER, packKey, type BlobRef } from '../contract/pack-format.js';
import { blockTxPlaces } from './block-txs.js';
import { deltaOf } from './delta.js';
import { docMarks, embeddedTxSegments, headTxids } from './embedded.js';
import { RecipeHints } from './hints.js';
import { RecipeRebase } from './rebase.js';
import { TreeReader, type FileRead } from './read-ahead.js';
import { prepareManifest, previousChunks, storePreparedManifest, type PreparedManifest } from './manifest-chunks.js';
import { BLOCK_BIN, BLOCK_JSON, EMBEDDING, gzipAhead, manifestLines, RAW, rawOfHex, TX_JSON, type ManifestLine } from './tree-files.js';
import { PackReader } from './reader.js';
import { answerWithSha, placementOf, previousRecipe, resolveDocs, sameAnswer } from './base-lookups.js';
import { shaKey, TxBlobs, type TxSlice } from './tx-blobs.js';
import type { FromTreeOptions, FromTreeSummary } from './from-tree-options.js';
import { GZIP_LEVEL, PackWriter, type Prepared } from './writer.js';

export type { FromTreeOptions, FromTreeSummary } from './from-tree-options.js';

const BASE_SLOT_CACHE = 2048;

/** Writes the pack of the tree at `treeDir` into `packDir`. */
export async function packFromTree(treeDir: string, packDir: string, opts: FromTreeOptions = {}): Promise<FromTreeSummary> {
  const manifestPath = join(treeDir, MANIFEST_PATH);
  if (!existsSync(manifestPath)) throw new Error(`${treeDir}: no ${MANIFEST_PATH}; not a finished snapshot tree`);
  const append = opts.append ?? existsSync(join(packDir, PACK_POINTER));
  // Paths come in path order, their keys in random order: a base slot cache of 2048 slots (about
  // 24 KiB each) keeps every slot of a pack of up to 1M entries after its first read.
  const base = append ? await PackReader.open(packDir, { slotCache: BASE_SLOT_CACHE, syncReads: true }) : undefined;
  const changed = base ? opts.changed : undefined;
  const rebase = !append && opts.rebase && opts.changed && existsSync(join(packDir, PACK_POINTER)) ? new RecipeRebase(await PackReader.open(packDir, { slotCache: BASE_SLOT_CACHE, syncReads: true }), opts.changed) : undefined;
  const writer = new PackWriter(packDir, {
    ...opts,
    base: base && { parts: base.parts, generation: base.header.generation },
    keep: changed && { index: base!.index, header: base!.header, drop: [...changed, MANIFEST_PATH].map(packKey) },
  });
  const txs = new TxBlobs();
  const gzipLevel = opts.gzipLevel ?? GZIP_LEVEL;
  const reader = new TreeReader(treeDir, gzipLevel);
  const n = { files: 0, treeBytes: 0, hexEntries: 0, reused: 0, recipes: 0, slices: 0, hinted: 0, rebased: 0, deltas: 0, manifestChunks: 0, manifestChunksKept: 0 };
  // Tx documents are written as their block is read only where no previous answer could be kept instead.
  const early = !base || changed !== undefined;
  let hints: RecipeHints | undefined; // opened in the try below
  let raw: Generator<ManifestLine> | undefined; // the tx raw files' lines of the second pass (below)
  // Not appending (no previous answers nor kept tx documents to look up), the read thread makes
  // the hinted recipes (read-ahead.ts useHints) once the tx documents are packed.
  const hintsThere = early && !base && (opts.hints?.length ?? 0) > 0;

  /** The file (read ahead, or now), checked against its manifest line. */
  const readChecked = async (l: ManifestLine, ahead: Promise<FileRead | undefined> | undefined): Promise<FileRead> => {
    const file = await (ahead ?? reader.read([l.path], false, [gzipAhead(l.path)], [withTxs(l)]).then((r) => r[0]!));
    if (!file) throw listedWithoutFile(l);
    const { bytes, sha } = file;
    if (bytes.length !== l.size || sha !== l.sha) {
      throw new Error(`${join(treeDir, l.path)}: ${bytes.length} bytes that differ from ${MANIFEST_PATH} line ${l.lineNo} (size ${l.size}, sha256 ${l.sha})`);
    }
    return file;
  };

  /** Whether the line's file is a block's `.bin` whose txs' documents are to be written with it: read with them. */
  const withTxs = (l: ManifestLine): boolean => early && BLOCK_BIN.test(l.path);

  /** What the read thread computed of a file, for the writer. */
  const prepared = (f: FileRead): Prepared => ({ sha256: f.sha, gzip: f.gzip, gzipLevel });

  /** Whether `changed` vouches for `path` in the pack appended to (its record is kept by the writer, unread). */
  const vouched = (path: string): boolean => changed !== undefined && !changed.has(path);

  /** Whether the tree lists the line's file without holding it. */
  const absent = (l: ManifestLine): boolean => !existsSync(join(treeDir, l.path));

  /**
   * Whether packFile will read the line's file (asked ahead of it: a wrong guess costs a read, or a
   * read later). Not a tx's `.bin` or `.hex` where a slice may serve (its block's `.bin` may be
   * packed only after this is asked) or the tree only lists it (sliceOf): read when needed.
   */
  const willRead = (l: ManifestLine): boolean => {
    const tx = l.tx;
    if (tx && tx[2] !== 'json') return !early && !absent(l);
    if (hints?.has(l.path) || (rebase?.unchanged(l.path) && EMBEDDING.test(l.path))) return false;
    return !(tx?.[2] === 'json' && txs.doc(tx[1]!)?.early);
  };

  /**
   * The slice of a block's blob that a tx's `.bin` or `.hex` file is, when the manifest line's
   * size and sha256 are those of the slice's bytes (or their hex): the file need not be read (a
   * pack build's private tree lists these files without writing them: site-writer-worker.ts
   * LISTED). Not where a previous answer could be kept instead (`early` false: each file is
   * compared), unless the file is only listed (`listed`).
   */
  const sliceOf = (l: ManifestLine, listed = false): TxSlice | undefined => {
    if (!early && !listed) return undefined;
    const tx = l.tx;
    if (!tx || tx[2] === 'json') return undefined;
    const hex = tx[2] === 'hex';
    const sha = shaKey(l.sha);
    return txs.slicesOf(tx[1]!).find((s) => l.size === (hex ? 2 * s.length : s.length) && sha === (hex ? s.hexSha : s.binSha));
  };

  /**
   * A block's `.bin` blob: where each of its txs' raw bytes sit; its txs' documents (read with
   * it, FileRead.txs) written next to each other.
   */
  const indexBlock = (file: FileRead, blob: BlobRef) => {
    if (blob.encoding !== Encoding.IDENTITY) return;
    const raw = file.bytes;
    for (const t of file.txs ?? blockTxPlaces(raw)) {
      txs.setSlice(t.txid, { block: blob, start: t.start, length: t.length, crc: zcrc32(raw.subarray(t.start, t.start + t.length)), binSha: t.binSha, hexSha: t.hexSha });
    }
    if (!early) return;
    for (const { txid, doc } of file.txs ?? []) {
      // A tx of an off-chain block has no document.
      if (doc === undefined || txs.doc(txid) || vouched(`tx/${txid}.json`)) continue;
      txs.setDoc(txid, { ...docMarks(doc.bytes, doc.sha), blob: writer.store(doc.bytes, true, prepared(doc)), early: true });
    }
  };

  /**
   * A line `changed` vouches for, dealt with as the manifest is read (an append's most lines, not
   * yielded): its record is kept by the writer from the base index, unread. A tx document's is
   * noted by its line, its blob looked up only when a recipe may name it (resolveDocs).
   */
  const passBy = (path: string, size: number, sha: () => string): boolean => {
    if (!vouched(path)) return false;
    count(size);
    const tx = TX_JSON.exec(path);
    if (tx) txs.setPending(tx[1]!, size, shaKey(sha()));
    return true;
  };

  /**
   * A tx's `.bin` or `.hex` the tree lists without its bytes (site-writer-worker.ts LISTED) and no
   * block `.bin` this run packed holds (an older block's tx whose file was listed again): its
   * answer in the pack appended to, when that is the line's bytes.
   */
  const packListed = async (l: ManifestLine) => {
    const old = base && (await answerWithSha(base, l.path, l.size, l.sha));
    if (!old) {
      throw new Error(`${join(treeDir, l.path)}: listed in ${MANIFEST_PATH} (line ${l.lineNo}) without a file, and neither a block this run packs nor the pack appended to holds its bytes`);
    }
    writer.addExisting(l.path, old);
    n.reused++;
  };

  const count = (size: number) => {
    if (n.files % 4096 === 0) opts.onProgress?.(n.files);
    n.files++;
    n.treeBytes += size;
  };

  /** A document the tree lists without its file (a fresh pack build's address documents: its hint gives it) that neither a hint nor the pack it replaces gives: the build stops. */
  const listedWithoutFile = (l: ManifestLine) =>
    new Error(`${join(treeDir, l.path)}: listed in ${MANIFEST_PATH} (line ${l.lineNo}) without a file, and neither its recipe hint nor the pack in ${packDir} gives its bytes`);

  /** A tx's raw file that is a slice of its block's blob (sliceOf): its record, at once (nothing read or written); false when it is not one. */
  const packSlice = (l: ManifestLine, listed = false): boolean => {
    const slice = sliceOf(l, listed);
    if (!slice) return false;
    const hex = l.path.endsWith('.hex');
    writer.addSlice(l.path, slice.block, slice.start, slice, { hex });
    count(l.size);
    n.slices++;
    if (hex) n.hexEntries++;
    return true;
  };

  const packFile = async (l: ManifestLine, ahead: Promise<FileRead | undefined> | undefined, second: boolean) => {
    const tx = l.tx;
    if (second && hintsThere && ahead) {
      const made = await ahead;
      if (made?.recipe) {
        writer.addEncodedRecipe(l.path, l.size, made.bytes, { compress: true, prepared: prepared(made) });
        count(l.size);
        n.recipes++;
        n.hinted++;
        return;
      }
    }
    if (tx?.[2] === 'json') {
      const t = txs.doc(tx[1]!);
      if (t?.early) {
        txs.settle(tx[1]!);
        // Written as its block was read: its bytes are the file's if size and hash agree with the manifest.
        if (t.size === l.size && t.sha === shaKey(l.sha)) {
          writer.addBlob(l.path, t.blob, t.size);
          count(t.size);
          return;
        }
      }
    }
    // Appending, a hint may name kept tx documents and bytes of the document's previous answer.
    const need = second && base ? hints?.needs(l.path) : undefined;
    if (need && txs.pendingCount > 0) await resolveDocs(base!, txs, need.txids);
    const previous = need?.previous !== undefined ? await previousRecipe(base!, l.path, need.previous) : undefined;
    const hinted = second ? hints?.segments(l.path, l.size, txs, previous) : undefined;
    const rebased = second && !hinted && rebase?.unchanged(l.path) ? await rebase.segments(l.path, l.size, txs) : undefined;
    if (hinted || rebased) {
      writer.addRecipe(l.path, (hinted ?? rebased)!, { compress: true });
      count(l.size);
      n.recipes++;
      if (hinted) n.hinted++;
      else n.rebased++;
      return;
    }
    // A tx's raw file the tree only lists (never read): its block's slice even where a previous
    // answer could be kept, else packListed. Looked for only where a slice does not settle it.
    const txRaw = tx !== null && tx[2] !== 'json';
    const listed = txRaw && !early && absent(l);
    if (txRaw && packSlice(l, listed)) return;
    if (listed || (txRaw && early && absent(l))) {
      await packListed(l);
      count(l.size);
      if (l.path.endsWith('.hex')) n.hexEntries++;
      return;
    }
    if (second && ahead === undefined && absent(l)) throw listedWithoutFile(l);
    const file = await readChecked(l, ahead);
    const bytes = file.bytes;
    count(bytes.length);
    // The base pack's record when its answer is the file's; with `changed`, none is looked for
    // (the other paths are the ones the build changed: a hub address's is the largest read).
    const old2 = !base || changed ? undefined : await sameAnswer(base, l.path, bytes);
    // A changed document (not a tx's, whose blob recipes name) as a recipe over its previous answer.
    const delta = base && !old2 && !tx && !RAW.test(l.path) && !EMBEDDING.test(l.path) ? await deltaOf(base, l.path, bytes, Math.min(bytes.length, file.gzip?.length ?? Infinity)) : undefined;
    if (delta) {
      writer.addRecipe(l.path, delta, { compress: true });
      n.recipes++;
      n.deltas++;
      return;
    }
    let blob: BlobRef;
    if (old2) {
      writer.addExisting(l.path, old2);
      n.reused++;
      blob = blobOf(old2);
    } else if (second) {
      if (txs.pendingCount > 0) await resolveDocs(base!, txs, headTxids(bytes));
      // Only documents kept unread (vouched for) have an unknown prefix.
      const placement = changed && BLOCK_JSON.test(l.path) ? await placementOf(base!, txs, bytes) : undefined;
      const segs = embeddedTxSegments(bytes, txs, placement);
      if (segs) {
        writer.addRecipe(l.path, segs, { compress: true });
        n.recipes++;
        return;
      }
      blob = writer.add(l.path, bytes, { prepared: prepared(file) }).blob;
    } else if (tx && tx[2] !== 'json') {
      const raw = tx[2] === 'hex' ? rawOfHex(bytes) : bytes;
      const crc = raw && zcrc32(raw);
      const s = raw && txs.slicesOf(tx[1]!).find((c) => c.length === raw.length && c.crc === crc);
      if (raw && s) {
        writer.addSlice(l.path, s.block, s.start, s, { hex: tx[2] === 'hex' });
        n.slices++;
      } else if (raw && tx[2] === 'hex') writer.addHex(l.path, raw);
      else writer.add(l.path, bytes, { prepared: prepared(file) });
      if (raw && tx[2] === 'hex') n.hexEntries++;
      return;
    } else {
      const raw = l.path.endsWith('.hex') ? rawOfHex(bytes) : undefined;
      if (raw) {
        writer.addHex(l.path, raw);
        n.hexEntries++;
        return;
      }
      blob = writer.add(l.path, bytes, { prepared: prepared(file) }).blob;
    }
    if (tx?.[2] === 'json') {
      txs.setDoc(tx[1]!, { ...docMarks(bytes, l.sha), blob, early: false });
      await rebase?.note(tx[1]!, txs);
    } else if (BLOCK_BIN.test(l.path)) {
      indexBlock(file, blob);
      if (rebase) for (const t of file.txs ?? []) await rebase.note(t.txid, txs);
    }
  };

  try {
    // Not where a previous answer could be kept instead (each file is compared), as for the tx documents written early.
    if (early && opts.hints?.length && !hintsThere) hints = new RecipeHints(opts.hints);
    // With `changed`, the manifest is read once: the few lines of the second pass (the changed
    // address and block documents) are kept from the first (no more of them than `changed` holds).
    const later: ManifestLine[] | undefined = changed ? [] : undefined;
    // With the read thread making the recipes, the tx raw files' lines (two of every five lines of
    // a tree) are left out of the first pass, and packed by the main thread between the second
    // pass's documents: each is a slice of its block's blob (a record: nothing read or written),
    // while the read thread makes the recipes. Their records' order is not the pack's: the index
    // sorts them by key.
    const between = hintsThere ? { lines: 0, embedding: 0 } : undefined;
    const take = (embedding: boolean) => (path: string, size: number, sha: () => string) => {
      const embeds = EMBEDDING.test(path);
      if (between && !embedding && (embeds || isTxRawPath(path))) {
        between[embeds ? 'embedding' : 'lines']++;
        return false;
      }
      return (later !== undefined || embeds === embedding) && !passBy(path, size, sha);
    };
    async function* firstPass(): AsyncGenerator<ManifestLine> {
      for (const l of manifestLines(manifestPath, take(false))) {
        if (later && EMBEDDING.test(l.path)) later.push(l);
        else yield l;
      }
    }
    // The read thread gzips every other file stored gzip, the main thread the rest as it stores
    // them: the name variants' 64 documents a name, read one after the other, would leave the
    // main thread waiting on the read thread's gzip (as a block's tx documents do: tree-read-worker.ts).
    let turn = 0;
    const gzipThere = (l: ManifestLine) => gzipAhead(l.path) && turn++ % 2 === 0;
    const pass = (lines: AsyncIterable<ManifestLine> | Iterable<ManifestLine>, recipe?: (l: ManifestLine) => boolean) => reader.ahead(lines, willRead, gzipThere, withTxs, recipe);
    // The read thread makes the manifest's chunks ready to store at the end (manifest-chunks.ts
    // prepareManifest) where it has nothing else to do: appending with `changed` (it reads only
    // the changed files), from the start, the chunks of the manifest appended to kept; with
    // hints, from the first tx file's line (their documents came with their blocks, their raw
    // files are slices), while the main thread packs them.
    let manifestReady: Promise<PreparedManifest> | undefined;
    const scratch = writer.scratchPath('manifest');
    const manifestThere = () => {
      manifestReady = reader.prepareManifest(manifestPath, scratch, writer.keepGzipRatio, base && packDir);
      manifestReady.catch(() => undefined); // thrown where awaited
    };
    if (opts.withManifest && changed) manifestThere();
    for await (const [l, ahead] of pass(firstPass())) {
      if (between && opts.withManifest && !manifestReady && l.tx) manifestThere();
      await packFile(l, ahead, false);
    }
    if (hintsThere) reader.useHints(opts.hints!, txs);
    // The previous manifest's chunks are read from the pack appended to during the second pass
    // (manifest-chunks.ts); one that cannot be read (damaged) only leaves its chunks to be stored again.
    const previous = opts.withManifest && base && !manifestReady ? previousChunks(base).catch(() => undefined) : undefined;
    // The tx raw files' lines left out of the first pass: as many before each document of the
    // second pass as there are of them a document (a count, not the read thread's pace: the pack
    // is the same whatever it is). One that is not a slice is packed there as in the first pass.
    raw = between && manifestLines(manifestPath, isTxRawPath);
    let rawDone = 0;
    const rawUpTo = async (k: number) => {
      for (; rawDone < k; rawDone++) {
        const next = raw!.next();
        if (next.done) {
          rawDone = Infinity;
          return;
        }
        if (!packSlice(next.value)) await packFile(next.value, undefined, false);
      }
    };
    let docs = 0;
    for await (const [l, ahead] of pass(later ?? manifestLines(manifestPath, take(true)), hintsThere ? () => true : undefined)) {
      if (between) await rawUpTo(Math.floor((++docs * between.lines) / between.embedding));
      await packFile(l, ahead, true);
    }
    if (between) await rawUpTo(Infinity);
    txs.dropSlices();
    // Their map of paths is not kept through the index's writing.
    hints?.close();
    hints = undefined;
    if (opts.withManifest) {
      const ready = manifestReady ?? prepareManifest(manifestPath, scratch, gzipLevel, writer.keepGzipRatio, await previous);
      const { sha256, chunks, kept } = storePreparedManifest(writer, await ready, scratch);
      n.manifestChunks = chunks;
      n.manifestChunksKept = kept;
      if ((opts.manifestSha256 ?? manifestHash(manifestPath)) !== sha256) throw new Error(`${manifestPath} changed while the tree was packed`);
    }
    // One entry a manifest line (and the manifest): a base pack kept whole that was not made from
    // the tree `changed` is relative to shows here, before the new index is written.
    const summary = writer.finish({ entries: n.files + (opts.withManifest ? 1 : 0) });
    return { ...summary, ...n, reused: n.reused + summary.kept, carried: summary.kept };
  } catch (e) {
    writer.abort();
    throw e;
  } finally {
    raw?.return(undefined);
    await reader.close();
    await base?.close();
    await rebase?.close();
    hints?.close();
  }
}
