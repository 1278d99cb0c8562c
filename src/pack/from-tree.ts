/**
 * Converts a finished snapshot tree into a pack: every file its `_manifest.json` lists, under its
 * tree path, byte for byte. A `.hex` file that is exactly the lowercase hex of some bytes becomes
 * a HEX entry sharing the blob of those bytes (its `.bin`). When the pack directory already holds
 * a pack, the new one appends to it: entries whose answer is unchanged keep pointing into the old
 * parts, only new or changed files are written, into new parts.
 */
import { createHash } from 'node:crypto';
import { createReadStream, existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { MANIFEST_PATH } from '../contract/layout.js';
import { PACK_POINTER, hexBytes } from '../contract/pack-format.js';
import { answerBytes, PackReader } from './reader.js';
import { PackWriter, type PackSummary, type PackWriterOptions } from './writer.js';

export interface FromTreeOptions extends Omit<PackWriterOptions, 'base'> {
  /** Append to the pack already in the directory (default: when there is one). */
  append?: boolean;
  /**
   * Paths known to answer as in the pack appended to (a build's unchanged paths): their records
   * are kept without reading the file (a record of another size is compared as usual).
   */
  unchanged?: (path: string) => boolean;
  /** Store the tree's `_manifest.json` too, as an entry of the same path (what verify reads). */
  withManifest?: boolean;
  /** Called every 4096 files with the count so far. */
  onProgress?: (files: number) => void;
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
  /** Of those, the ones kept on `unchanged`'s word, not read. */
  carried: number;
}

const HEX_TEXT = /^(?:[0-9a-f]{2})*$/;

/** The bytes a `.hex` file spells, when it is exactly their lowercase hex; else undefined. */
export function rawOfHex(text: Uint8Array): Uint8Array | undefined {
  if (text.length % 2 !== 0) return undefined;
  const s = Buffer.from(text.buffer, text.byteOffset, text.byteLength).toString('latin1');
  if (!HEX_TEXT.test(s)) return undefined;
  const raw = new Uint8Array(Buffer.from(s, 'hex'));
  return Buffer.from(hexBytes(raw)).equals(text) ? raw : undefined;
}

function equalBytes(a: Uint8Array, b: Uint8Array): boolean {
  return Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

/** Writes the pack of the tree at `treeDir` into `packDir`. */
export async function packFromTree(treeDir: string, packDir: string, opts: FromTreeOptions = {}): Promise<FromTreeSummary> {
  const manifestPath = join(treeDir, MANIFEST_PATH);
  if (!existsSync(manifestPath)) throw new Error(`${treeDir}: no ${MANIFEST_PATH}; not a finished snapshot tree`);
  const append = opts.append ?? existsSync(join(packDir, PACK_POINTER));
  const base = append ? await PackReader.open(packDir) : undefined;
  const writer = new PackWriter(packDir, { ...opts, base: base && { parts: base.parts, generation: base.header.generation } });
  let files = 0;
  let treeBytes = 0;
  let hexEntries = 0;
  let reused = 0;
  let carried = 0;
  let lineNo = 0;
  try {
    const lines = createInterface({ input: createReadStream(manifestPath), crlfDelay: Infinity });
    for await (const line of lines) {
      lineNo++;
      const m = /^([0-9a-f]{64}) (\d+) (\S+)$/.exec(line);
      if (!m) throw new Error(`${manifestPath}:${lineNo}: not a manifest line (<sha256> <size> <path>): ${JSON.stringify(line.slice(0, 120))}`);
      const [, sha, size, path] = m as unknown as [string, string, string, string];
      if (files % 4096 === 0) opts.onProgress?.(files);
      if (base && opts.unchanged?.(path)) {
        const old = await base.lookup(path);
        if (old && old.size === Number(size)) {
          writer.addExisting(path, old);
          files++;
          treeBytes += old.size;
          reused++;
          carried++;
          continue;
        }
      }
      const bytes = readFileSync(join(treeDir, path));
      if (bytes.length !== Number(size) || createHash('sha256').update(bytes).digest('hex') !== sha) {
        throw new Error(`${join(treeDir, path)}: ${bytes.length} bytes that differ from ${MANIFEST_PATH} line ${lineNo} (size ${size}, sha256 ${sha})`);
      }
      files++;
      treeBytes += bytes.length;
      if (base) {
        const old = await base.lookup(path);
        // Equal sizes first: a changed size costs no read of the old answer.
        if (old && old.size === bytes.length) {
          const answer = await base.get(path);
          if (answer && equalBytes(await answerBytes(answer), bytes)) {
            writer.addExisting(path, old);
            reused++;
            continue;
          }
        }
      }
      const raw = path.endsWith('.hex') ? rawOfHex(bytes) : undefined;
      if (raw) {
        writer.addHex(path, raw);
        hexEntries++;
      } else writer.add(path, bytes);
    }
    if (opts.withManifest) writer.add(MANIFEST_PATH, readFileSync(manifestPath));
    const summary = writer.finish();
    return { ...summary, files, treeBytes, hexEntries, reused, carried };
  } catch (e) {
    writer.abort();
    throw e;
  } finally {
    await base?.close();
  }
}
