/**
 * Bitcoin Core's blk?????.dat obfuscation (Core 28+, `blocks/xor.dat`): every
 * byte of a file is XORed with key[filePos % 8]. XORs `buf` in place, as it
 * sits at `filePos` in its file; no key, no change.
 */
export function xorObfuscate(buf: Uint8Array, filePos: number, key: Uint8Array | undefined): void {
  if (!key) return;
  if (key.length !== 8) throw new Error(`xor key must be 8 bytes, got ${key.length}`);
  let k = filePos % 8;
  for (let i = 0; i < buf.length; i++) {
    buf[i]! ^= key[k]!;
    k = (k + 1) & 7;
  }
}
