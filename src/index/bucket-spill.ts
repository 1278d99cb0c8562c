import { closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** FNV-1a of a string's UTF-16 code units: a stable, cheap bucket choice. */
export function bucketOf(key: string, buckets: number): number {
  let h = 2166136261;
  for (let i = 0; i < key.length; i++) h = Math.imul(h ^ key.charCodeAt(i), 16777619);
  return (h >>> 0) % buckets;
}

/**
 * Records `(key, payload)` appended to bucket files chosen by a hash of the
 * key: an external group-by. Later passes read one bucket at a time, so
 * memory is bounded by the largest bucket, not by the chain.
 */
export class BucketSpill {
  private readonly fds: number[] = [];
  private readonly pending: Buffer[][] = [];
  private readonly pendingBytes: number[] = [];

  constructor(
    private readonly dir: string,
    private readonly prefix: string,
    readonly buckets = 64,
  ) {
    for (let i = 0; i < buckets; i++) {
      this.fds.push(openSync(this.path(i), 'w'));
      this.pending.push([]);
      this.pendingBytes.push(0);
    }
  }

  private path(i: number): string {
    return join(this.dir, `${this.prefix}-${String(i).padStart(3, '0')}.spill`);
  }

  add(key: string, payload: Buffer): void {
    const k = Buffer.from(key, 'utf8');
    const rec = Buffer.allocUnsafe(6 + k.length + payload.length);
    rec.writeUInt16LE(k.length, 0);
    rec.writeUInt32LE(payload.length, 2);
    k.copy(rec, 6);
    payload.copy(rec, 6 + k.length);
    const b = bucketOf(key, this.buckets);
    this.pending[b]!.push(rec);
    this.pendingBytes[b]! += rec.length;
    if (this.pendingBytes[b]! > 1 << 16) this.flushBucket(b);
  }

  private flushBucket(b: number): void {
    if (this.pending[b]!.length === 0) return;
    writeSync(this.fds[b]!, Buffer.concat(this.pending[b]!));
    this.pending[b] = [];
    this.pendingBytes[b] = 0;
  }

  finish(): void {
    for (let b = 0; b < this.buckets; b++) {
      this.flushBucket(b);
      closeSync(this.fds[b]!);
    }
  }

  /** One bucket's records in the order they were added. */
  readBucket(b: number): [string, Buffer][] {
    const path = this.path(b);
    if (!existsSync(path)) return [];
    const buf = readFileSync(path);
    const out: [string, Buffer][] = [];
    for (let p = 0; p < buf.length; ) {
      const klen = buf.readUInt16LE(p);
      const plen = buf.readUInt32LE(p + 2);
      const key = buf.toString('utf8', p + 6, p + 6 + klen);
      out.push([key, buf.subarray(p + 6 + klen, p + 6 + klen + plen)]);
      p += 6 + klen + plen;
    }
    return out;
  }
}
