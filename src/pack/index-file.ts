/**
 * A pack's index file (docs/pack-format.md, "Index"), local: written from records in key order
 * (the writer's), read back record by record (an incremental pack keeps its base's records), and
 * the merge of the two.
 */
import { closeSync, openSync, readSync } from 'node:fs';
import { crc32 as zcrc32 } from 'node:zlib';
import {
  HEADER_SIZE,
  PACK_VERSION,
  PackFormatError,
  RECORD_SIZE,
  SLOT_HEADER,
  checkSlot,
  chooseBucketBits,
  compareKeys,
  encodeHeader,
  encodePartTable,
  encodeSlot,
  slotOf,
  slotSize,
  type PackHeader,
  type PartInfo,
} from '../contract/pack-format.js';
import { onPath } from '../runtime/io-error.js';
import { OutFile } from './out-file.js';

/** Slots read at once by {@link indexRecords} (at least one): about 1 MiB of them. */
const RECORDS_READ = 1 << 20;

/**
 * The records of the local index file `file` (whose header is `h`) in key order, slot by slot,
 * each slot checked (a damaged one is named by file and offset). Each is a view into a buffer
 * that is reused: copy one to keep it.
 */
export function* indexRecords(file: string, h: PackHeader): Generator<Uint8Array> {
  const size = slotSize(h);
  const slots = 2 ** h.bucketBits;
  const per = Math.max(1, Math.floor(RECORDS_READ / size));
  const buf = new Uint8Array(per * size);
  const fd = onPath(file, 'opening', () => openSync(file, 'r'));
  try {
    for (let s = 0; s < slots; s += per) {
      const n = Math.min(per, slots - s);
      const at = h.slotsOffset + s * size;
      let got = 0;
      while (got < n * size) {
        const r = onPath(file, 'reading', () => readSync(fd, buf, got, n * size - got, at + got));
        if (r === 0) throw new PackFormatError(file, at + got, 'index is cut short');
        got += r;
      }
      for (let i = 0; i < n; i++) {
        const slot = buf.subarray(i * size, (i + 1) * size);
        const count = checkSlot(slot, h.slotCapacity, file, at + i * size, zcrc32);
        for (let r = 0; r < count; r++) yield slot.subarray(SLOT_HEADER + r * RECORD_SIZE, SLOT_HEADER + (r + 1) * RECORD_SIZE);
      }
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * `added` and `base` (both in key order) merged: a base record is left out when its key is in
 * `drop` (sorted) or `added` has the same key (the added record wins).
 */
export function* withKept(added: Iterable<Uint8Array>, base: Iterable<Uint8Array>, drop: readonly Uint8Array[]): Generator<Uint8Array> {
  let d = 0;
  const it = added[Symbol.iterator]();
  let a = it.next();
  for (const rec of base) {
    let c = -1;
    while (!a.done && (c = compareKeys(a.value, rec)) < 0) {
      yield a.value;
      a = it.next();
    }
    while (d < drop.length && compareKeys(drop[d]!, rec) < 0) d++;
    if ((!a.done && c === 0) || (d < drop.length && compareKeys(drop[d]!, rec) === 0)) continue;
    yield rec;
  }
  for (; !a.done; a = it.next()) yield a.value;
}

/** What {@link writeIndexFile} wrote. */
export interface IndexFile {
  path: string;
  sha: Buffer;
  size: number;
  entries: number;
  bucketBits: number;
  slotCapacity: number;
}

/**
 * Writes the index of `parts` to `path` from `records()` (key order; called twice: once to
 * count, once to write). `most`: at least the number of records, for counting them per slot
 * before their number is known; `check` sees that number before anything is written.
 */
export function writeIndexFile(
  path: string,
  records: () => Iterable<Uint8Array>,
  meta: { most: number; parts: readonly PartInfo[]; blobs: number; generation: number; check?: (entries: number) => void },
): IndexFile {
  // Slots are counted at the resolution of the most entries there can be, then summed down to
  // that of the entries there are.
  const fineBits = chooseBucketBits(meta.most);
  const fine = new Uint32Array(2 ** fineBits);
  let entries = 0;
  for (const rec of records()) {
    fine[slotOf(rec, fineBits)]!++;
    entries++;
  }
  meta.check?.(entries);
  const bucketBits = chooseBucketBits(entries);
  const counts = new Uint32Array(2 ** bucketBits);
  fine.forEach((c, f) => (counts[f >>> (fineBits - bucketBits)]! += c));
  let capacity = 0;
  for (const c of counts) capacity = Math.max(capacity, c);
  capacity = Math.max(capacity, 1);

  const table = encodePartTable(meta.parts);
  const slotBytes = SLOT_HEADER + capacity * RECORD_SIZE;
  const slotsOffset = HEADER_SIZE + table.length;
  const header = encodeHeader({
    version: PACK_VERSION,
    bucketBits,
    slotCapacity: capacity,
    partCount: meta.parts.length,
    entries,
    blobs: meta.blobs,
    slotsOffset,
    slotsLength: counts.length * slotBytes,
    partTableOffset: HEADER_SIZE,
    partTableLength: table.length,
    generation: meta.generation,
  });
  const idx = new OutFile(path);
  try {
    idx.write(header);
    idx.write(table);
    const recs = new Uint8Array(capacity * RECORD_SIZE);
    let slot = 0;
    let n = 0;
    const emit = () => {
      idx.write(encodeSlot(recs, n, capacity));
      slot++;
      n = 0;
    };
    for (const rec of records()) {
      const s = slotOf(rec, bucketBits);
      while (slot < s) emit();
      recs.set(rec, n * RECORD_SIZE);
      n++;
    }
    while (slot < counts.length) emit();
  } catch (e) {
    closeSync(idx.fd);
    throw e;
  }
  const sha = idx.close();
  return { path, sha, size: idx.size, entries, bucketBits, slotCapacity: capacity };
}
