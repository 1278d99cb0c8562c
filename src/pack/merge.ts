/**
 * Joins shard packs into one pack (`snapshot merge`, docs/pack-format.md "Merging shard packs").
 * The shards hold contiguous ranges of the key order (contract/shard.ts), so the merged directory
 * is their records one after the other: the shards' part files are hard-linked (copied across
 * file systems) into the output unchanged, listed in one part table in shard order, and each
 * record's part number is shifted by the parts listed before its shard's. A recipe (kind 2)
 * names part numbers inside its blob, so it is decoded, shifted and stored again in one new part,
 * which also holds the entries the merge adds (the merged `_manifest.json`). Then a new index
 * (written in three passes over the shards' slots: count, size the slots, write) and
 * `pack.json`, replaced last.
 */
import { existsSync, mkdirSync, openSync, readSync, closeSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 as zcrc32, gunzipSync, gzipSync } from 'node:zlib';
import {
  Encoding,
  HEADER_SIZE,
  Kind,
  PACK_POINTER,
  PACK_VERSION,
  RECORD_SIZE,
  SLOT_HEADER,
  chooseBucketBits,
  compareKeys,
  decodeRecipe,
  encodeHeader,
  encodePartHeader,
  encodePartTable,
  encodePointer,
  encodeRecipe,
  encodeRecord,
  encodeSlot,
  keyHex,
  packKey,
  slotOf,
  type BlobRef,
  type PackRecord,
  type PartInfo,
} from '../contract/pack-format.js';
import { TwoGenerationCache } from '../chain/two-gen-cache.js';
import { linkOrCopy, onPath } from '../runtime/io-error.js';
import { OutFile } from './out-file.js';
import { PackReader } from './reader.js';

export interface PackMergeOptions {
  /** Paths every shard holds for itself, left out of the merge (its manifest, its shard description). */
  drop: readonly string[];
  /** Entries the merge adds (path → answer): the merged manifest. */
  add: ReadonlyMap<string, Uint8Array>;
  /** Sees each key with the number of its shard (throws for a key outside the shard's range). */
  check?: (key: Uint8Array, shard: number) => void;
  /** Called with each entry's name before it is created in the output (the caller's journal). */
  onCreate?: (name: string) => void;
}

export interface PackMergeSummary {
  index: string;
  entries: number;
  parts: number;
  /** Parts linked (or copied) from the shards, and bytes of the new part and index. */
  linked: number;
  bytesWritten: number;
}

/** The records of the shards in key order, the added ones in their place, the dropped ones left out. */
async function* mergedRecords(readers: readonly PackReader[], drop: ReadonlySet<string>, added: readonly PackRecord[]): AsyncGenerator<{ rec: PackRecord; shard: number }> {
  let a = 0;
  let last: Uint8Array | undefined;
  const order = (rec: PackRecord, shard: number) => {
    if (last && compareKeys(last, rec.key) >= 0) {
      throw new Error(`key ${keyHex(rec.key)} of ${shard < 0 ? 'the merge' : readers[shard]!.source.describe('')} is not after the previous shard's last key ${keyHex(last)}: the shards overlap or are not in order`);
    }
    last = rec.key;
  };
  for (let shard = 0; shard < readers.length; shard++) {
    for await (const rec of readers[shard]!.records()) {
      if (drop.has(keyHex(rec.key))) continue;
      while (a < added.length && compareKeys(added[a]!.key, rec.key) < 0) {
        order(added[a]!, -1);
        yield { rec: added[a++]!, shard: -1 };
      }
      order(rec, shard);
      yield { rec, shard };
    }
  }
  while (a < added.length) {
    order(added[a]!, -1);
    yield { rec: added[a++]!, shard: -1 };
  }
}

function linkPart(src: string, dst: string, size: number): boolean {
  if (existsSync(dst)) {
    // Named by their sha256: a file of that name and size is that part.
    if (statSync(dst).size !== size) throw new Error(`${dst}: ${statSync(dst).size} bytes, but the part of that name in ${src} has ${size}`);
    return false;
  }
  linkOrCopy(src, dst);
  return true;
}

/** Merges the packs in `shardDirs` (in shard order) into `outDir`; the previous pack there, if any, stays until the caller collects it. */
export async function mergePacks(shardDirs: readonly string[], outDir: string, opts: PackMergeOptions): Promise<PackMergeSummary> {
  const onCreate = opts.onCreate ?? (() => {});
  const readers: PackReader[] = [];
  const tmpName = `.tmp-${process.pid}-${Date.now().toString(36)}`;
  const tmp = join(outDir, tmpName);
  let part: OutFile | undefined;
  let newPart: string | undefined;
  try {
    for (const d of shardDirs) readers.push(await PackReader.open(d));
    onPath(outDir, 'creating', () => mkdirSync(outDir, { recursive: true }));
    const bases: number[] = [];
    const parts: PartInfo[] = [];
    let linked = 0;
    for (const [i, r] of readers.entries()) {
      bases.push(parts.length);
      for (const p of r.parts) {
        const dst = join(outDir, p.name);
        if (!existsSync(dst)) onCreate(p.name);
        if (linkPart(join(shardDirs[i]!, p.name), dst, p.size)) linked++;
        parts.push(p);
      }
    }
    if (parts.length + 1 > 0xffff + 1) throw new Error(`the shards have ${parts.length} parts in all; a pack holds at most 65,535 besides the merge's own`);

    onCreate(tmpName);
    onPath(tmp, 'creating', () => mkdirSync(tmp));
    const partNo = parts.length;
    const p = (part = new OutFile(join(tmp, 'part')));
    p.write(encodePartHeader(partNo));
    let blobs = 0;
    const store = (bytes: Uint8Array, compress: boolean): BlobRef => {
      let stored = bytes;
      let encoding: Encoding = Encoding.IDENTITY;
      if (compress && bytes.length > 0) {
        const z = gzipSync(bytes, { level: 6 });
        if (z.length <= bytes.length * 0.95) [stored, encoding] = [z, Encoding.GZIP];
      }
      const blob: BlobRef = { part: partNo, offset: p.size, stored: stored.length, encoding, crc: zcrc32(stored) };
      p.write(stored);
      blobs++;
      return blob;
    };
    const added = [...opts.add]
      .map(([path, bytes]): PackRecord => ({ key: packKey(path), kind: Kind.STORED, size: bytes.length, ...store(bytes, true) }))
      .sort((a, b) => compareKeys(a.key, b.key));
    const drop = new Set([...opts.drop, ...opts.add.keys()].map((path) => keyHex(packKey(path))));

    // Pass 1: how many entries (and each key checked); pass 2: records per slot.
    let entries = 0;
    for await (const { rec, shard } of mergedRecords(readers, drop, added)) {
      if (shard >= 0) opts.check?.(rec.key, shard);
      entries++;
    }
    const bucketBits = chooseBucketBits(entries);
    const counts = new Uint32Array(2 ** bucketBits);
    for await (const { rec } of mergedRecords(readers, drop, added)) counts[slotOf(rec.key, bucketBits)]!++;
    let capacity = 1;
    for (const c of counts) capacity = Math.max(capacity, c);

    // Pass 3: the slots, into a file of their own until the part table (with the new part) is known.
    const slots = new OutFile(join(tmp, 'slots'));
    const recs = new Uint8Array(capacity * RECORD_SIZE);
    let slot = 0;
    let n = 0;
    const emit = () => {
      slots.write(encodeSlot(recs, n, capacity));
      slot++;
      n = 0;
    };
    const recipes = new TwoGenerationCache<string, BlobRef>(1 << 15);
    for await (const { rec, shard } of mergedRecords(readers, drop, added)) {
      let out: PackRecord = shard < 0 ? rec : { ...rec, part: rec.part + bases[shard]! };
      if (shard >= 0 && rec.kind === Kind.RECIPE) out = { ...rec, ...(await restored(readers[shard]!, rec, bases[shard]!, recipes, `${shard}:${rec.part}:${rec.offset}`, store)) };
      const s = slotOf(out.key, bucketBits);
      while (slot < s) emit();
      encodeRecord(out, recs, n * RECORD_SIZE);
      n++;
    }
    while (slot < counts.length) emit();
    slots.close();

    const sha = p.close();
    part = undefined;
    newPart = `${sha.toString('hex', 0, 16)}.part`;
    onCreate(newPart);
    onPath(join(outDir, newPart), 'renaming into', () => renameSync(p.path, join(outDir, newPart!)));
    parts.push({ name: newPart, size: p.size, sha256: new Uint8Array(sha) });

    const table = encodePartTable(parts);
    const slotBytes = SLOT_HEADER + capacity * RECORD_SIZE;
    const header = encodeHeader({
      version: PACK_VERSION,
      bucketBits,
      slotCapacity: capacity,
      partCount: parts.length,
      entries,
      blobs: readers.reduce((sum, r) => sum + r.header.blobs, blobs),
      slotsOffset: HEADER_SIZE + table.length,
      slotsLength: counts.length * slotBytes,
      partTableOffset: HEADER_SIZE,
      partTableLength: table.length,
      generation: 1,
    });
    const idx = new OutFile(join(tmp, 'index'));
    idx.write(header);
    idx.write(table);
    copyInto(idx, slots.path);
    const idxSha = idx.close();
    const index = `${idxSha.toString('hex', 0, 16)}.idx`;
    onCreate(index);
    onPath(join(outDir, index), 'renaming into', () => renameSync(idx.path, join(outDir, index)));
    const pointer = join(tmp, 'pointer');
    onPath(pointer, 'writing', () => writeFileSync(pointer, encodePointer(index), { flag: 'wx' }));
    onPath(join(outDir, PACK_POINTER), 'renaming into', () => renameSync(pointer, join(outDir, PACK_POINTER)));
    return { index, entries, parts: parts.length, linked, bytesWritten: p.size + idx.size };
  } catch (e) {
    if (part) closeSync(part.fd);
    throw e;
  } finally {
    rmSync(tmp, { recursive: true, force: true });
    await Promise.all(readers.map((r) => r.close()));
  }
}

/** A shard's recipe stored again with its part numbers shifted by `base` (once per blob while it is remembered). */
async function restored(reader: PackReader, rec: PackRecord, base: number, seen: TwoGenerationCache<string, BlobRef>, id: string, store: (b: Uint8Array, compress: boolean) => BlobRef): Promise<BlobRef> {
  const hit = seen.get(id);
  if (hit) return hit;
  const what = `recipe entry ${keyHex(rec.key)}`;
  const stored = await reader.blob(rec, what);
  const plain = rec.encoding === Encoding.GZIP ? new Uint8Array(gunzipSync(stored)) : stored;
  const segments = decodeRecipe(plain, `${reader.source.describe(reader.parts[rec.part]!.name)} (${what})`, rec.offset).map((s) => (s.type === 'range' ? { ...s, blob: { ...s.blob, part: s.blob.part + base } } : s));
  const blob = store(encodeRecipe(segments), false);
  seen.set(id, blob);
  return blob;
}

function copyInto(out: OutFile, path: string): void {
  const fd = openSync(path, 'r');
  try {
    const buf = Buffer.allocUnsafe(1 << 20);
    for (let k; (k = readSync(fd, buf, 0, buf.length, null)) > 0; ) out.write(buf.subarray(0, k));
  } finally {
    closeSync(fd);
  }
}
