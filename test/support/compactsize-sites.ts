// CompactSize sites of a serialized block, found by walking the serialization independently of
// src/chain (for tests that re-encode them), and the encodings to put there.

export interface Site {
  field: string;
  /** Offset of the CompactSize in the block. */
  offset: number;
  value: number;
  /** Its length as stored (1, 3, 5 or 9). */
  width: number;
}

/** Every field sitesOf names: the CompactSizes of a block, an AuxPoW's included. */
export const CS_FIELDS = [
  'tx count',
  'input count',
  'scriptSig length',
  'output count',
  'scriptPubKey length',
  'witness item count',
  'witness item length',
  'auxpow coinbase tx: input count',
  'auxpow coinbase tx: scriptSig length',
  'auxpow coinbase tx: output count',
  'auxpow coinbase tx: scriptPubKey length',
  'auxpow coinbase branch count',
  'auxpow chain branch count',
];

export function width(v: number): number {
  return v < 0xfd ? 1 : v <= 0xffff ? 3 : v <= 0xffffffff ? 5 : 9;
}

/** `v` in `w` bytes (1, 3, 5 or 9), canonical or not. */
export function encode(v: number, w: number): Buffer {
  const b = Buffer.alloc(w);
  b[0] = w === 1 ? v : w === 3 ? 0xfd : w === 5 ? 0xfe : 0xff;
  if (w === 3) b.writeUInt16LE(v, 1);
  else if (w === 5) b.writeUInt32LE(v, 1);
  else if (w === 9) b.writeBigUInt64LE(BigInt(v), 1);
  return b;
}

/** Every CompactSize of a (valid, canonically encoded) block, with the parser's name of its field. */
export function sitesOf(block: Buffer, auxpow: boolean): Site[] {
  const sites: Site[] = [];
  let pos = 0;
  const cs = (field: string): number => {
    const first = block[pos]!;
    const w = first < 0xfd ? 1 : first === 0xfd ? 3 : first === 0xfe ? 5 : 9;
    const value = w === 1 ? first : w === 3 ? block.readUInt16LE(pos + 1) : w === 5 ? block.readUInt32LE(pos + 1) : Number(block.readBigUInt64LE(pos + 1));
    sites.push({ field, offset: pos, value, width: w });
    pos += w;
    return value;
  };
  const tx = (prefix: string): void => {
    pos += 4;
    const segwit = block[pos] === 0 && block[pos + 1] === 1;
    if (segwit) pos += 2;
    const nIn = cs(`${prefix}input count`);
    for (let i = 0; i < nIn; i++) {
      pos += 36;
      const len = cs(`${prefix}scriptSig length`);
      pos += len + 4;
    }
    const nOut = cs(`${prefix}output count`);
    for (let i = 0; i < nOut; i++) {
      pos += 8;
      const len = cs(`${prefix}scriptPubKey length`);
      pos += len;
    }
    if (segwit) {
      for (let i = 0; i < nIn; i++) {
        const items = cs(`${prefix}witness item count`);
        for (let j = 0; j < items; j++) {
          const len = cs(`${prefix}witness item length`);
          pos += len;
        }
      }
    }
    pos += 4;
  };
  pos = 80;
  if (auxpow && block.readUInt32LE(0) & 0x100) {
    tx('auxpow coinbase tx: ');
    pos += 32;
    const coinbaseBranch = cs('auxpow coinbase branch count');
    pos += 32 * coinbaseBranch + 4;
    const chainBranch = cs('auxpow chain branch count');
    pos += 32 * chainBranch + 4 + 80;
  }
  const n = cs('tx count');
  for (let i = 0; i < n; i++) tx('');
  if (pos !== block.length) throw new Error(`test walker: ${block.length - pos} bytes left over`);
  return sites;
}

/** The block with the CompactSize at `site` replaced by `bytes`. */
export function reencode(block: Buffer, site: Site, bytes: Buffer): Buffer {
  return Buffer.concat([block.subarray(0, site.offset), bytes, block.subarray(site.offset + site.width)]);
}

/** The parser's message for `site` re-encoded in `w` bytes. */
export const nonCanonical = (site: Site, w: number) => {
  const b = encode(site.value, w);
  return `${site.field}: non-canonical CompactSize (${b.subarray(0, 1).toString('hex')} ${b.subarray(1).toString('hex')} encodes ${site.value})`;
};

/** The longer encodings of `site`'s value (Core rejects each). */
export function widths(site: Site): number[] {
  return [3, 5, 9].filter((w) => w > site.width);
}

