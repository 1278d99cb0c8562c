import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { decodeAddress } from '../chain/address.js';
import { parseBlock } from '../chain/block.js';
import { toDisplayHex } from '../chain/hash.js';
import { isNamecoin, type Network } from '../chain/networks.js';
import { AddressSpill, type AddressOutput } from '../index/address-spill.js';
import { BlocksSpill } from '../index/blocks-spill.js';
import { scanChain, type ScanResult } from '../index/scan.js';
import { openStore, outpointKey, type NameOpRecord, type Store } from '../index/store.js';
import { renderAddress, renderAddressCapped } from '../render/address.js';
import { renderBlock } from '../render/block.js';
import { toJson, type JsonValue } from '../render/json.js';
import { decodeNameBytes, renderName, type NameRecord } from '../render/name.js';
import { renderStats } from '../render/stats.js';
import { renderTx, type Spender } from '../render/tx.js';
import type { ChainSource } from '../source/types.js';
import { HOSTS, hostFiles, type HostName } from './hosts/index.js';
import {
  ALL_NAME_VARIANTS,
  MANIFEST_PATH,
  SITE_INFO_PATH,
  STATS_PATH,
  addressPath,
  blockPath,
  encodeNamePath,
  namePathEncoded,
  txPath,
  type SiteInfo,
} from './layout.js';
import { Progress } from './progress.js';
import { buildPaths, publish, recoverInterrupted } from './publish.js';
import { SiteWriter } from './writer.js';

export interface BuildOptions {
  source: ChainSource;
  /** Snapshot height; the source's tip when undefined. */
  height?: number;
  outDir: string;
  pretty?: boolean;
  /** Addresses with more relevant outputs get the original's error document (0 = no cap). */
  maxAddressTxouts?: number;
  progress?: Progress;
  /** Hosts whose glue files the build writes (default: all). */
  hosts?: readonly HostName[];
  /** Called after the tree is written and before it is published (tests use it to kill a build). */
  beforePublish?: () => void | Promise<void>;
}

export interface BuildReport {
  network: string;
  height: number;
  tip: string;
  blocks: { main: number; side: number; orphan: number };
  txs: number;
  files: number;
  bytes: number;
  names: number;
  addresses: number;
  cappedAddresses: number;
  nonUtf8Names: number;
  duplicateTxids: string[];
  warnings: string[];
  stageSeconds: [string, number][];
}

interface Ctx {
  net: Network;
  store: Store;
  writer: SiteWriter;
  blocks: BlocksSpill;
  pretty: boolean;
  progress: Progress;
}

function spendersOf(store: Store, txHash: Buffer, outputs: number): (Spender | undefined)[] {
  const res: (Spender | undefined)[] = new Array(outputs);
  for (let i = 0; i < outputs; i++) {
    const v = store.spent.get(outpointKey(txHash, i));
    res[i] = v ? { hash: toDisplayHex(v.subarray(0, 32)), n: v.readUInt32LE(32) } : undefined;
  }
  return res;
}

/** Pass 2: every main-chain tx and block, then the blocks off the main chain. */
async function writeTxsAndBlocks(ctx: Ctx, scan: ScanResult): Promise<void> {
  const { net, store, writer, pretty } = ctx;
  ctx.progress.begin('txs and blocks');
  const total = scan.main.length;
  for (let i = 0; i < total; i++) {
    const ref = scan.main[i]!;
    const block = parseBlock(ctx.blocks.read(ref), { auxpow: net.auxpow });
    const placement = { block: ref.hash, height: ref.height, time: block.header.time };
    const spenders = block.txs.map((tx) => spendersOf(store, tx.hash, tx.outputs.length));
    block.txs.forEach((tx, ti) => {
      writer.write(txPath(tx.txid, 'json'), renderTx(tx, net, spenders[ti]!, placement, pretty));
      writer.write(txPath(tx.txid, 'bin'), tx.raw);
      writer.write(txPath(tx.txid, 'hex'), tx.raw.toString('hex'));
    });
    writeBlockFiles(writer, ref.hash, renderBlock(block, net, spenders, scan.main[i + 1]?.hash, pretty), block.raw);
    ctx.progress.update(i + 1, total, 'blocks');
    await writer.backpressure();
  }
  const mainHashes = new Set(scan.main.map((m) => m.hash));
  for (const ref of scan.offChain) {
    if (mainHashes.has(ref.hash)) continue;
    const block = parseBlock(ctx.blocks.read(ref), { auxpow: net.auxpow });
    const spenders = block.txs.map((tx) => spendersOf(store, tx.hash, tx.outputs.length));
    writeBlockFiles(writer, ref.hash, renderBlock(block, net, spenders, undefined, pretty), block.raw);
  }
}

function writeBlockFiles(writer: SiteWriter, hash: string, json: string, raw: Buffer): void {
  writer.write(blockPath(hash, 'json'), json);
  writer.write(blockPath(hash, 'bin'), raw);
  writer.write(blockPath(hash, 'hex'), raw.toString('hex'));
}

/** Pass 3: one bucket of addresses at a time; documents assembled from the /tx files just written. */
async function writeAddresses(ctx: Ctx, spill: AddressSpill, cap: number): Promise<{ count: number; capped: string[] }> {
  const { writer, pretty } = ctx;
  await writer.flush(); // address documents embed the /tx documents, read back from disk
  let count = 0;
  const capped: string[] = [];
  ctx.progress.begin('addresses');
  for (let b = 0; b < spill.buckets; b++) {
    for (const [address, outputs] of spill.readBucket(b)) {
      count++;
      if (cap > 0 && outputs.length > cap) {
        capped.push(address);
        writer.write(addressPath(address), renderAddressCapped(outputs.length, pretty));
        continue;
      }
      writer.write(addressPath(address), addressDocument(ctx, address, outputs));
    }
    ctx.progress.update(b + 1, spill.buckets, 'buckets');
    await writer.backpressure();
  }
  capped.sort();
  return { count, capped };
}

function addressDocument(ctx: Ctx, address: string, outputs: readonly AddressOutput[]): string {
  const decoded = decodeAddress(address, ctx.net);
  if (!decoded) throw new Error(`internal: output address ${address} does not decode on ${ctx.net.name}`);
  const texts = new Map<string, string>();
  const txText = (txid: string) => {
    let t = texts.get(txid);
    if (t === undefined) texts.set(txid, (t = ctx.writer.readText(txPath(txid, 'json'))));
    return t;
  };
  const receivers = new Set<string>();
  const spenders = new Set<string>();
  let coinIn = 0n;
  let coinOut = 0n;
  const unspent: JsonValue[] = [];
  for (const o of outputs) {
    const txid = toDisplayHex(o.txHash);
    txText(txid);
    receivers.add(txid);
    coinIn += o.value;
    const spent = ctx.store.spent.get(outpointKey(o.txHash, o.vout));
    if (spent) {
      const spender = toDisplayHex(spent.subarray(0, 32));
      spenders.add(spender);
      coinOut += o.value;
      txText(spender);
    } else {
      const out = (JSON.parse(txText(txid)) as { out: Record<string, JsonValue>[] }).out[o.vout]!;
      unspent.push({ tx: { hash: txid, n: o.vout }, ...out });
    }
  }
  return renderAddress(
    { address, hash160: decoded.hash160, txInCount: receivers.size, txOutCount: spenders.size, coinIn, coinOut, unspent, transactions: texts },
    ctx.pretty,
  );
}

/** Pass 4: every name with its 64 query variants. Returns [names, non-UTF-8 records]. */
async function writeNames(ctx: Ctx, height: number): Promise<[number, number]> {
  const depth = ctx.net.nameExpirationDepth!(height);
  let names = 0;
  let nonUtf8 = 0;
  let current: Buffer | undefined;
  let history: NameRecord[] = [];
  const flush = () => {
    if (!current) return;
    names++;
    const enc = encodeNamePath(current);
    for (const v of ALL_NAME_VARIANTS) ctx.writer.write(namePathEncoded(enc, v), renderName(history, v, ctx.pretty));
  };
  let sinceYield = 0;
  ctx.progress.begin('names');
  for (const { value: rec } of ctx.store.names.getRange() as Iterable<{ value: NameOpRecord }>) {
    const nameBytes = Buffer.from(rec.name);
    if (!current || !current.equals(nameBytes)) {
      flush();
      current = nameBytes;
      history = [];
      if (++sinceYield % 64 === 0) await ctx.writer.backpressure();
    }
    const name = decodeNameBytes(nameBytes);
    const value = decodeNameBytes(rec.value);
    if (!name.utf8 || !value.utf8) nonUtf8++;
    history.push({
      name: name.text,
      value: value.text,
      txid: rec.txid,
      address: rec.address,
      expiresIn: rec.height + depth - height,
      block: rec.block,
      height: rec.height,
      txIndex: rec.txIndex,
      rawtx: rec.rawtx,
      mrklBranch: rec.mrklBranch,
    });
  }
  flush();
  return [names, nonUtf8];
}

/** `_site.json`, the generic error documents and every host's glue (router bundles, headers, nginx.conf). */
async function writeSiteFiles(ctx: Ctx, info: SiteInfo, outDir: string, hosts: readonly HostName[]): Promise<void> {
  ctx.writer.write(SITE_INFO_PATH, toJson(info as unknown as JsonValue));
  for (const [rel, content] of await hostFiles(outDir, info, { hosts })) ctx.writer.write(rel, content);
}

/**
 * Builds the whole site for `source` at `height` into a staging directory
 * beside `outDir`, then swaps it in. A failure or kill leaves `outDir` as it was.
 */
export async function buildSnapshot(opts: BuildOptions): Promise<BuildReport> {
  const { source, outDir } = opts;
  const net = source.network;
  const progress = opts.progress ?? new Progress(undefined);
  recoverInterrupted(outDir);
  const paths = buildPaths(outDir);
  rmSync(paths.staging, { recursive: true, force: true });
  rmSync(paths.work, { recursive: true, force: true });
  const store = openStore(join(paths.work, 'store'));
  const blocks = new BlocksSpill(join(paths.work, 'blocks.spill'));
  const spill = new AddressSpill(paths.work);
  let writer: SiteWriter | undefined;
  try {
    const tip = await source.tip();
    const height = opts.height ?? tip.height;
    if (height > tip.height) throw new Error(`--height ${height} is above the tip of ${source.description} (height ${tip.height})`);
    if (height < 0) throw new Error(`--height ${height} is negative`);

    progress.begin('scan');
    const scan = await scanChain({ source, height, store, blocks, addresses: spill, onBlock: (h) => progress.update(h + 1, height + 1, 'blocks') });
    spill.finish();

    writer = new SiteWriter(paths.staging, paths.work);
    const ctx: Ctx = { net, store, writer, blocks, pretty: opts.pretty ?? false, progress };
    await writeTxsAndBlocks(ctx, scan);
    const addresses = await writeAddresses(ctx, spill, opts.maxAddressTxouts ?? 10000);
    const [names, nonUtf8Names] = isNamecoin(net) ? await writeNames(ctx, height) : [0, 0];
    const tipHash = scan.main[scan.main.length - 1]!.hash;
    writer.write(STATS_PATH, renderStats(scan.counters, addresses.count, isNamecoin(net), ctx.pretty));
    await writeSiteFiles(ctx, { network: net.name, height, tip: tipHash, cappedAddresses: addresses.capped }, outDir, opts.hosts ?? HOSTS);
    progress.begin('manifest');
    const written = await writer.writeManifest(MANIFEST_PATH);
    progress.end();

    await opts.beforePublish?.();
    publish(paths.staging, outDir);
    const c = scan.counters;
    return {
      network: net.name,
      height,
      tip: tipHash,
      blocks: { main: c.mainBlocks, side: c.sideBlocks, orphan: c.orphanBlocks },
      txs: c.txs,
      files: written.files,
      bytes: written.bytes,
      names,
      addresses: addresses.count,
      cappedAddresses: addresses.capped.length,
      nonUtf8Names,
      duplicateTxids: scan.duplicateTxids,
      warnings: [...source.warnings],
      stageSeconds: progress.stageTimes,
    };
  } finally {
    await writer?.close();
    blocks.close();
    await store.close();
    rmSync(paths.work, { recursive: true, force: true });
    rmSync(paths.staging, { recursive: true, force: true });
  }
}
