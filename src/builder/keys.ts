import { createECDH } from 'node:crypto';
import { hash160 } from '../chain/hash.js';
import type { Prng } from './prng.js';

/** A deterministic key: a real secp256k1 point (private key from the PRNG), no signing. */
export interface Key {
  /** Serialized public key: 33 bytes (02/03) or 65 bytes (04) when uncompressed. */
  pub: Buffer;
  compressed: boolean;
  /** hash160(pub): the P2PKH / P2WPKH program. */
  hash160: Buffer;
  /** x-only key (BIP340), the 32 bytes after the compressed prefix. */
  xonly: Buffer;
}

/** Makes valid-looking, real curve points from a seeded PRNG (node:crypto ECDH). */
export class KeyFactory {
  private readonly ecdh = createECDH('secp256k1');

  constructor(private readonly prng: Prng) {}

  key(opts: { uncompressed?: boolean } = {}): Key {
    const priv = Buffer.alloc(32);
    for (;;) {
      this.prng.bytes(32, priv);
      try {
        this.ecdh.setPrivateKey(priv);
        break;
      } catch {
        // zero or ≥ the curve order: draw again
      }
    }
    const compressedPub = this.ecdh.getPublicKey(null, 'compressed');
    const pub = opts.uncompressed ? this.ecdh.getPublicKey(null, 'uncompressed') : compressedPub;
    return { pub, compressed: !opts.uncompressed, hash160: hash160(pub), xonly: compressedPub.subarray(1) };
  }

  /**
   * A key-shaped compressed key (02/03 + 32 PRNG bytes) that is not necessarily a curve point:
   * no elliptic-curve work (a real key costs ~0.3 ms), for chains with hundreds of thousands of
   * addresses. Nothing in this project checks keys or signatures.
   */
  fakeKey(): Key {
    const pub = Buffer.allocUnsafe(33);
    pub[0] = 2 + (this.prng.u32() & 1);
    this.prng.bytes(32, pub.subarray(1));
    return { pub, compressed: true, hash160: hash160(pub), xonly: pub.subarray(1) };
  }
}

/**
 * Fake signatures with the right shapes: strict-DER ECDSA (low r/s top bits,
 * 71 bytes incl. the SIGHASH_ALL byte) and 64-byte BIP340 Schnorr. They do
 * not verify; nothing in this project checks signatures.
 */
export class Signer {
  constructor(private readonly prng: Prng) {}

  ecdsa(): Buffer {
    const sig = Buffer.allocUnsafe(71);
    sig[0] = 0x30;
    sig[1] = 0x44;
    sig[2] = 0x02;
    sig[3] = 0x20;
    this.prng.bytes(32, sig.subarray(4, 36));
    sig[4] = 0x01 + (sig[4]! % 0x7e);
    sig[36] = 0x02;
    sig[37] = 0x20;
    this.prng.bytes(32, sig.subarray(38, 70));
    sig[38] = 0x01 + (sig[38]! % 0x7e);
    sig[70] = 0x01; // SIGHASH_ALL
    return sig;
  }

  schnorr(): Buffer {
    return this.prng.bytes(64);
  }
}
