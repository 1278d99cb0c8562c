/**
 * Joins shard packs into one pack (`snapshot merge`, docs/pack-format.md "Merging shard packs").
 * The shards hold contiguous ranges of the key order (contract/shard.ts), so the merged directory
 * is their records one after the other: the shards' part files are hard-linked (copied across
 * file systems) into the output unchanged, listed in one part table in shard order, and each
 * record's part number is shifted by the parts listed before its shard's. A recipe (kind 2)
 * names part numbers inside its blob, so it is decoded, shifted and stored again in one new part,
 * which also holds the entries the merge adds (the merged `_manifest.json`). Then a new index
 * (index-file.ts, from the merged records kept in a file until that part is closed) and
 * `pack.json`, replaced last.
 */
import { existsSync, mkdirSync, openSync, readSync, closeSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 as zcrc32, gunzipSync, gzipSync } from 'node:zlib';
import {
  Encoding,
  Kind,
  PACK_POINTER,
  RECORD_SIZE,
  compareKeys,
  decodeRecipe,
  encodePartHeader,
  encodePointer,
  encodeRecipe,
  encodeRecord,
  keyHex,
  packKey,
  type BlobRef,
  type PackRecord,
  type PartInfo,
} from '../contract/pack-format.js';
import { TwoGenerationCache } from '../chain/two-gen-cache.js';
import { linkOrCopy, onPath } from '../runtime/io-error.js';
import { writeIndexFile } from './index-file.js';
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
  let records: OutFile | undefined;
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

    // The merged records (each key checked, recipes stored again), into a file of their own:
    // the index is written from it once the new part is closed and the part table is known.
    const merged = (records = new OutFile(join(tmp, 'records')));
    const rec = new Uint8Array(RECORD_SIZE);
    let entries = 0;
    const recipes = new TwoGenerationCache<string, BlobRef>(1 << 15);
    for await (const { rec: r, shard } of mergedRecords(readers, drop, added)) {
      if (shard >= 0) opts.check?.(r.key, shard);
      let out: PackRecord = shard < 0 ? r : { ...r, part: r.part + bases[shard]! };
      if (shard >= 0 && r.kind === Kind.RECIPE) out = { ...r, ...(await restored(readers[shard]!, r, bases[shard]!, recipes, `${shard}:${r.part}:${r.offset}`, store)) };
      encodeRecord(out, rec, 0);
      merged.write(rec);
      entries++;
    }
    merged.close();
    records = undefined;

    const sha = p.close();
    part = undefined;
    newPart = `${sha.toString('hex', 0, 16)}.part`;
    onCreate(newPart);
    onPath(join(outDir, newPart), 'renaming into', () => renameSync(p.path, join(outDir, newPart!)));
    parts.push({ name: newPart, size: p.size, sha256: new Uint8Array(sha) });

    const blobCount = readers.reduce((sum, r) => sum + r.header.blobs, blobs);
    const idx = writeIndexFile(join(tmp, 'index'), () => recordsOf(merged.path), { most: entries, parts, blobs: blobCount, generation: 1 });
    const index = `${idx.sha.toString('hex', 0, 16)}.idx`;
    onCreate(index);
    onPath(join(outDir, index), 'renaming into', () => renameSync(idx.path, join(outDir, index)));
    const pointer = join(tmp, 'pointer');
    onPath(pointer, 'writing', () => writeFileSync(pointer, encodePointer(index), { flag: 'wx' }));
    onPath(join(outDir, PACK_POINTER), 'renaming into', () => renameSync(pointer, join(outDir, PACK_POINTER)));
    return { index, entries, parts: parts.length, linked, bytesWritten: p.size + idx.size };
  } catch (e) {
    for (const f of [part, records]) if (f) closeSync(f.fd);
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

/** The records of a file of records one after the other (read 1 MiB at a time; each a view into a buffer that is reused). */
function* recordsOf(path: string): Generator<Uint8Array> {
  const fd = onPath(path, 'opening', () => openSync(path, 'r'));
  try {
    const buf = new Uint8Array(RECORD_SIZE << 15);
    for (let k = buf.length; k === buf.length; ) {
      k = 0;
      for (let r; k < buf.length && (r = onPath(path, 'reading', () => readSync(fd, buf, k, buf.length - k, null))) > 0; ) k += r;
      if (k % RECORD_SIZE !== 0) throw new Error(`${path}: cut short (${k % RECORD_SIZE} bytes of a record at its end)`);
      for (let at = 0; at < k; at += RECORD_SIZE) yield buf.subarray(at, at + RECORD_SIZE);
    }
  } finally {
    closeSync(fd);
  }
}
