// npm run bench:parse — µs per transaction to parse the largest real blocks and
// compute every txid: our parser vs bitcoinjs-lib's Block.fromBuffer + getId.
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { Block as BjsBlock } from 'bitcoinjs-lib';
import { parseBlock, type Block } from '../src/chain/block.js';
import { NETWORKS } from '../src/chain/networks.js';
import { validateBlock } from '../src/chain/validate.js';

const CHAIN = join(import.meta.dirname, '..', '..', 'shared', 'chaindata');

function framed(buf: Buffer): Buffer {
  return buf.subarray(8, 8 + buf.readUInt32LE(4));
}

const HEIGHTS: Record<string, number> = {};
const inputs: [string, Buffer][] = [
  ['block413567.raw (1,557 txs, legacy)', () => readFileSync(join(CHAIN, 'bitcoin-core', 'block413567.raw')), 413567],
  ['block2019Jan.blk (2,898 txs, 930 segwit)', () => framed(readFileSync(join(CHAIN, 'hadoopcryptoledger', 'block2019Jan.blk'))), 556977],
  ['bitcoin 951658 (374 txs, taproot era)', () => Buffer.from(JSON.parse(readFileSync(join(CHAIN, 'electrumx', 'blocks', 'bitcoin_mainnet_951658.json'), 'utf8')).block, 'hex'), 951658],
].flatMap(([name, load, height]) => {
  HEIGHTS[name as string] = height as number;
  return existsSync(CHAIN) ? [[name as string, (load as () => Buffer)()] as [string, Buffer]] : [];
});

if (inputs.length === 0) {
  console.log(`no chain data at ${CHAIN}: nothing to measure`);
  process.exit(0);
}

function time(fn: () => number, minMs = 1500): number {
  for (let i = 0; i < 3; i++) fn(); // warm-up
  let txs = 0;
  const start = performance.now();
  while (performance.now() - start < minMs) txs += fn();
  return ((performance.now() - start) * 1000) / txs;
}

let oursTotal = 0;
let bjsTotal = 0;
for (const [name, raw] of inputs) {
  const ours = time(() => {
    const b = parseBlock(raw, { auxpow: false });
    let n = 0;
    for (const tx of b.txs) n += tx.txid.length > 0 ? 1 : 0;
    return n;
  });
  const bjs = time(() => {
    const b = BjsBlock.fromBuffer(raw);
    let n = 0;
    for (const tx of b.transactions!) n += tx.getId().length > 0 ? 1 : 0;
    return n;
  });
  oursTotal += ours;
  bjsTotal += bjs;
  console.log(`${name.padEnd(42)} ours ${ours.toFixed(2).padStart(6)} µs/tx   bitcoinjs-lib ${bjs.toFixed(2).padStart(6)} µs/tx   ${(bjs / ours).toFixed(1)}× faster`);
}
console.log(`overall: ${(bjsTotal / oursTotal).toFixed(1)}× faster than bitcoinjs-lib (target ≥ 3×)`);

// Block validation (src/chain/validate.ts): what it adds to the parse. Large blocks: µs per tx
// (merkle root, witness commitment); the 600 small blocks of nbitcoin: µs per block (mostly PoW).
for (const [name, raw] of inputs) {
  const b = parseBlock(raw, { auxpow: false });
  const us = time(() => {
    if (validateBlock(b, NETWORKS.bitcoin, HEIGHTS[name])) throw new Error(`${name} is invalid`);
    return b.txs.length;
  });
  console.log(`validate ${name.padEnd(33)} ${us.toFixed(2).padStart(6)} µs/tx`);
}
{
  const buf = readFileSync(join(CHAIN, 'nbitcoin', 'blk00000.dat'));
  const blocks: Block[] = [];
  for (let pos = 0; pos + 8 <= buf.length; pos += 8 + buf.readUInt32LE(pos + 4)) blocks.push(parseBlock(buf.subarray(pos + 8, pos + 8 + buf.readUInt32LE(pos + 4)), { auxpow: false }));
  const us = time(() => {
    blocks.forEach((b, h) => {
      if (validateBlock(b, NETWORKS.bitcoin, h)) throw new Error(`block ${h} is invalid`);
    });
    return blocks.length;
  });
  console.log(`validate nbitcoin 0–299 (1 tx per block mostly)  ${us.toFixed(2).padStart(6)} µs/block`);
}
