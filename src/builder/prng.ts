import { createHash } from 'node:crypto';

/**
 * Deterministic PRNG (xoshiro128**), seeded from any string or number via
 * SHA-256. Same seed → same sequence on every platform.
 */
export class Prng {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number | string) {
    const h = createHash('sha256').update(`chain-builder:${typeof seed}:${seed}`).digest();
    this.a = h.readUInt32LE(0);
    this.b = h.readUInt32LE(4);
    this.c = h.readUInt32LE(8);
    this.d = h.readUInt32LE(12);
    if ((this.a | this.b | this.c | this.d) === 0) this.a = 1;
  }

  /** Uniform uint32. */
  u32(): number {
    const result = Math.imul(rotl(Math.imul(this.b, 5), 7), 9) >>> 0;
    const t = this.b << 9;
    this.c ^= this.a;
    this.d ^= this.b;
    this.b ^= this.c;
    this.a ^= this.d;
    this.c ^= t;
    this.d = rotl(this.d, 11);
    return result;
  }

  /** Uniform integer in [0, n) (n ≤ 2^32). */
  int(n: number): number {
    return Math.floor((this.u32() / 0x100000000) * n);
  }

  /** Uniform float in [0, 1). */
  float(): number {
    return this.u32() / 0x100000000;
  }

  chance(p: number): boolean {
    return this.float() < p;
  }

  pick<T>(items: readonly T[]): T {
    if (items.length === 0) throw new Error('Prng.pick on an empty list');
    return items[this.int(items.length)]!;
  }

  /** Fills `out` (or a new buffer of n bytes) with random bytes. */
  bytes(n: number, out: Buffer = Buffer.allocUnsafe(n)): Buffer {
    let i = 0;
    for (; i + 4 <= n; i += 4) out.writeUInt32LE(this.u32(), i);
    if (i < n) {
      const v = this.u32();
      for (let j = 0; i < n; i++, j++) out[i] = (v >>> (8 * j)) & 0xff;
    }
    return out;
  }

  /** In-place Fisher–Yates shuffle. */
  shuffle<T>(items: T[]): T[] {
    for (let i = items.length - 1; i > 0; i--) {
      const j = this.int(i + 1);
      const t = items[i]!;
      items[i] = items[j]!;
      items[j] = t;
    }
    return items;
  }

  /** An independent generator derived from this one and a label. */
  fork(label: string): Prng {
    return new Prng(`${label}:${this.u32()}:${this.u32()}`);
  }
}

function rotl(x: number, k: number): number {
  return (x << k) | (x >>> (32 - k));
}
