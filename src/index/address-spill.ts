import { closeSync, existsSync, openSync, readFileSync, writeSync } from 'node:fs';
import { join } from 'node:path';

/** One output paid to an address, in chain order. */
export interface AddressOutput {
  address: string;
  height: number;
  txIndex: number;
  vout: number;
  value: bigint;
  /** Internal byte order. */
  txHash: Buffer;
}

const FIXED = 4 + 4 + 4 + 8 + 32;

function bucketOf(address: string, buckets: number): number {
  let h = 2166136261;
  for (let i = 0; i < address.length; i++) h = Math.imul(h ^ address.charCodeAt(i), 16777619);
  return (h >>> 0) % buckets;
}

/**
 * Address outputs spilled to bucket files by a hash of the address, so the
 * aggregation later holds one bucket in memory at a time (an external
 * group-by), whatever the chain size.
 */
export class AddressSpill {
  private readonly fds: number[] = [];
  private readonly pending: Buffer[][] = [];
  private readonly pendingBytes: number[] = [];

  constructor(
    private readonly dir: string,
    readonly buckets = 64,
  ) {
    for (let i = 0; i < buckets; i++) {
      this.fds.push(openSync(this.path(i), 'w'));
      this.pending.push([]);
      this.pendingBytes.push(0);
    }
  }

  private path(i: number): string {
    return join(this.dir, `addr-${String(i).padStart(3, '0')}.spill`);
  }

  add(o: AddressOutput): void {
    const addr = Buffer.from(o.address, 'latin1');
    const rec = Buffer.allocUnsafe(1 + addr.length + FIXED);
    rec[0] = addr.length;
    addr.copy(rec, 1);
    let p = 1 + addr.length;
    rec.writeUInt32LE(o.height, p);
    rec.writeUInt32LE(o.txIndex, p + 4);
    rec.writeUInt32LE(o.vout, p + 8);
    rec.writeBigUInt64LE(o.value, p + 12);
    o.txHash.copy(rec, p + 20);
    const b = bucketOf(o.address, this.buckets);
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

  /** Reads one bucket back, grouped by address (addresses sorted, outputs in chain order). */
  readBucket(b: number): Map<string, AddressOutput[]> {
    const path = this.path(b);
    const groups = new Map<string, AddressOutput[]>();
    if (!existsSync(path)) return groups;
    const buf = readFileSync(path);
    let p = 0;
    while (p < buf.length) {
      const len = buf[p]!;
      const address = buf.toString('latin1', p + 1, p + 1 + len);
      p += 1 + len;
      const o: AddressOutput = {
        address,
        height: buf.readUInt32LE(p),
        txIndex: buf.readUInt32LE(p + 4),
        vout: buf.readUInt32LE(p + 8),
        value: buf.readBigUInt64LE(p + 12),
        txHash: buf.subarray(p + 20, p + 52),
      };
      p += FIXED;
      let list = groups.get(address);
      if (!list) groups.set(address, (list = []));
      list.push(o);
    }
    for (const list of groups.values()) {
      list.sort((a, b) => a.height - b.height || a.txIndex - b.txIndex || a.vout - b.vout);
    }
    return new Map([...groups.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
  }
}
