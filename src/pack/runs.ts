/**
 * The pack writer's directory records in sorted runs: held in memory up to `runEntries`, then
 * spilled to files in the writer's temporary directory and merged back in key order.
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

/** Records added in any order, given back in key order by {@link SortedRuns.merged}. */
export class SortedRuns {
  private run: RunEntry[] = [];
  private files: { path: string; level: number }[] = [];
  private seq = 0;

  constructor(
    private readonly tmp: string,
    private readonly runEntries: number,
  ) {}

  add(e: RunEntry): void {
    this.run.push(e);
    if (this.run.length >= this.runEntries) this.spill();
  }

  /** After the last add: sorts what is still in memory, spilling it when runs are on disk already. */
  seal(): void {
    if (this.files.length > 0 && this.run.length > 0) this.spill();
    else this.run.sort(byKey);
  }

  private spill(): void {
    this.run.sort(byKey);
    this.files.push({ path: this.writeRun(this.run), level: 0 });
    this.run = [];
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
    f.flush();
    closeSync(f.fd);
    return f.path;
  }

  /** All records in key order (one pass over the runs); equal keys fail, naming both paths. */
  *merged(): Generator<RunEntry> {
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
      for (const e of this.run) {
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
