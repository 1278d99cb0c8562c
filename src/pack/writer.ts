/**
 * Writes a pack (docs/pack-format.md) into a directory: blobs are appended to part files as they
 * are added, directory records are kept in sorted runs (spilled to disk past `runEntries`), and
 * `finish()` merges the runs into the slots of a new index file, then points `pack.json` at it.
 *
 * Entries may be added in any order. Memory is bounded by the run buffer (`runEntries` ×
 * (46 bytes + the path), at most 32 MiB), the dedup window (at most `dedupWindow` content hashes) and one
 * 1 MiB write buffer; `finish()` adds one u32 per directory slot.
 */
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 as zcrc32, gzipSync } from 'node:zlib';
import {
  DEFAULT_MAX_PART_BYTES,
  Encoding,
  Kind,
  PACK_POINTER,
  PART_HEADER_SIZE,
  RECORD_SIZE,
  compareKeys,
  encodePartHeader,
  encodePointer,
  encodeRecipe,
  encodeRecord,
  packKey,
  type BlobRef,
  type PackHeader,
  type PartInfo,
  type PackRecord,
  type RecipeSegment,
} from '../contract/pack-format.js';
import { TwoGenerationCache } from '../chain/two-gen-cache.js';
import { onPath } from '../runtime/io-error.js';
import { indexRecords, withKept, writeIndexFile } from './index-file.js';
import { OutFile } from './out-file.js';
import { SortedRuns } from './runs.js';

export interface PackWriterOptions {
  /** Parts are cut before they pass this many bytes (default 1 GiB). */
  maxPartBytes?: number;
  /** gzip level for compressed blobs (default GZIP_LEVEL). */
  gzipLevel?: number;
  /** A gzip blob is kept only when at most this fraction of the plain size (default 0.95). */
  keepGzipRatio?: number;
  /** Directory records held in memory before a sorted run is spilled (default 262,144). */
  runEntries?: number;
  /**
   * Distinct contents remembered for dedup (default 65,536): between half of it and all of it,
   * the least recently seen forgotten first (a TwoGenerationCache of half the window a generation).
   */
  dedupWindow?: number;
  /** Parts of an older pack in the same directory that this one appends to (never rewritten). */
  base?: { parts: readonly PartInfo[]; generation: number };
  /**
   * The base pack's directory records the new index keeps without each being added (an
   * incremental pack): all but those whose key is in `drop` (paths gone or changed) and those
   * this writer adds again (its record wins). Read twice from the base's index file by finish().
   */
  keep?: KeptRecords;
  /**
   * Called with the name of each entry the writer is about to create in the directory (its temp
   * dir, each part, the index), before it appears there: a caller can record what it owns first.
   */
  onCreate?: (name: string) => void;
}

/** The base pack's index file and header, and the keys of its records that are not kept (any order). */
export interface KeptRecords {
  index: string;
  header: PackHeader;
  drop: readonly Uint8Array[];
}

/** The gzip level of compressed blobs (docs/pack-format.md, "Compression"). */
export const GZIP_LEVEL = 6;

/**
 * Recipes shorter than this are stored identity even when compression is asked for: gzip costs
 * 20–40 µs a call whatever the size, and saves a quarter of a short recipe (docs/pack-format.md,
 * "Compression").
 */
export const RECIPE_GZIP_MIN = 1024;

/** Whether a blob of `size` bytes is stored as its gzip of `gzipped` bytes: at most `ratio` (the writer's keepGzipRatio) of its size. */
export const keepsGzip = (gzipped: number, size: number, ratio: number): boolean => gzipped <= size * ratio;

/** What the caller already computed of some bytes (packFromTree's read thread does, off the main thread). */
export interface Prepared {
  /** Hex sha256 of the bytes. */
  sha256: string;
  /** The bytes gzipped at level `gzipLevel` (used when it is the writer's level). */
  gzip?: Uint8Array;
  gzipLevel?: number;
}

export interface AddOptions {
  /** Try gzip (default: true except for `.bin` paths, whose raw bytes barely compress). */
  compress?: boolean;
  prepared?: Prepared;
}

/** What `finish()` wrote. */
export interface PackSummary {
  dir: string;
  index: string;
  entries: number;
  blobs: number;
  parts: PartInfo[];
  /** Parts this run wrote (the rest came from `base`). */
  newParts: string[];
  indexBytes: number;
  /** Bytes of the new parts plus the index. */
  bytesWritten: number;
  /** Entries kept from the base pack's index without being added (PackWriterOptions.keep). */
  kept: number;
  bucketBits: number;
  slotCapacity: number;
}

export class PackWriter {
  private readonly maxPartBytes: number;
  private readonly gzipLevel: number;
  readonly keepGzipRatio: number;
  private readonly runEntries: number;
  private readonly parts: PartInfo[];
  private readonly baseParts: readonly PartInfo[];
  private readonly newParts: string[] = [];
  private readonly generation: number;
  private part: OutFile | undefined;
  private partNumber: number;
  private readonly runs: SortedRuns;
  private readonly keep: KeptRecords | undefined;
  /** The keys of PackWriterOptions.keep's dropped records, sorted (by finish()). */
  private dropOrder: Uint8Array[] | undefined;
  /** The record being added (copied into the runs). */
  private readonly rec = new Uint8Array(RECORD_SIZE);
  private readonly dedup: TwoGenerationCache<string, BlobRef>;
  private readonly tmp: string;
  private readonly onCreate: (name: string) => void;
  private entries = 0;
  private blobs = 0;
  private finished = false;
  private bytesWritten = 0;

  constructor(
    readonly dir: string,
    opts: PackWriterOptions = {},
  ) {
    this.maxPartBytes = opts.maxPartBytes ?? DEFAULT_MAX_PART_BYTES;
    this.gzipLevel = opts.gzipLevel ?? GZIP_LEVEL;
    this.keepGzipRatio = opts.keepGzipRatio ?? 0.95;
    this.runEntries = opts.runEntries ?? 1 << 18;
    this.dedup = new TwoGenerationCache(Math.max(1, Math.floor((opts.dedupWindow ?? 1 << 16) / 2)));
    this.baseParts = opts.base?.parts ?? [];
    this.parts = [...this.baseParts];
    this.partNumber = this.parts.length;
    this.generation = (opts.base?.generation ?? 0) + 1;
    this.keep = opts.keep;
    this.onCreate = opts.onCreate ?? (() => {});
    onPath(dir, 'creating', () => mkdirSync(dir, { recursive: true }));
    const tmp = `.tmp-${process.pid}-${Date.now().toString(36)}`;
    this.onCreate(tmp);
    this.tmp = join(dir, tmp);
    onPath(this.tmp, 'creating', () => mkdirSync(this.tmp));
    this.runs = new SortedRuns(this.tmp, this.runEntries);
  }

  /** Stores `bytes` as the answer for `path` (identical contents share one blob). Returns the blob's place. */
  add(path: string, bytes: Uint8Array, opts: AddOptions = {}): { blob: BlobRef; size: number } {
    const compress = opts.compress ?? !path.endsWith('.bin');
    const blob = this.blob(bytes, compress, opts.prepared);
    this.record(path, Kind.STORED, blob, bytes.length);
    return { blob, size: bytes.length };
  }

  /** `path` answers the lowercase hex of `raw` (no newline): shares the blob of the same raw bytes (its `.bin`). */
  addHex(path: string, raw: Uint8Array): { blob: BlobRef; size: number } {
    const blob = this.blob(raw, false);
    this.record(path, Kind.HEX, blob, raw.length * 2);
    return { blob, size: raw.length * 2 };
  }

  /**
   * `path` answers the concatenation of `segments` (literal bytes, or ranges of blobs' decoded
   * bytes). With `compress`, a recipe of at least RECIPE_GZIP_MIN bytes is stored gzip when that
   * saves enough (its literals).
   */
  addRecipe(path: string, segments: readonly RecipeSegment[], opts: { compress?: boolean } = {}): { blob: BlobRef; size: number } {
    let size = 0;
    for (const s of segments) size += s.type === 'literal' ? s.bytes.length : s.length;
    return this.addEncodedRecipe(path, size, encodeRecipe(segments), opts);
  }

  /**
   * `path` answers the `size` bytes `recipe` (encodeRecipe's bytes) assembles, as addRecipe: for
   * a recipe encoded, hashed and gzipped elsewhere (`prepared`: packFromTree's read thread).
   */
  addEncodedRecipe(path: string, size: number, recipe: Uint8Array, opts: { compress?: boolean; prepared?: Prepared } = {}): { blob: BlobRef; size: number } {
    const blob = this.blob(recipe, (opts.compress ?? false) && recipe.length >= RECIPE_GZIP_MIN, opts.prepared);
    this.record(path, Kind.RECIPE, blob, size);
    return { blob, size };
  }

  /**
   * `path` answers bytes [start, start + slice.length) of the identity blob `container` (a tx's
   * `.bin` inside its block's `.bin`), whose CRC-32 is `slice.crc`: no bytes are written. With
   * `hex`, the answer is their lowercase hex (the tx's `.hex`). The caller vouches that those
   * bytes are there; the record's CRC-32 is the slice's, so a reader or verify() finds a wrong one.
   */
  addSlice(path: string, container: BlobRef, start: number, slice: { length: number; crc: number }, opts: { hex?: boolean } = {}): { blob: BlobRef; size: number } {
    const { length, crc } = slice;
    if (container.encoding !== Encoding.IDENTITY) throw new Error(`pack writer: ${path}: a slice needs an identity blob to point into`);
    if (!Number.isSafeInteger(start) || start < 0 || start + length > container.stored) {
      throw new Error(`pack writer: ${path}: bytes ${start}–${start + length - 1} are outside the ${container.stored}-byte blob they slice`);
    }
    const blob: BlobRef = { part: container.part, offset: container.offset + start, stored: length, encoding: Encoding.IDENTITY, crc };
    const size = opts.hex ? length * 2 : length;
    this.record(path, opts.hex ? Kind.HEX : Kind.STORED, blob, size);
    return { blob, size };
  }

  /** Writes `bytes` as a blob (or finds the same contents written before) without an entry: see {@link addBlob}. */
  store(bytes: Uint8Array, compress: boolean, prepared?: Prepared): BlobRef {
    return this.blob(bytes, compress, prepared);
  }

  /** `path` answers the `size` bytes of `blob`, a blob this writer stored (kind stored). */
  addBlob(path: string, blob: BlobRef, size: number): void {
    if (blob.part < this.baseParts.length) throw new Error(`pack writer: ${path}: addBlob takes a blob this writer stored; part ${blob.part} is the base pack's`);
    this.record(path, Kind.STORED, blob, size);
  }

  /**
   * Keeps `rec` under `path`: the base pack's record of `path` itself (its `lookup(path)`, which
   * points into the base's parts), whose key is taken as the path's without hashing it again.
   */
  addExisting(path: string, rec: PackRecord): void {
    if (rec.part >= this.baseParts.length) {
      throw new Error(`pack writer: ${path}: record points at part ${rec.part}, which is not a part of the base pack`);
    }
    this.record(path, rec.kind, rec, rec.size, rec.key);
  }

  private blob(bytes: Uint8Array, compress: boolean, prepared?: Prepared): BlobRef {
    const id = (prepared?.sha256 ?? createHash('sha256').update(bytes).digest('hex')) + (compress ? 'z' : 'i');
    const seen = this.dedup.get(id);
    if (seen) return seen;
    let stored: Uint8Array = bytes;
    let encoding: Encoding = Encoding.IDENTITY;
    if (compress && bytes.length > 0) {
      const z = prepared?.gzip && prepared.gzipLevel === this.gzipLevel ? prepared.gzip : gzipSync(bytes, { level: this.gzipLevel });
      if (keepsGzip(z.length, bytes.length, this.keepGzipRatio)) {
        stored = z;
        encoding = Encoding.GZIP;
      }
    }
    return this.put(id, stored, encoding);
  }

  /**
   * Stores a blob encoded elsewhere as store(bytes, true, …) would store it: `stored` is `bytes`
   * gzipped when keepsGzip(…, this.keepGzipRatio) keeps that gzip, else `bytes`, whose sha256 is
   * `sha256` (packFromTree's read thread makes the manifest's chunks so: manifest-chunks.ts).
   */
  storeEncoded(sha256: string, stored: Uint8Array, encoding: Encoding): BlobRef {
    const id = sha256 + 'z';
    return this.dedup.get(id) ?? this.put(id, stored, encoding);
  }

  /** A path for a scratch file of this writer's (removed with its other files when it finishes or aborts). */
  scratchPath(name: string): string {
    return join(this.tmp, `scratch-${name}`);
  }

  /** Writes `stored` as a new blob known to the dedup window by `id`. */
  private put(id: string, stored: Uint8Array, encoding: Encoding): BlobRef {
    if (stored.length > 0xffffffff) throw new Error(`pack writer: a blob of ${stored.length} bytes is over the 4 GiB a record can hold`);
    const part = this.partFor(stored.length);
    const blob: BlobRef = { part: this.partNumber, offset: part.size, stored: stored.length, encoding, crc: zcrc32(stored) };
    part.write(stored);
    this.blobs++;
    this.dedup.set(id, blob);
    return blob;
  }

  private partFor(bytes: number): OutFile {
    if (this.part && this.part.size > PART_HEADER_SIZE && this.part.size + bytes > this.maxPartBytes) this.closePart();
    if (!this.part) {
      if (this.partNumber > 0xffff) throw new Error('pack writer: more than 65,536 parts');
      this.part = new OutFile(join(this.tmp, `part-${this.partNumber}`));
      this.part.write(encodePartHeader(this.partNumber));
    }
    return this.part;
  }

  private closePart(): void {
    const p = this.part!;
    const sha = p.close();
    const name = `${sha.toString('hex', 0, 16)}.part`;
    this.onCreate(name);
    onPath(join(this.dir, name), 'renaming into', () => renameSync(p.path, join(this.dir, name)));
    this.parts.push({ name, size: p.size, sha256: new Uint8Array(sha) });
    this.newParts.push(name);
    this.bytesWritten += p.size;
    this.part = undefined;
    this.partNumber++;
  }

  /** `key`: the path's key when the caller has it (a base record's), else computed here. */
  private record(path: string, kind: Kind, blob: BlobRef, size: number, key = packKey(path)): void {
    if (this.finished) throw new Error('pack writer: add after finish()');
    encodeRecord({ key, kind, size, ...blob }, this.rec);
    this.runs.add(path, this.rec);
    this.entries++;
  }

  /**
   * Closes the last part, writes the index and points `pack.json` at it. With `expect.entries`,
   * throws before writing the index when it would hold another number of entries.
   */
  finish(expect: { entries?: number } = {}): PackSummary {
    if (this.finished) throw new Error('pack writer: finish() called twice');
    this.finished = true;
    try {
      if (this.part) this.closePart();
      this.runs.seal();

      const idx = writeIndexFile(join(this.tmp, 'index'), () => this.records(), {
        most: this.entries + (this.keep?.header.entries ?? 0),
        parts: this.parts,
        blobs: this.blobs,
        generation: this.generation,
        // The added records' keys are distinct (the runs refuse a key twice): the rest were kept.
        check: (entries) => {
          if (expect.entries !== undefined && entries !== expect.entries) {
            throw new Error(
              `pack writer: the new index would hold ${entries} entries (${this.entries} added, ${entries - this.entries} kept from the base pack), not the ${expect.entries} expected` +
                (this.keep ? ': the base pack is not the one made from the tree its changed paths are relative to' : ''),
            );
          }
        },
      });
      const index = `${idx.sha.toString('hex', 0, 16)}.idx`;
      this.onCreate(index);
      onPath(join(this.dir, index), 'renaming into', () => renameSync(idx.path, join(this.dir, index)));
      // pack.json last: until it is replaced, readers keep using the previous index (whose parts are all still here).
      const pointerTmp = join(this.tmp, 'pointer');
      onPath(pointerTmp, 'writing', () => writeFileSync(pointerTmp, encodePointer(index), { flag: 'wx' }));
      onPath(join(this.dir, PACK_POINTER), 'renaming into', () => renameSync(pointerTmp, join(this.dir, PACK_POINTER)));
      this.bytesWritten += idx.size;
      return {
        dir: this.dir,
        index,
        entries: idx.entries,
        kept: idx.entries - this.entries,
        blobs: this.blobs,
        parts: this.parts,
        newParts: this.newParts,
        indexBytes: idx.size,
        bytesWritten: this.bytesWritten,
        bucketBits: idx.bucketBits,
        slotCapacity: idx.slotCapacity,
      };
    } catch (e) {
      this.dropNewParts();
      throw e;
    } finally {
      rmSync(this.tmp, { recursive: true, force: true });
    }
  }

  /** The new index's records in key order: the added ones, and the base's kept ones (PackWriterOptions.keep). */
  private records(): Iterable<Uint8Array> {
    const added = (function* (runs: SortedRuns) {
      for (const e of runs.merged()) yield e.rec;
    })(this.runs);
    if (!this.keep) return added;
    this.dropOrder ??= [...this.keep.drop].sort((x, y) => compareKeys(x, y));
    return withKept(added, indexRecords(join(this.dir, this.keep.index), this.keep.header), this.dropOrder);
  }

  private dropNewParts(): void {
    const kept = new Set(this.baseParts.map((p) => p.name));
    for (const name of this.newParts) if (!kept.has(name)) rmSync(join(this.dir, name), { force: true });
  }

  /** Drops everything this writer wrote that no index refers to yet. */
  abort(): void {
    if (this.part) closeSync(this.part.fd);
    this.part = undefined;
    if (!this.finished) this.dropNewParts();
    this.finished = true;
    rmSync(this.tmp, { recursive: true, force: true });
  }
}
