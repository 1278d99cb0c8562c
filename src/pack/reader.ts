/**
 * Reads a pack (docs/pack-format.md) from a local directory or a base URL (HTTP Range through
 * fetch): the edge-shippable PackCore (src/contract/pack-reader.ts) with Node's zlib for gzip and CRC-32, and
 * `verify()`, which hashes every part.
 */
import { crc32 as zcrc32, gunzipSync } from 'node:zlib';
import { createHash } from 'node:crypto';
import { Encoding, HEADER_SIZE, checkPartHeader, type BlobRef } from '../contract/pack-format.js';
import { PackCore, readPointer, readRoot } from '../contract/pack-reader.js';
import { DirSource, HttpSource, type RangeSource } from './source.js';

// Re-exported so importers of the reader keep one module path.
export { DirSource, HttpSource, type RangeSource } from './source.js';
export { PackCorruptError, acceptsGzip, answerBytes, type GetOptions, type PackAnswer } from '../contract/pack-answer.js';

export interface OpenOptions {
  /** Directory slots kept after use: up to this many, the most recently used (default 64). */
  slotCache?: number;
  /** A local directory's ranges read with blocking reads (DirSource's `sync`): for batch jobs, not servers. */
  syncReads?: boolean;
  /** Bytes of decoded blobs kept for the recipes that name them again (CoreOptions.decodedCache; default 0). */
  decodedCache?: number;
}

/**
 * The entry of `chain-snapshot/reader` (docs/pack-format.md, "Reading a pack from your own code"):
 * opens the pack a local directory or a base URL (`http:`/`https:`, read with HTTP Range) holds.
 */
export function openPack(dirOrUrl: string | URL, opts: OpenOptions = {}): Promise<PackReader> {
  return PackReader.open(dirOrUrl, opts);
}

export class PackReader extends PackCore {
  /** Opens the pack a directory or base URL holds (the file `pack.json` names its index). */
  static async open(location: string | URL | RangeSource, opts: OpenOptions = {}): Promise<PackReader> {
    const source =
      typeof location === 'object' && 'read' in location ? location : /^https?:\/\//i.test(String(location)) ? new HttpSource(location) : new DirSource(String(location), opts.syncReads);
    try {
      const root = await readRoot(source, await readPointer(source));
      root.reads++;
      return new PackReader(source, root, { slotCache: opts.slotCache, decodedCache: opts.decodedCache, crc32: zcrc32, gunzip: (b) => new Uint8Array(gunzipSync(b)) });
    } catch (e) {
      await source.close();
      throw e;
    }
  }

  /**
   * The CRC-32 of the decoded bytes of the gzip blob `b`, read from its member's trailer
   * (RFC 1952 §2.3.1: CRC32 ‖ ISIZE, its last 8 bytes; the writer stores one member a blob), when
   * that trailer's ISIZE is `size` modulo 2^32; else undefined. One read of 8 bytes, not checked
   * against the blob's CRC-32: a damaged trailer gives a CRC-32 that bytes matched against it
   * fail (a reader of the blob finds the damage).
   */
  async gzipCrc(b: BlobRef, size: number): Promise<number | undefined> {
    if (b.encoding !== Encoding.GZIP || b.stored < 18) return undefined;
    const t = await this.range(this.parts[b.part]!.name, b.offset + b.stored - 8, 8);
    if (t.length !== 8) return undefined;
    const v = new DataView(t.buffer, t.byteOffset, 8);
    return v.getUint32(4, true) === size % 2 ** 32 ? v.getUint32(0, true) : undefined;
  }

  /**
   * Checks the whole pack: each part's header and sha256 against the part table, every slot's
   * checksum and every record's blob CRC-32. Returns the problems found (empty: the pack is sound),
   * each naming the file and the absolute offset.
   */
  async verify(): Promise<string[]> {
    const problems: string[] = [];
    const chunk = 1 << 22;
    for (const p of this.parts) {
      const file = this.source.describe(p.name);
      try {
        const hash = createHash('sha256');
        let at = 0;
        while (at < p.size) {
          const b = await this.range(p.name, at, Math.min(chunk, p.size - at));
          if (at === 0) checkPartHeader(b, file);
          if (b.length === 0) break;
          hash.update(b);
          at += b.length;
        }
        if (at !== p.size) problems.push(`${file}: ${at} bytes, the part table says ${p.size}`);
        else if (!Buffer.from(p.sha256).equals(hash.digest())) problems.push(`${file}: sha256 differs from the part table's`);
      } catch (e) {
        problems.push((e as Error).message);
      }
    }
    const seen = new Set<string>();
    try {
      for await (const r of this.records()) {
        const id = `${r.part}:${r.offset}:${r.stored}`;
        if (seen.has(id)) continue;
        // Bounded: forgetting only means a shared blob may be checked again.
        if (seen.size >= 1 << 20) seen.clear();
        seen.add(id);
        try {
          await this.blob(r, `entry key ${Buffer.from(r.key).toString('hex')}`);
        } catch (e) {
          problems.push((e as Error).message);
        }
      }
    } catch (e) {
      problems.push((e as Error).message);
    }
    if (this.header.slotsOffset < HEADER_SIZE) problems.push(`${this.source.describe(this.index)}: slots at ${this.header.slotsOffset}, inside the header`);
    return problems;
  }
}
