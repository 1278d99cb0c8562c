/**
 * Writes a pack (docs/pack-format.md) into a directory: blobs are appended to part files as they
 * are added, directory records are kept in sorted runs (spilled to disk past `runEntries`), and
 * `finish()` merges the runs into the slots of a new index file, then points `pack.json` at it.
 *
 * Entries may be added in any order. Memory is bounded by the run buffer (about
 * `runEntries` × (40 bytes + the path)), the dedup window (`dedupWindow` content hashes) and one
 * 1 MiB write buffer; `finish()` adds one u32 per directory slot.
 */
import { createHash, type Hash } from 'node:crypto';
import { closeSync, constants, fsyncSync, mkdirSync, openSync, readSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 as zcrc32, gzipSync } from 'node:zlib';
import {
  DEFAULT_MAX_PART_BYTES,
  Encoding,
  HEADER_SIZE,
  KEY_BYTES,
  Kind,
  PACK_POINTER,
  PACK_VERSION,
  PART_HEADER_SIZE,
  RECORD_SIZE,
  SLOT_HEADER,
  chooseBucketBits,
  compareKeys,
  encodeHeader,
  encodePartHeader,
  encodePartTable,
  encodePointer,
  encodeRecipe,
  encodeRecord,
  encodeSlot,
  keyHex,
  packKey,
  slotOf,
  type BlobRef,
  type PartInfo,
  type PackRecord,
  type RecipeSegment,
} from '../contract/pack-format.js';
import { onPath, writeAll } from '../runtime/io-error.js';

export interface PackWriterOptions {
  /** Parts are cut before they pass this many bytes (default 1 GiB). */
  maxPartBytes?: number;
  /** gzip level for compressed blobs (default 6). */
  gzipLevel?: number;
  /** A gzip blob is kept only when at most this fraction of the plain size (default 0.95). */
  keepGzipRatio?: number;
  /** Directory records held in memory before a sorted run is spilled (default 262,144). */
  runEntries?: number;
  /** Distinct contents remembered for dedup (default 65,536; the oldest are forgotten first). */
  dedupWindow?: number;
  /** Parts of an older pack in the same directory that this one appends to (never rewritten). */
  base?: { parts: readonly PartInfo[]; generation: number };
}

export interface AddOptions {
  /** Try gzip (default: true except for `.bin` paths, whose raw bytes barely compress). */
  compress?: boolean;
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
  bucketBits: number;
  slotCapacity: number;
}

const WRITE_CHUNK = 1 << 20;

/** A file written through a 1 MiB buffer, hashed as it goes. */
class OutFile {
  readonly fd: number;
  readonly hash: Hash = createHash('sha256');
  private buf = Buffer.allocUnsafe(WRITE_CHUNK);
  private at = 0;
  size = 0;

  constructor(readonly path: string) {
    this.fd = onPath(path, 'creating', () => openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW, 0o666));
  }

  write(b: Uint8Array): void {
    if (this.at + b.length > this.buf.length) this.flush();
    if (b.length > this.buf.length) this.raw(b);
    else {
      this.buf.set(b, this.at);
      this.at += b.length;
    }
    this.size += b.length;
  }

  private raw(b: Uint8Array): void {
    onPath(this.path, 'writing', () => writeAll(this.fd, b));
    this.hash.update(b);
  }

  flush(): void {
    if (this.at > 0) this.raw(this.buf.subarray(0, this.at));
    this.at = 0;
  }

  /** Flushes, syncs and closes; returns the sha256 of everything written. */
  close(): Buffer {
    this.flush();
    onPath(this.path, 'syncing', () => fsyncSync(this.fd));
    closeSync(this.fd);
    return this.hash.digest();
  }
}

/** One record plus its path, as held in a run. */
interface RunEntry {
  rec: Uint8Array;
  path: string;
}

/** Reads a spilled run: (u16 path length ‖ path ‖ 40-byte record)*. */
class RunReader {
  private readonly fd: number;
  private buf = Buffer.allocUnsafe(1 << 16);
  private have = 0;
  private at = 0;
  current: RunEntry | undefined;

  constructor(readonly path: string) {
    this.fd = onPath(path, 'reading', () => openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW));
    this.next();
  }

  private ensure(n: number): boolean {
    if (this.have - this.at >= n) return true;
    this.buf.copy(this.buf, 0, this.at, this.have);
    this.have -= this.at;
    this.at = 0;
    while (this.have < n) {
      const got = onPath(this.path, 'reading', () => readSync(this.fd, this.buf, this.have, this.buf.length - this.have, null));
      if (got === 0) return false;
      this.have += got;
    }
    return true;
  }

  next(): void {
    if (!this.ensure(2)) {
      this.current = undefined;
      closeSync(this.fd);
      return;
    }
    const len = this.buf.readUInt16LE(this.at);
    if (!this.ensure(2 + len + RECORD_SIZE)) throw new Error(`pack writer: run file ${this.path} is cut short`);
    const path = this.buf.toString('utf8', this.at + 2, this.at + 2 + len);
    const rec = Uint8Array.prototype.slice.call(this.buf, this.at + 2 + len, this.at + 2 + len + RECORD_SIZE);
    this.at += 2 + len + RECORD_SIZE;
    this.current = { rec, path };
  }
}

const byKey = (a: RunEntry, b: RunEntry) => compareKeys(a.rec, b.rec);

/** Runs merged at once (and open at once per level). */
const FANIN = 64;

/** The entries of sorted run files in key order (a binary heap of the runs' heads). */
function* mergeRuns(files: readonly string[]): Generator<RunEntry> {
  const heap = files.map((f) => new RunReader(f)).filter((r) => r.current);
  const less = (i: number, j: number) => compareKeys(heap[i]!.current!.rec, heap[j]!.current!.rec) < 0;
  const swap = (i: number, j: number) => ([heap[i], heap[j]] = [heap[j]!, heap[i]!]);
  const down = (i: number) => {
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < heap.length && less(l, m)) m = l;
      if (r < heap.length && less(r, m)) m = r;
      if (m === i) return;
      swap(i, m);
      i = m;
    }
  };
  for (let i = (heap.length >> 1) - 1; i >= 0; i--) down(i);
  while (heap.length > 0) {
    const top = heap[0]!;
    yield top.current!;
    top.next();
    if (!top.current) {
      heap[0] = heap.at(-1)!;
      heap.pop();
    }
    if (heap.length > 0) down(0);
  }
}

export class PackWriter {
  private readonly maxPartBytes: number;
  private readonly gzipLevel: number;
  private readonly keepGzipRatio: number;
  private readonly runEntries: number;
  private readonly dedupWindow: number;
  private readonly parts: PartInfo[];
  private readonly baseParts: readonly PartInfo[];
  private readonly newParts: string[] = [];
  private readonly generation: number;
  private part: OutFile | undefined;
  private partNumber: number;
  private run: RunEntry[] = [];
  private runFiles: { path: string; level: number }[] = [];
  private runSeq = 0;
  private readonly dedup = new Map<string, { blob: BlobRef; plain: number }>();
  private readonly tmp: string;
  private entries = 0;
  private blobs = 0;
  private finished = false;
  private bytesWritten = 0;

  constructor(
    readonly dir: string,
    opts: PackWriterOptions = {},
  ) {
    this.maxPartBytes = opts.maxPartBytes ?? DEFAULT_MAX_PART_BYTES;
    this.gzipLevel = opts.gzipLevel ?? 6;
    this.keepGzipRatio = opts.keepGzipRatio ?? 0.95;
    this.runEntries = opts.runEntries ?? 1 << 18;
    this.dedupWindow = opts.dedupWindow ?? 1 << 16;
    this.baseParts = opts.base?.parts ?? [];
    this.parts = [...this.baseParts];
    this.partNumber = this.parts.length;
    this.generation = (opts.base?.generation ?? 0) + 1;
    onPath(dir, 'creating', () => mkdirSync(dir, { recursive: true }));
    this.tmp = join(dir, `.tmp-${process.pid}-${Date.now().toString(36)}`);
    onPath(this.tmp, 'creating', () => mkdirSync(this.tmp));
  }

  /** Stores `bytes` as the answer for `path` (identical contents share one blob). Returns the blob's place. */
  add(path: string, bytes: Uint8Array, opts: AddOptions = {}): { blob: BlobRef; size: number } {
    const compress = opts.compress ?? !path.endsWith('.bin');
    const blob = this.blob(bytes, compress);
    this.record(path, Kind.STORED, blob, bytes.length);
    return { blob, size: bytes.length };
  }

  /** `path` answers the lowercase hex of `raw` (no newline): shares the blob of the same raw bytes (its `.bin`). */
  addHex(path: string, raw: Uint8Array): { blob: BlobRef; size: number } {
    const blob = this.blob(raw, false);
    this.record(path, Kind.HEX, blob, raw.length * 2);
    return { blob, size: raw.length * 2 };
  }

  /** `path` answers the concatenation of `segments` (literal bytes, or ranges of blobs' decoded bytes). */
  addRecipe(path: string, segments: readonly RecipeSegment[]): { blob: BlobRef; size: number } {
    let size = 0;
    for (const s of segments) size += s.type === 'literal' ? s.bytes.length : s.length;
    const blob = this.blob(encodeRecipe(segments), false);
    this.record(path, Kind.RECIPE, blob, size);
    return { blob, size };
  }

  /**
   * `path` answers `bytes`, which are bytes [start, start + length) of the identity blob
   * `container` (a tx's `.bin` inside its block's `.bin`): no bytes are written. With `hex`, the
   * answer is their lowercase hex (the tx's `.hex`). The caller vouches that the bytes are there;
   * the record's CRC-32 is of `bytes`, so a reader or verify() finds a wrong slice.
   */
  addSlice(path: string, container: BlobRef, start: number, bytes: Uint8Array, opts: { hex?: boolean } = {}): { blob: BlobRef; size: number } {
    if (container.encoding !== Encoding.IDENTITY) throw new Error(`pack writer: ${path}: a slice needs an identity blob to point into`);
    if (!Number.isSafeInteger(start) || start < 0 || start + bytes.length > container.stored) {
      throw new Error(`pack writer: ${path}: bytes ${start}–${start + bytes.length - 1} are outside the ${container.stored}-byte blob they slice`);
    }
    const blob: BlobRef = { part: container.part, offset: container.offset + start, stored: bytes.length, encoding: Encoding.IDENTITY, crc: zcrc32(bytes) };
    const size = opts.hex ? bytes.length * 2 : bytes.length;
    this.record(path, opts.hex ? Kind.HEX : Kind.STORED, blob, size);
    return { blob, size };
  }

  /** Keeps `rec` (a record of the base pack, which points into its parts) under `path`. */
  addExisting(path: string, rec: PackRecord): void {
    if (rec.part >= this.baseParts.length) {
      throw new Error(`pack writer: ${path}: record points at part ${rec.part}, which is not a part of the base pack`);
    }
    this.record(path, rec.kind, rec, rec.size);
  }

  private blob(bytes: Uint8Array, compress: boolean): BlobRef {
    const id = createHash('sha256').update(bytes).digest('base64') + (compress ? 'z' : 'i');
    const seen = this.dedup.get(id);
    if (seen) {
      // Refresh its place in the window (Map keeps insertion order: oldest first).
      this.dedup.delete(id);
      this.dedup.set(id, seen);
      return seen.blob;
    }
    let stored: Uint8Array = bytes;
    let encoding: Encoding = Encoding.IDENTITY;
    if (compress && bytes.length > 0) {
      const z = gzipSync(bytes, { level: this.gzipLevel });
      if (z.length <= bytes.length * this.keepGzipRatio) {
        stored = z;
        encoding = Encoding.GZIP;
      }
    }
    if (stored.length > 0xffffffff) throw new Error(`pack writer: a blob of ${stored.length} bytes is over the 4 GiB a record can hold`);
    const part = this.partFor(stored.length);
    const blob: BlobRef = { part: this.partNumber, offset: part.size, stored: stored.length, encoding, crc: zcrc32(stored) };
    part.write(stored);
    this.blobs++;
    this.dedup.set(id, { blob, plain: bytes.length });
    if (this.dedup.size > this.dedupWindow) this.dedup.delete(this.dedup.keys().next().value!);
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
    onPath(join(this.dir, name), 'renaming into', () => renameSync(p.path, join(this.dir, name)));
    this.parts.push({ name, size: p.size, sha256: new Uint8Array(sha) });
    this.newParts.push(name);
    this.bytesWritten += p.size;
    this.part = undefined;
    this.partNumber++;
  }

  private record(path: string, kind: Kind, blob: BlobRef, size: number): void {
    if (this.finished) throw new Error('pack writer: add after finish()');
    const pathBytes = Buffer.byteLength(path);
    if (pathBytes === 0 || pathBytes > 0xffff) throw new Error(`pack writer: path of ${pathBytes} bytes: ${path.slice(0, 80)}`);
    const rec = new Uint8Array(RECORD_SIZE);
    encodeRecord({ key: packKey(path), kind, size, ...blob }, rec);
    this.run.push({ rec, path });
    this.entries++;
    if (this.run.length >= this.runEntries) this.spill();
  }

  private spill(): void {
    this.run.sort(byKey);
    this.runFiles.push({ path: this.writeRun(this.run), level: 0 });
    this.run = [];
    // Tiered merging: FANIN runs of one level become one run of the next, so no more than
    // FANIN runs per level are ever open at once and each record is rewritten once a level.
    for (;;) {
      const level = this.runFiles.at(-1)!.level;
      const same = this.runFiles.filter((r) => r.level === level);
      if (same.length < FANIN) break;
      const merged = this.writeRun(mergeRuns(same.map((r) => r.path)));
      for (const r of same) rmSync(r.path, { force: true });
      this.runFiles = [...this.runFiles.filter((r) => r.level !== level), { path: merged, level: level + 1 }];
    }
  }

  private writeRun(entries: Iterable<RunEntry>): string {
    const f = new OutFile(join(this.tmp, `run-${this.runSeq++}`));
    const len = Buffer.alloc(2);
    for (const e of entries) {
      const p = Buffer.from(e.path);
      len.writeUInt16LE(p.length);
      f.write(len);
      f.write(p);
      f.write(e.rec);
    }
    f.flush();
    closeSync(f.fd);
    return f.path;
  }

  /** All records in key order (one pass over the runs); equal keys fail, naming both paths. */
  private *merged(): Generator<RunEntry> {
    let prev: RunEntry | undefined;
    const check = (e: RunEntry) => {
      if (prev && compareKeys(prev.rec, e.rec) === 0) {
        throw new Error(
          prev.path === e.path
            ? `pack writer: ${e.path} was added twice`
            : `pack writer: key collision: ${prev.path} and ${e.path} have the same ${KEY_BYTES * 8}-bit key ${keyHex(e.rec.subarray(0, KEY_BYTES))}`,
        );
      }
      prev = e;
    };
    if (this.runFiles.length === 0) {
      for (const e of this.run) {
        check(e);
        yield e;
      }
      return;
    }
    for (const e of mergeRuns(this.runFiles.map((r) => r.path))) {
      check(e);
      yield e;
    }
  }

  /** Closes the last part, writes the index and points `pack.json` at it. */
  finish(): PackSummary {
    if (this.finished) throw new Error('pack writer: finish() called twice');
    this.finished = true;
    try {
      if (this.part) this.closePart();
      if (this.runFiles.length > 0 && this.run.length > 0) this.spill();
      else this.run.sort(byKey);

      const bucketBits = chooseBucketBits(this.entries);
      const counts = new Uint32Array(2 ** bucketBits);
      for (const e of this.merged()) counts[slotOf(e.rec, bucketBits)]!++;
      let capacity = 0;
      for (const c of counts) capacity = Math.max(capacity, c);
      capacity = Math.max(capacity, 1);

      const table = encodePartTable(this.parts);
      const slotBytes = SLOT_HEADER + capacity * RECORD_SIZE;
      const slotsOffset = HEADER_SIZE + table.length;
      const header = encodeHeader({
        version: PACK_VERSION,
        bucketBits,
        slotCapacity: capacity,
        partCount: this.parts.length,
        entries: this.entries,
        blobs: this.blobs,
        slotsOffset,
        slotsLength: counts.length * slotBytes,
        partTableOffset: HEADER_SIZE,
        partTableLength: table.length,
        generation: this.generation,
      });
      const idx = new OutFile(join(this.tmp, 'index'));
      idx.write(header);
      idx.write(table);
      const recs = new Uint8Array(capacity * RECORD_SIZE);
      let slot = 0;
      let n = 0;
      const emit = () => {
        idx.write(encodeSlot(recs, n, capacity));
        slot++;
        n = 0;
      };
      for (const e of this.merged()) {
        const s = slotOf(e.rec, bucketBits);
        while (slot < s) emit();
        recs.set(e.rec, n * RECORD_SIZE);
        n++;
      }
      while (slot < counts.length) emit();
      const sha = idx.close();
      const index = `${sha.toString('hex', 0, 16)}.idx`;
      onPath(join(this.dir, index), 'renaming into', () => renameSync(idx.path, join(this.dir, index)));
      // pack.json last: until it is replaced, readers keep using the previous index (whose parts are all still here).
      const pointerTmp = join(this.tmp, 'pointer');
      onPath(pointerTmp, 'writing', () => writeFileSync(pointerTmp, encodePointer(index), { flag: 'wx' }));
      onPath(join(this.dir, PACK_POINTER), 'renaming into', () => renameSync(pointerTmp, join(this.dir, PACK_POINTER)));
      this.bytesWritten += idx.size;
      return {
        dir: this.dir,
        index,
        entries: this.entries,
        blobs: this.blobs,
        parts: this.parts,
        newParts: this.newParts,
        indexBytes: idx.size,
        bytesWritten: this.bytesWritten,
        bucketBits,
        slotCapacity: capacity,
      };
    } catch (e) {
      this.dropNewParts();
      throw e;
    } finally {
      rmSync(this.tmp, { recursive: true, force: true });
    }
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
