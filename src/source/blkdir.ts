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
import { open, readdir, readFile, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { parseBlock } from '../chain/block.js';
import { toDisplayHex } from '../chain/hash.js';
import { NETWORKS, type Network } from '../chain/networks.js';
import { BodyReader, blkFiles } from './blkdir/bodies.js';
import { HeaderIndex } from './blkdir/headers.js';
import { FileWindow } from './blkdir/records.js';
import { KIND_MAIN, KIND_SIDE, treeChoice, type HeaderTree } from './chain-select.js';
import { checkedSource } from './request-checks.js';
import type { BlockPlace, ChainSource, ChainTip, OffChainBlock, SourceBlock } from './types.js';

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

const BLK_RE = /^blk(\d+)\.dat$/;

interface BlkFile {
  name: string;
  num: number;
  path: string;
  size: number;
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
  const warnings: string[] = [];

  let entries: string[];
  try {
    entries = await readdir(dir);
  } catch (e) {
    throw new Error(`blocks dir ${dir}: cannot read it (${(e as Error).message})`, { cause: e });
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

  const xorPath = join(dir, 'xor.dat');
  let xorRaw: Buffer | undefined;
  try {
    xorRaw = await readFile(xorPath);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== 'ENOENT') throw new Error(`blocks dir ${dir}: cannot read ${xorPath} (${(e as Error).message})`, { cause: e });
  }
  if (xorRaw && xorRaw.length !== 8) throw new Error(`blocks dir ${dir}: ${xorPath} has ${xorRaw.length} bytes, expected 8 (Bitcoin Core's blk file obfuscation key): damaged?`);
  const key = xorRaw?.some((b) => b !== 0) ? new Uint8Array(xorRaw) : undefined;

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
  const index = new HeaderIndex(network, files.map((f) => f.name), warnings, maxBlockSize);
  const { tree, rejected } = index;
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
      const r = new FileWindow(fh, f.size, key);
      await index.addFile(fi, r, (from, to, why) => skipped(f, from, to, why));
      stats.bytesRead += r.bytesRead;
    } finally {
      await fh.close();
    }
    opts.onProgress?.({ file: f.name, files: files.length, done: fi + 1, headers: tree.size });
  }
  stats.headers = tree.size;
  stats.records = index.records;
  stats.duplicates = index.duplicates;

  let sel = index.select(); // chosen again without blocks found invalid (choice.invalidate)
  stats.ms = performance.now() - t0;
  stats.indexBytes = index.byteSize + sel.height.byteLength + sel.kind.byteLength + sel.main.byteLength;

  const describe = `blocks dir ${dir}`;
  const bodyIndex = {
    fileNames: index.fileNames,
    fileOf: index.fileOf,
    posOf: index.posOf,
    lenOf: index.lenOf,
    hash: (i: number) => tree.hash(i),
    hashHex: (i: number) => tree.hashHex(i),
  };
  const bodies = new BodyReader(blkFiles(files.map((f) => f.path)), bodyIndex, key, { blocks: readAhead, bytes: readAheadBytes });

  if (sel.genesis === -1) {
    if (tree.size === 0) {
      await bodies.close();
      const why = await noMagicReason(files, entries, network, xorPath, xorRaw);
      throw new Error(`${describe}: no blocks with ${network.name} magic ${network.magic} in ${files.length} blk file(s): ${why}`);
    }
    let msg = `${describe}: the ${network.name} genesis block ${network.genesis} is not in the blk files`;
    if (missingFiles.length > 0) {
      const hint = await lowestHeightHint(tree, bodies, (i) => index.placeOf(i), network);
      await bodies.close();
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
  const placeOf = (i: number): BlockPlace => index.placeOf(i);
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

  const source: BlocksDirSource = {
    network,
    description: describe,
    warnings,
    rejected,
    scanStats: stats,
    files: files.map((f) => f.name),
    tipWork: sel.tipWork,
    tip: async () => ({ height: sel.tipHeight, hash: tree.hashHex(sel.main[sel.tipHeight]!) }),
    choice: treeChoice(tree, () => sel, (s) => (sel = s), (failed) => tree.select(network.genesis, { failed })),
    async *mainChain(height: number, from = 0): AsyncGenerator<SourceBlock> {
      let h = from;
      for await (const { index, raw } of bodies.inOrder(sel.main.subarray(from), height + 1 - from)) {
        yield { height: h++, hash: tree.hashHex(index), raw, own: true, place: placeOf(index) };
      }
    },
    async hashAt(height: number): Promise<string> {
      return tree.hashHex(sel.main[height]!);
    },
    async scanWork(height: number, from: number) {
      let total = 0;
      for (let h = from; h <= Math.min(height, sel.tipHeight); h++) total += index.lenOf[sel.main[h]!]!;
      return { unit: 'bytes' as const, total };
    },
    async *offChain(height: number): AsyncGenerator<OffChainBlock> {
      const side: number[] = [];
      const orphans: number[] = [];
      for (let i = 0; i < tree.size; i++) {
        if (sel.kind[i] === KIND_SIDE) {
          if (sel.forkHeight(i) < height) side.push(i);
        } else if (sel.kind[i] !== KIND_MAIN) orphans.push(i);
      }
      side.sort((a, b) => sel.height[a]! - sel.height[b]! || a - b);
      for await (const { index, raw } of bodies.inOrder(side, side.length)) {
        yield { kind: 'side', hash: tree.hashHex(index), height: sel.height[index]!, raw, place: placeOf(index) };
      }
      for await (const { index, raw } of bodies.inOrder(orphans, orphans.length)) {
        yield { kind: 'orphan', hash: tree.hashHex(index), height: undefined, raw, place: placeOf(index) };
      }
    },
    close: () => bodies.close(),
  };
  // Why the chain found may end below the height asked for.
  const tipNote = (): string =>
    (missingFiles.length > 0 ? `; ${describeList(missingFiles)} missing (pruned or incomplete dir)` : '') +
    (sel.orphanCount > 0 ? `; ${sel.orphanCount} block(s) have an unknown parent: ${firstOrphan}` : '');
  return checkedSource(source, { tipName: 'the tip of the chain found', tipNote });
}

/** The networks whose magic is `magic` (hex), joined by '/'; '' for none. */
function magicOf(magic: string): string {
  return Object.values(NETWORKS)
    .filter((n) => n.magic === magic)
    .map((n) => n.name)
    .join('/');
}

/**
 * Why no record of the network was found, from the first bytes of the blk files: another
 * network's magic, or obfuscation that xor.dat does not undo (missing, all zeros, another key,
 * or a key for files that are not obfuscated). Every blk file starts with a record, so its first
 * 4 bytes are the magic XORed with the first 4 key bytes.
 */
async function noMagicReason(files: BlkFile[], entries: string[], network: Network, xorPath: string, xorRaw: Buffer | undefined): Promise<string> {
  const starts: string[] = [];
  for (const f of files.slice(0, 64)) {
    const buf = Buffer.alloc(4);
    const fh = await open(f.path, 'r');
    try {
      const { bytesRead } = await fh.read(buf, 0, 4, 0);
      // (an empty or pre-allocated, still all-zero file tells nothing)
      if (bytesRead === 4 && buf.some((b) => b !== 0)) starts.push(buf.toString('hex'));
    } finally {
      await fh.close();
    }
  }
  if (starts.length === 0) return 'the blk files are empty or all zeros';
  const raw = starts[0]!;
  const rawNet = magicOf(raw);
  const key = xorRaw?.some((b) => b !== 0) ? xorRaw : undefined;
  if (!key) {
    if (rawNet) return `they start with the ${rawNet} magic ${raw}: wrong --network?`;
    const same = starts.length > 1 && starts.every((s) => s === raw) ? `each of the ${starts.length} starts with ${raw}` : `they start with ${raw}`;
    const rev = entries.some((e) => /^rev\d+\.dat$/.test(e)) ? ', in a blocks dir with rev files' : '';
    const xor = xorRaw
      ? `${xorPath} holds the all-zero key (no obfuscation): not the xor.dat these blk files were written with?`
      : `${xorPath} missing? (Bitcoin Core 28+ obfuscates blk files with the key in blocks/xor.dat: copy it with them)`;
    return `the blk files look obfuscated: ${same}, no known network's magic${rev}: ${xor}`;
  }
  const decoded = Buffer.from(raw, 'hex').map((b, i) => b ^ key[i]!);
  const decodedHex = Buffer.from(decoded).toString('hex');
  const decodedNet = magicOf(decodedHex);
  if (decodedNet) return `they start with the ${decodedNet} magic ${decodedHex}: wrong --network?`;
  if (rawNet) {
    return `the blk files are not obfuscated (they start with the ${rawNet} magic ${raw}), but ${xorPath} holds the key ${key.toString('hex')}: remove it, or put back the xor.dat written with these blk files`;
  }
  return `with the key in ${xorPath} (${key.toString('hex')}) the blk files start with ${decodedHex}, no known network's magic: ${xorPath} damaged, or not the one written with these blk files?`;
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
  bodies: BodyReader,
  placeOf: (i: number) => BlockPlace,
  network: Network,
): Promise<{ hash: string; where: string; height: number | undefined }> {
  let root = 0;
  for (let i = 0; i < tree.size; i++) {
    if (tree.parentOf(i) === -1) {
      root = i;
      break;
    }
  }
  const at = placeOf(root);
  const out = { hash: tree.hashHex(root), where: `${at.file} offset ${at.offset - 8}`, height: undefined as number | undefined };
  try {
    const block = parseBlock(await bodies.read(root), { auxpow: network.auxpow });
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
  } catch {
    // the hint is best effort
  }
  return out;
}
