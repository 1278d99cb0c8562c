import { closeSync, mkdirSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { BucketSpill } from '../index/bucket-spill.js';

/**
 * The file-writing thread: creates directories (cached), writes each file and
 * answers with its sha256, so rendering on the main thread overlaps with the
 * file system work. Plain JS so it runs the same from sources and from dist.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const { mkdirSync, writeFileSync } = require('node:fs');
const { createHash } = require('node:crypto');
const { dirname, join } = require('node:path');
const dirs = new Set();
parentPort.on('message', (batch) => {
  const digests = Buffer.allocUnsafe(batch.length * 32);
  let bytes = 0;
  try {
    batch.forEach(([rel, data], i) => {
      const path = join(workerData.root, rel);
      const dir = dirname(path);
      if (!dirs.has(dir)) { mkdirSync(dir, { recursive: true }); dirs.add(dir); }
      writeFileSync(path, data);
      createHash('sha256').update(data).digest().copy(digests, i * 32);
      bytes += data.length;
    });
    parentPort.postMessage({ digests, bytes });
  } catch (e) {
    parentPort.postMessage({ error: String(e && e.message || e) });
  }
});
`;

type Entry = [string, Uint8Array];

/**
 * Writes the site's files into a staging directory on a worker thread and
 * records each one's size and sha256 for the manifest (spilled to disk, so
 * memory stays flat). Callers `await backpressure()` in their loops so that at
 * most a bounded amount of data is in flight, and `await flush()` before
 * reading back what they wrote.
 */
export class SiteWriter {
  private readonly entries: BucketSpill;
  private readonly worker: Worker;
  private batch: Entry[] = [];
  private batchBytes = 0;
  private inFlightBytes = 0;
  private readonly sent: Entry[][] = [];
  private failure: Error | undefined;
  private waiters: (() => void)[] = [];
  /** Files written (a path written twice counts twice until the manifest is made). */
  writes = 0;

  constructor(
    readonly root: string,
    workDir: string,
    private readonly maxInFlight = 32 << 20,
  ) {
    mkdirSync(root, { recursive: true });
    this.entries = new BucketSpill(workDir, 'files', 64);
    this.worker = new Worker(WORKER_SOURCE, { eval: true, workerData: { root } });
    this.worker.on('message', (m: { digests?: Uint8Array; bytes?: number; error?: string }) => this.onDone(m));
    this.worker.on('error', (e) => this.fail(e));
  }

  private onDone(m: { digests?: Uint8Array; bytes?: number; error?: string }): void {
    const batch = this.sent.shift()!;
    if (m.error !== undefined) return this.fail(new Error(`writing ${this.root}: ${m.error}`));
    const digests = Buffer.from(m.digests!.buffer, m.digests!.byteOffset, m.digests!.byteLength);
    batch.forEach(([rel, data], i) => {
      const entry = Buffer.allocUnsafe(40);
      entry.writeBigUInt64LE(BigInt(data.length), 0);
      digests.copy(entry, 8, i * 32, i * 32 + 32);
      this.entries.add(rel, entry);
    });
    this.inFlightBytes -= m.bytes!;
    this.wake();
  }

  private fail(e: Error): void {
    this.failure ??= e;
    this.wake();
  }

  private wake(): void {
    const w = this.waiters;
    this.waiters = [];
    for (const f of w) f();
  }

  write(rel: string, data: string | Buffer): void {
    if (this.failure) throw this.failure;
    const buf = typeof data === 'string' ? Buffer.from(data, 'utf8') : data;
    this.batch.push([rel, buf]);
    this.batchBytes += buf.length;
    this.writes++;
    if (this.batch.length >= 256 || this.batchBytes >= 1 << 20) this.post();
  }

  private post(): void {
    if (this.batch.length === 0) return;
    this.sent.push(this.batch);
    this.inFlightBytes += this.batchBytes;
    this.worker.postMessage(this.batch);
    this.batch = [];
    this.batchBytes = 0;
  }

  private async waitUntil(done: () => boolean): Promise<void> {
    while (!done() && !this.failure) await new Promise<void>((r) => this.waiters.push(r));
    if (this.failure) throw this.failure;
  }

  /** Resolves once the data in flight is below the bound. */
  backpressure(): Promise<void> {
    if (this.inFlightBytes < this.maxInFlight && !this.failure) return Promise.resolve();
    return this.waitUntil(() => this.inFlightBytes < this.maxInFlight);
  }

  /** Resolves once everything written so far is on disk. */
  flush(): Promise<void> {
    this.post();
    return this.waitUntil(() => this.sent.length === 0);
  }

  readText(rel: string): string {
    return readFileSync(join(this.root, rel), 'utf8');
  }

  async close(): Promise<void> {
    await this.worker.terminate();
  }

  /**
   * Writes the manifest, `sha256 size path` per line, to `rel`; returns the
   * file count (manifest included) and total bytes. Lines are grouped by a
   * hash of the path and sorted by path within a group: canonical, whatever
   * the write order, and made one bucket at a time. A path written twice
   * keeps its last entry.
   */
  async writeManifest(rel: string): Promise<{ files: number; bytes: number }> {
    await this.flush();
    this.entries.finish();
    const out = openSync(join(this.root, rel), 'w');
    let files = 0;
    let bytes = 0;
    try {
      for (let b = 0; b < this.entries.buckets; b++) {
        const latest = new Map(this.entries.readBucket(b));
        const lines: string[] = [];
        for (const path of [...latest.keys()].sort()) {
          const e = latest.get(path)!;
          const size = Number(e.readBigUInt64LE(0));
          lines.push(`${e.subarray(8, 40).toString('hex')} ${size} ${path}\n`);
          files++;
          bytes += size;
        }
        writeSync(out, lines.join(''));
      }
    } finally {
      closeSync(out);
    }
    return { files: files + 1, bytes };
  }
}
