import { BucketSpill } from './bucket-spill.js';

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

/** Address outputs spilled to bucket files, aggregated later one bucket at a time. */
export class AddressSpill {
  private readonly spill: BucketSpill;

  constructor(dir: string, buckets = 64) {
    this.spill = new BucketSpill(dir, 'addr', buckets);
  }

  get buckets(): number {
    return this.spill.buckets;
  }

  add(o: AddressOutput): void {
    const rec = Buffer.allocUnsafe(52);
    rec.writeUInt32LE(o.height, 0);
    rec.writeUInt32LE(o.txIndex, 4);
    rec.writeUInt32LE(o.vout, 8);
    rec.writeBigUInt64LE(o.value, 12);
    o.txHash.copy(rec, 20);
    this.spill.add(o.address, rec);
  }

  finish(): void {
    this.spill.finish();
  }

  /** One bucket grouped by address: addresses sorted, each one's outputs in chain order. */
  readBucket(b: number): Map<string, AddressOutput[]> {
    const groups = new Map<string, AddressOutput[]>();
    for (const [address, rec] of this.spill.readBucket(b)) {
      let list = groups.get(address);
      if (!list) groups.set(address, (list = []));
      list.push({
        address,
        height: rec.readUInt32LE(0),
        txIndex: rec.readUInt32LE(4),
        vout: rec.readUInt32LE(8),
        value: rec.readBigUInt64LE(12),
        txHash: rec.subarray(20, 52),
      });
    }
    for (const list of groups.values()) {
      list.sort((a, b) => a.height - b.height || a.txIndex - b.txIndex || a.vout - b.vout);
    }
    return new Map([...groups.entries()].sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0)));
  }
}
