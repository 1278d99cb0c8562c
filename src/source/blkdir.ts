/**
 * Chain source over a Bitcoin Core / Namecoin Core `blocks/` directory.
 *
 * Pass 1 walks every `blk?????.dat` (numeric order) reading only the 8-byte
 * record header and the 80-byte block header of each record (a 64 KiB read
 * window, XOR-decoded when `xor.dat` is present) and keeps headers + file
 * positions in compact typed storage. The main chain is then selected by
 * cumulative work (see chain-select.ts). Block bodies are read lazily, in
 * height order with a read-ahead window, and checked against the header hash.
 */
import { open, readdir, readFile, stat, type FileHandle } from 'node:fs/promises';
import { join } from 'node:path';
import { xorObfuscate } from '../chain/blkfile.js';
import { AUXPOW_VERSION_FLAG, HEADER_SIZE, parseBlock } from '../chain/block.js';
import { sha256d, toDisplayHex } from '../chain/hash.js';
import type { Network } from '../chain/networks.js';
import { checkBlockHead } from '../chain/validate.js';
import { HeaderTree, KIND_MAIN, KIND_SIDE } from './chain-select.js';
import type { BlockPlace, ChainSource, ChainTip, OffChainBlock, RejectedBlock, SourceBlock } from './types.js';

export interface BlocksDirOptions {
  /** Blocks read ahead of the consumer in mainChain() (default 16). */
  readAhead?: number;
  /** Bytes read ahead at most (default 64 MiB; at least one block is always in flight). */
  readAheadBytes?: number;
  /** Largest record length accepted as a block (default 32 MiB). */
  maxBlockSize?: number;
  /** Called after each blk file of pass 1. */
  onProgress?: (info: { file: string; files: number; done: number; headers: number }) => void;
}

/** Statistics of pass 1 (for logs and benchmarks). */
export interface ScanStats {
  files: number;
  records: number;
  headers: number;
  duplicates: number;
  skippedRanges: number;
  skippedBytes: number;
  bytesRead: number;
  ms: number;
  /** Bytes held by header/position storage after pass 1. */
  indexBytes: number;
}

export interface BlocksDirSource extends ChainSource {
  readonly scanStats: ScanStats;
  /** blk files found, in numeric order. */
  readonly files: readonly string[];
  /** Cumulative chain work of the best tip (exact). */
  readonly tipWork: bigint;
}

const WINDOW = 64 * 1024;
const BLK_RE = /^blk(\d+)\.dat$/;

interface BlkFile {
  name: string;
  num: number;
  path: string;
  size: number;
}

/** Windowed, XOR-decoding positional reader over one file (pass 1). */
class WindowReader {
  private win = Buffer.alloc(0);
  private winStart = 0;
  bytesRead = 0;

  constructor(
    private readonly fh: FileHandle,
    readonly size: number,
    private readonly key: Uint8Array | undefined,
  ) {}

  /** Ensures [pos, pos+n) is in the window (n <= WINDOW, clipped at EOF) and returns the window. */
  async at(pos: number, n: number): Promise<{ buf: Buffer; start: number }> {
    const end = Math.min(pos + n, this.size);
    if (pos < this.winStart || end > this.winStart + this.win.length) {
      const len = Math.min(WINDOW, this.size - pos);
      const buf = Buffer.allocUnsafe(len);
      const { bytesRead } = await this.fh.read(buf, 0, len, pos);
      this.bytesRead += bytesRead;
      this.win = buf.subarray(0, bytesRead);
      this.winStart = pos;
      xorObfuscate(this.win, pos, this.key);
    }
    return { buf: this.win, start: this.winStart };
  }

  /**
   * Whether byte k of a window that starts at file offset `start` is zero on
   * disk. Core ≥ 28 pre-allocates blk files with raw zeros that never went
   * through the XOR stream, so padding is tested before decoding.
   */
  rawZero(buf: Buffer, start: number, k: number): boolean {
    return buf[k] === (this.key ? this.key[(start + k) % 8]! : 0);
  }

  /** Whether bytes [k, k+n) of the window (clipped at its end) are all zero on disk. */
  rawZeros(buf: Buffer, start: number, k: number, n: number): boolean {
    for (let i = k, end = Math.min(k + n, buf.length); i < end; i++) if (!this.rawZero(buf, start, i)) return false;
    return true;
  }
}

/**
 * Opens a blocks directory and runs pass 1. Throws when no blk files exist,
 * when the network's genesis block is missing (e.g. a pruned node), naming
 * the missing files.
 */
export async function openBlocksDir(dir: string, network: Network, opts: BlocksDirOptions = {}): Promise<BlocksDirSource> {
  const t0 = performance.now();
  const readAhead = Math.max(1, opts.readAhead ?? 16);
  const readAheadBytes = opts.readAheadBytes ?? 64 * 1024 * 1024;
  const maxBlockSize = opts.maxBlockSize ?? 32 * 1024 * 1024;
  const magic = Buffer.from(network.magic, 'hex');
  const magicU32 = magic.readUInt32LE(0);
  const warnings: string[] = [];
  // Headers that fail their own proof of work (damaged): kept out of the chain, reported by the validating wrapper.
  const rejected: RejectedBlock[] = [];
  const rejectedPrev: Buffer[] = [];
  const rejectedHashes = new Set<string>();

  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (e) {
    throw new Error(`blocks dir ${dir}: cannot read it (${(e as Error).message})`);
  }
  const files: BlkFile[] = [];
  for (const name of entries) {
    const m = BLK_RE.exec(name);
    if (!m) continue;
    const path = join(dir, name);
    const st = await stat(path);
    if (!st.isFile()) continue;
    files.push({ name, num: Number(m[1]), path, size: st.size });
  }
  files.sort((a, b) => a.num - b.num);
  if (files.length === 0) throw new Error(`blocks dir ${dir}: no blk?????.dat files found`);
  if (files.length > 0xffff) throw new Error(`blocks dir ${dir}: too many blk files (${files.length})`);

  let key: Uint8Array | undefined;
  try {
    const raw = await readFile(join(dir, 'xor.dat'));
    if (raw.length !== 8) throw new Error(`blocks dir ${dir}: xor.dat has ${raw.length} bytes, expected 8`);
    if (raw.some((b) => b !== 0)) key = new Uint8Array(raw);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw e;
  }

  // Missing numbers in the file sequence (a pruned node deletes from blk00000 up).
  const missingFiles: string[] = [];
  {
    let expect = 0;
    for (const f of files) {
      for (; expect < f.num; expect++) missingFiles.push(`blk${String(expect).padStart(5, '0')}.dat`);
      expect = f.num + 1;
    }
  }

  // ---- pass 1: headers + positions ----
  const tree = new HeaderTree(1024);
  let fileOf = new Uint16Array(1024);
  let posOf = new Float64Array(1024); // data offset (after the 8-byte record header)
  let lenOf = new Uint32Array(1024);
  const stats: ScanStats = {
    files: files.length,
    records: 0,
    headers: 0,
    duplicates: 0,
    skippedRanges: 0,
    skippedBytes: 0,
    bytesRead: 0,
    ms: 0,
    indexBytes: 0,
  };

  const skipped = (f: BlkFile, from: number, to: number, why: string): void => {
    stats.skippedRanges++;
    stats.skippedBytes += to - from;
    warnings.push(`${f.name} offset ${from}: skipped ${to - from} bytes (${why})`);
  };

  for (let fi = 0; fi < files.length; fi++) {
    const f = files[fi]!;
    const fh = await open(f.path, 'r');
    try {
      const r = new WindowReader(fh, f.size, key);
      /** Next offset >= from where the magic starts, or EOF; also the end of non-zero data before it. */
      const scanForMagic = async (from: number): Promise<{ next: number; dataEnd: number }> => {
        let pos = from;
        let dataEnd = from;
        while (pos < f.size) {
          const { buf, start } = await r.at(pos, WINDOW);
          const rel = pos - start;
          const found = buf.indexOf(magic, rel);
          const stop = found === -1 ? buf.length : found;
          for (let k = stop - 1; k >= rel; k--) {
            if (!r.rawZero(buf, start, k)) {
              dataEnd = Math.max(dataEnd, start + k + 1);
              break;
            }
          }
          if (found !== -1) return { next: start + found, dataEnd: start + found };
          if (start + buf.length >= f.size) break;
          pos = start + buf.length - (magic.length - 1); // overlap so a magic across windows is found
          if (pos <= from) pos = from + 1;
        }
        return { next: f.size, dataEnd };
      };

      let pos = 0;
      while (pos < f.size) {
        const { buf, start } = await r.at(pos, 8 + HEADER_SIZE);
        const rel = pos - start;
        const avail = buf.length - rel;
        // A key that shares bytes with the magic decodes raw zeros into it: 8 raw zero bytes are padding, not a record.
        if (avail >= 4 && buf.readUInt32LE(rel) === magicU32 && !r.rawZeros(buf, start, rel, 8)) {
          const len = avail >= 8 ? buf.readUInt32LE(rel + 4) : -1;
          let bad: string | undefined;
          if (len < 0) bad = 'record header cut off at end of file';
          else if (len < HEADER_SIZE) bad = `record length ${len} is below ${HEADER_SIZE}`;
          else if (len > maxBlockSize) bad = `record length ${len} is above ${maxBlockSize}`;
          else if (pos + 8 + len > f.size) bad = `record of ${len} bytes truncated by end of file (${f.size - pos - 8} left)`;
          else if (avail >= 12 && buf.readUInt32LE(rel + 8) === magicU32) bad = 'record body starts with the magic again (interrupted write)';
          if (bad !== undefined) {
            const { next, dataEnd } = await scanForMagic(pos + 1);
            skipped(f, pos, Math.max(dataEnd, Math.min(pos + 8, f.size)), bad);
            pos = next;
            continue;
          }
          stats.records++;
          let header = buf.subarray(rel + 8, rel + 8 + HEADER_SIZE);
          // A merge-mined header's proof of work is the AuxPoW after it: check it with the record in the window.
          let head = header;
          if (network.auxpow && header.readUInt32LE(0) & AUXPOW_VERSION_FLAG) {
            const w = await r.at(pos, Math.min(8 + len, WINDOW));
            const wrel = pos - w.start;
            head = w.buf.subarray(wrel + 8, Math.min(w.buf.length, wrel + 8 + len));
            header = head.subarray(0, HEADER_SIZE);
          }
          const checked = checkBlockHead(head, network);
          const headerHash = checked.hash;
          // (an AuxPoW longer than the window is checked when the block is read)
          const invalid = checked.invalid?.kind === 'malformed' && head.length < len ? undefined : checked.invalid;
          if (invalid) {
            const hash = toDisplayHex(headerHash);
            if (!rejectedHashes.has(hash)) {
              rejected.push({ hash, height: undefined, place: { file: f.name, offset: pos + 8 }, invalid });
              rejectedPrev.push(Buffer.from(header.subarray(4, 36)));
            }
            rejectedHashes.add(hash);
            pos += 8 + len;
            continue;
          }
          const { index, isNew } = tree.add(header, headerHash);
          if (isNew) {
            if (index >= fileOf.length) {
              const cap = fileOf.length * 2;
              const a = new Uint16Array(cap);
              a.set(fileOf);
              fileOf = a;
              const b = new Float64Array(cap);
              b.set(posOf);
              posOf = b;
              const c = new Uint32Array(cap);
              c.set(lenOf);
              lenOf = c;
            }
            fileOf[index] = fi;
            posOf[index] = pos + 8;
            lenOf[index] = len;
          } else {
            stats.duplicates++;
            const first = files[fileOf[index]!]!;
            warnings.push(
              `${f.name} offset ${pos}: duplicate copy of block ${tree.hashHex(index)} (first at ${first.name} offset ${posOf[index]! - 8}); counted once`,
            );
          }
          pos += 8 + len;
        } else if (r.rawZero(buf, start, rel)) {
          // Zero padding (pre-allocated file tail, raw zeros on disk even with xor.dat): skip silently.
          let p = pos;
          for (;;) {
            const w = await r.at(p, WINDOW);
            let k = p - w.start;
            while (k < w.buf.length && r.rawZero(w.buf, w.start, k)) {
              // A key byte equal to the magic's makes a record's first raw bytes zero: stop at its magic.
              if (w.buf[k] === magic[0]) {
                if (k + 8 > w.buf.length && w.start + w.buf.length < f.size) break; // header may straddle: re-read from here
                if (k + 4 <= w.buf.length && w.buf.readUInt32LE(k) === magicU32 && !r.rawZeros(w.buf, w.start, k, 8)) break;
              }
              k++;
            }
            p = w.start + k;
            if (k < w.buf.length || p >= f.size) break;
          }
          if (p >= f.size) break;
          pos = p; // magic or junk: handled by the next round
        } else {
          const { next, dataEnd } = await scanForMagic(pos + 1);
          skipped(f, pos, dataEnd, `no ${network.name} magic ${network.magic}`);
          pos = next;
        }
      }
      stats.bytesRead += r.bytesRead;
    } finally {
      await fh.close();
    }
    opts.onProgress?.({ file: f.name, files: files.length, done: fi + 1, headers: tree.size });
  }
  stats.headers = tree.size;

  const sel = tree.select(network.genesis);
  stats.ms = performance.now() - t0;
  stats.indexBytes = tree.byteSize + fileOf.byteLength + posOf.byteLength + lenOf.byteLength + sel.height.byteLength + sel.kind.byteLength + sel.main.byteLength;

  const describe = `blocks dir ${dir}`;

  if (sel.genesis === -1) {
    if (tree.size === 0) {
      throw new Error(`${describe}: no blocks with ${network.name} magic ${network.magic} in ${files.length} blk file(s) (wrong --network?)`);
    }
    let msg = `${describe}: the ${network.name} genesis block ${network.genesis} is not in the blk files`;
    if (missingFiles.length > 0) {
      const hint = await lowestHeightHint(tree, files, fileOf, posOf, lenOf, key, network);
      msg += `; ${describeList(missingFiles)} missing (files start at ${files[0]!.name}: a pruned node?), so `;
      msg +=
        hint.height !== undefined
          ? `heights 0–${hint.height - 1} are missing (the lowest block held, ${hint.hash}, is height ${hint.height} by its coinbase)`
          : `heights from 0 up to the lowest block held (${hint.hash}, at ${hint.where}) are missing`;
    } else if (rejected.length > 0) {
      const r = rejected[0]!;
      msg += `; ${rejected.length} block(s) there are invalid, the first at ${r.place.file} offset ${r.place.offset}: block ${r.hash} is invalid: ${r.invalid.kind}: ${r.invalid.detail}`;
    } else {
      msg += ` (${tree.size} blocks found, none of them the genesis block: wrong --network, or not a full blocks dir)`;
    }
    throw new Error(msg);
  }

  const tip: ChainTip = { height: sel.tipHeight, hash: tree.hashHex(sel.main[sel.tipHeight]!) };
  if (missingFiles.length > 0) {
    warnings.push(`${describe}: ${describeList(missingFiles)} missing; the chain from genesis reaches height ${tip.height}`);
  }
  rejected.forEach((r, k) => {
    const parent = tree.indexOf(rejectedPrev[k]!);
    if (parent !== -1 && sel.height[parent]! >= 0) r.height = sel.height[parent]! + 1;
  });
  const placeOf = (i: number): BlockPlace => ({ file: files[fileOf[i]!]!.name, offset: posOf[i]! });
  let firstOrphan = '';
  if (sel.orphanCount > 0) {
    // Loud: in a node's blocks dir every stored block connects, so this is missing or damaged data.
    let first = -1;
    for (let i = 0; i < tree.size && first === -1; i++) if (sel.height[i] === -1 && tree.parentOf(i) === -1) first = i;
    const at = placeOf(first);
    firstOrphan = `the first, ${tree.hashHex(first)} at ${at.file} offset ${at.offset}, builds on ${toDisplayHex(tree.prevHash(first))}, which is in no blk file (missing or damaged data?)`;
    warnings.push(
      `${describe}: ${sel.orphanCount} block(s) with an unknown parent (orphans) do not connect to the chain from genesis, so the chain found ends at height ${tip.height}; ${firstOrphan}`,
    );
  }

  // ---- pass 2: lazy body reads ----
  const handles = new Map<number, Promise<FileHandle>>();
  const handle = (fi: number): Promise<FileHandle> => {
    let h = handles.get(fi);
    if (!h) {
      if (handles.size >= 16) {
        const [oldest, oh] = handles.entries().next().value as [number, Promise<FileHandle>];
        handles.delete(oldest);
        void oh.then((x) => x.close()).catch(() => undefined);
      }
      h = open(files[fi]!.path, 'r');
      handles.set(fi, h);
    } else {
      handles.delete(fi); // LRU: move to the end
      handles.set(fi, h);
    }
    return h;
  };

  const readBody = async (i: number): Promise<Buffer> => {
    const f = files[fileOf[i]!]!;
    const pos = posOf[i]!;
    const len = lenOf[i]!;
    const buf = Buffer.allocUnsafe(len);
    const fh = await handle(fileOf[i]!);
    const { bytesRead } = await fh.read(buf, 0, len, pos);
    if (bytesRead !== len) {
      throw new Error(`${f.name} offset ${pos - 8}: block ${tree.hashHex(i)} cut short (${bytesRead} of ${len} bytes; file changed since the scan?)`);
    }
    xorObfuscate(buf, pos, key);
    const h = sha256d(buf.subarray(0, HEADER_SIZE));
    if (!h.equals(tree.hash(i))) {
      throw new Error(`${f.name} offset ${pos - 8}: expected block ${tree.hashHex(i)}, read ${toDisplayHex(h)} (file changed since the scan?)`);
    }
    return buf;
  };

  const aboveTip = (height: number): Error => {
    let msg = `${describe}: height ${height} is above the tip of the chain found (height ${tip.height}, ${tip.hash})`;
    if (missingFiles.length > 0) msg += `; ${describeList(missingFiles)} missing (pruned or incomplete dir)`;
    if (sel.orphanCount > 0) msg += `; ${sel.orphanCount} block(s) have an unknown parent: ${firstOrphan}`;
    return new Error(msg);
  };

  /** Yields bodies for a list of tree indices in order with bounded read-ahead. */
  async function* readInOrder(indices: ArrayLike<number>, count: number): AsyncGenerator<{ index: number; raw: Buffer }> {
    const queue: { index: number; p: Promise<Buffer> }[] = [];
    let next = 0;
    let queuedBytes = 0;
    const fill = (): void => {
      while (next < count && queue.length < readAhead && (queue.length === 0 || queuedBytes + lenOf[indices[next]!]! <= readAheadBytes)) {
        const index = indices[next++]!;
        const p = readBody(index);
        p.catch(() => undefined); // surfaced when awaited
        queue.push({ index, p });
        queuedBytes += lenOf[index]!;
      }
    };
    fill();
    while (queue.length > 0) {
      const item = queue.shift()!;
      const raw = await item.p;
      queuedBytes -= lenOf[item.index]!;
      fill();
      yield { index: item.index, raw };
    }
  }

  let closed = false;
  const source: BlocksDirSource = {
    network,
    description: describe,
    warnings,
    rejected,
    scanStats: stats,
    files: files.map((f) => f.name),
    tipWork: sel.tipWork,
    tip: async () => tip,
    async *mainChain(height: number, from = 0): AsyncGenerator<SourceBlock> {
      if (closed) throw new Error(`${describe}: source is closed`);
      if (!Number.isInteger(height) || height < 0) throw new Error(`${describe}: invalid height ${height}`);
      if (height > tip.height) throw aboveTip(height);
      let h = from;
      for await (const { index, raw } of readInOrder(sel.main.subarray(from), height + 1 - from)) {
        yield { height: h++, hash: tree.hashHex(index), raw, place: placeOf(index) };
      }
    },
    async hashAt(height: number): Promise<string> {
      if (!Number.isInteger(height) || height < 0) throw new Error(`${describe}: invalid height ${height}`);
      if (height > tip.height) throw aboveTip(height);
      return tree.hashHex(sel.main[height]!);
    },
    async scanWork(height: number, from: number) {
      let total = 0;
      for (let h = from; h <= Math.min(height, tip.height); h++) total += lenOf[sel.main[h]!]!;
      return { unit: 'bytes' as const, total };
    },
    async *offChain(height: number): AsyncGenerator<OffChainBlock> {
      if (closed) throw new Error(`${describe}: source is closed`);
      if (height > tip.height) throw aboveTip(height);
      const side: number[] = [];
      const orphans: number[] = [];
      for (let i = 0; i < tree.size; i++) {
        if (sel.kind[i] === KIND_SIDE) {
          if (sel.forkHeight(i) < height) side.push(i);
        } else if (sel.kind[i] !== KIND_MAIN) orphans.push(i);
      }
      side.sort((a, b) => sel.height[a]! - sel.height[b]! || a - b);
      for await (const { index, raw } of readInOrder(side, side.length)) {
        yield { kind: 'side', hash: tree.hashHex(index), height: sel.height[index]!, raw, place: placeOf(index) };
      }
      for await (const { index, raw } of readInOrder(orphans, orphans.length)) {
        yield { kind: 'orphan', hash: tree.hashHex(index), height: undefined, raw, place: placeOf(index) };
      }
    },
    async close() {
      closed = true;
      const hs = [...handles.values()];
      handles.clear();
      await Promise.all(hs.map((p) => p.then((x) => x.close()).catch(() => undefined)));
    },
  };
  return source;
}

function describeList(names: string[]): string {
  if (names.length === 1) return names[0]!;
  if (names.length <= 4) return names.join(', ');
  return `${names[0]}–${names[names.length - 1]} (${names.length} files)`;
}

/**
 * For the pruned-dir error: the first-found block whose parent is unknown,
 * and its height from the BIP34 height in its coinbase when it carries one.
 */
async function lowestHeightHint(
  tree: HeaderTree,
  files: BlkFile[],
  fileOf: Uint16Array,
  posOf: Float64Array,
  lenOf: Uint32Array,
  key: Uint8Array | undefined,
  network: Network,
): Promise<{ hash: string; where: string; height: number | undefined }> {
  let root = 0;
  for (let i = 0; i < tree.size; i++) {
    if (tree.parentOf(i) === -1) {
      root = i;
      break;
    }
  }
  const f = files[fileOf[root]!]!;
  const out = { hash: tree.hashHex(root), where: `${f.name} offset ${posOf[root]! - 8}`, height: undefined as number | undefined };
  try {
    const fh = await open(f.path, 'r');
    try {
      const buf = Buffer.alloc(lenOf[root]!);
      await fh.read(buf, 0, buf.length, posOf[root]!);
      xorObfuscate(buf, posOf[root]!, key);
      const block = parseBlock(buf, { auxpow: network.auxpow });
      const script = block.txs[0]?.inputs[0]?.script;
      if (block.header.version < 2 || !script || script.length < 2) return out;
      const n = script[0]!;
      if (n >= 0x51 && n <= 0x60) {
        out.height = n - 0x50; // OP_1..OP_16
        return out;
      }
      if (n < 1 || n > 8 || script.length < 1 + n) return out;
      let h = 0;
      for (let k = n; k >= 1; k--) h = h * 256 + script[k]!;
      if (h > 0) out.height = h;
    } finally {
      await fh.close();
    }
  } catch {
    // the hint is best effort
  }
  return out;
}
