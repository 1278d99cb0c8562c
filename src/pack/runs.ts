/**
 * The pack writer's directory records in sorted runs: held in memory up to `runEntries` (or
 * RUN_BYTES), then spilled to files in the writer's temporary directory and merged back in key order.
 */
import { closeSync, constants, openSync, readSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { KEY_BYTES, RECORD_SIZE, compareKeys, keyHex } from '../contract/pack-format.js';
import { onPath } from '../runtime/io-error.js';
import { OutFile } from './out-file.js';

/** One record plus its path, as held in a run. */
export interface RunEntry {
  rec: Uint8Array;
  path: string;
}

/** Bytes of paths and records held in memory, past which the run is spilled whatever its entry count. */
const RUN_BYTES = 32 << 20;
/** The most one entry takes: a u16 path length, the longest path and a record. */
const MAX_ENTRY = 2 + 0xffff + RECORD_SIZE;

/** Reads a spilled run: (u16 path length ‖ path ‖ 40-byte record)*. */
class RunReader {
  private readonly fd: number;
  private buf = Buffer.allocUnsafe(2 * MAX_ENTRY);
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

/**
 * Records added in any order, given back in key order by {@link SortedRuns.merged}. The run in
 * memory is laid out as a run file is, in one buffer (no object per record): up to `runEntries`
 * records or RUN_BYTES, then sorted and spilled.
 */
export class SortedRuns {
  private buf = Buffer.allocUnsafe(1 << 20);
  private used = 0;
  /** Where each entry of the run in memory starts in `buf`, in the order added. */
  private starts = new Uint32Array(1024);
  private count = 0;
  /** After `seal` with no run on disk: the run's entries in key order (indexes into `starts`). */
  private order: Uint32Array | undefined;
  private files: { path: string; level: number }[] = [];
  private seq = 0;

  constructor(
    private readonly tmp: string,
    private readonly runEntries: number,
  ) {}

  /** Adds `rec` (RECORD_SIZE bytes, starting with its key) for `path` (1 to 65,535 bytes of UTF-8). */
  add(path: string, rec: Uint8Array): void {
    const len = Buffer.byteLength(path);
    if (len === 0 || len > 0xffff) throw new Error(`pack writer: path of ${len} bytes: ${path.slice(0, 80)}`);
    const need = 2 + len + RECORD_SIZE;
    if (this.used + need > this.buf.length) {
      const grown = Buffer.allocUnsafe(Math.min(Math.max(this.buf.length * 2, this.used + need), RUN_BYTES + MAX_ENTRY));
      this.buf.copy(grown, 0, 0, this.used);
      this.buf = grown;
    }
    if (this.count === this.starts.length) {
      const grown = new Uint32Array(this.starts.length * 2);
      grown.set(this.starts);
      this.starts = grown;
    }
    const at = this.used;
    this.starts[this.count++] = at;
    this.buf.writeUInt16LE(len, at);
    this.buf.write(path, at + 2, len, 'utf8');
    this.buf.set(rec, at + 2 + len);
    this.used += need;
    if (this.count >= this.runEntries || this.used >= RUN_BYTES) this.spill();
  }

  /** After the last add: sorts what is still in memory, spilling it when runs are on disk already. */
  seal(): void {
    if (this.files.length > 0 && this.count > 0) this.spill();
    else this.order = this.sorted();
  }

  /** Where entry `i`'s record starts in `buf`. */
  private recAt(i: number): number {
    const at = this.starts[i]!;
    return at + 2 + this.buf.readUInt16LE(at);
  }

  /** The entries in memory in key order. */
  private sorted(): Uint32Array {
    const recs = new Uint32Array(this.count);
    for (let i = 0; i < this.count; i++) recs[i] = this.recAt(i);
    const buf = this.buf;
    const order = new Uint32Array(this.count);
    for (let i = 0; i < this.count; i++) order[i] = i;
    return order.sort((a, b) => compareKeys(buf, buf, recs[a]!, recs[b]!));
  }

  /** The entry `i` of the run in memory. */
  private entry(i: number): RunEntry {
    const at = this.starts[i]!;
    const len = this.buf.readUInt16LE(at);
    return { path: this.buf.toString('utf8', at + 2, at + 2 + len), rec: this.buf.subarray(at + 2 + len, at + 2 + len + RECORD_SIZE) };
  }

  private spill(): void {
    const f = new OutFile(join(this.tmp, `run-${this.seq++}`));
    for (const i of this.sorted()) {
      const at = this.starts[i]!;
      f.write(this.buf.subarray(at, at + 2 + this.buf.readUInt16LE(at) + RECORD_SIZE));
    }
    this.files.push({ path: this.closeRun(f), level: 0 });
    this.used = 0;
    this.count = 0;
    // Tiered merging: FANIN runs of one level become one run of the next, so no more than
    // FANIN runs per level are ever open at once and each record is rewritten once a level.
    for (;;) {
      const level = this.files.at(-1)!.level;
      const same = this.files.filter((r) => r.level === level);
      if (same.length < FANIN) break;
      const merged = this.writeRun(mergeRuns(same.map((r) => r.path)));
      for (const r of same) rmSync(r.path, { force: true });
      this.files = [...this.files.filter((r) => r.level !== level), { path: merged, level: level + 1 }];
    }
  }

  private closeRun(f: OutFile): string {
    f.flush();
    closeSync(f.fd);
    return f.path;
  }

  private writeRun(entries: Iterable<RunEntry>): string {
    const f = new OutFile(join(this.tmp, `run-${this.seq++}`));
    const len = Buffer.alloc(2);
    for (const e of entries) {
      const p = Buffer.from(e.path);
      len.writeUInt16LE(p.length);
      f.write(len);
      f.write(p);
      f.write(e.rec);
    }
    return this.closeRun(f);
  }

  /** All records in key order (one pass over the runs); equal keys fail, naming both paths. */
  *merged(): Generator<RunEntry> {
    if (this.count > 0 && this.order === undefined) throw new Error('pack writer: runs merged before seal()');
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
    if (this.files.length === 0) {
      for (const i of this.order ?? []) {
        const e = this.entry(i);
        check(e);
        yield e;
      }
      return;
    }
    for (const e of mergeRuns(this.files.map((r) => r.path))) {
      check(e);
      yield e;
    }
  }
}
