import { parentPort, workerData } from 'node:worker_threads';
import { scriptAddress } from '../chain/address.js';
import { txMerkleLevels } from '../chain/merkle.js';
import { getNetwork, isNamecoin, type Network } from '../chain/networks.js';
import { parseValidBlock, type Invalid } from '../chain/validate.js';

/** A fault a test makes a scan thread have at a height: an uncaught error, or the thread exiting. */
export interface ScanFault {
  height: number;
  how: 'throw' | 'exit';
}

/** What a scan thread is started with (scan-pool.ts). */
export interface ScanWorkerData {
  kind: 'snapshot-scan';
  network: string;
  fault?: ScanFault;
}

/** A block to parse, hash and validate: its bytes (moved to the thread and back) and its height. */
export type ScanRequest = { id: number; raw: Uint8Array; height: number } | 'close';

/**
 * The answer: the block's bytes back, and either why it is invalid or its txids (32 bytes each,
 * in order), followed on Namecoin networks by the upper levels of its merkle tree (the indexer
 * takes name operations' branches from them), when its txids are unique.
 */
export interface ScanReply {
  id: number;
  raw: Uint8Array;
  invalid?: Invalid;
  hashes?: Uint8Array;
  /** Whether `hashes` holds the whole tree. */
  levels?: boolean;
  /** The address each output pays (null: none), every output of the block in order: the indexer's most costly part that needs no index. */
  addresses?: (string | null)[];
}

/** The worker's half of a block: parsed, hashed and validated (src/chain/validate.ts), as the main thread's scan does it. */
export function scanBlock(id: number, raw: Uint8Array, height: number, net: Network): ScanReply {
  const buf = Buffer.from(raw.buffer, raw.byteOffset, raw.byteLength);
  const { block, invalid } = parseValidBlock(buf, net, height);
  if (!block) return { id, raw, invalid };
  const tree = isNamecoin(net) ? txMerkleLevels(block.txs) : undefined;
  const levels = tree ?? [block.txs.map((t) => t.hash)];
  let n = 0;
  for (const level of levels) n += level.length;
  const hashes = Buffer.allocUnsafeSlow(32 * n);
  let at = 0;
  for (const level of levels) for (const h of level) at += h.copy(hashes, at);
  const addresses: (string | null)[] = [];
  for (const tx of block.txs) for (const out of tx.outputs) addresses.push(scriptAddress(out.script, net) ?? null);
  return { id, raw, hashes, levels: tree !== undefined, addresses };
}

if (parentPort && (workerData as ScanWorkerData | undefined)?.kind === 'snapshot-scan') {
  const port = parentPort;
  const { network, fault } = workerData as ScanWorkerData;
  const net = getNetwork(network);
  port.on('message', (m: ScanRequest) => {
    if (m === 'close') return port.close();
    if (fault?.height === m.height) {
      if (fault.how === 'exit') process.exit(3);
      throw new Error(`injected fault at height ${m.height}`);
    }
    const reply = scanBlock(m.id, m.raw, m.height, net);
    const moved: ArrayBuffer[] = [reply.raw.buffer as ArrayBuffer];
    if (reply.hashes) moved.push(reply.hashes.buffer as ArrayBuffer);
    port.postMessage(reply, moved);
  });
}
