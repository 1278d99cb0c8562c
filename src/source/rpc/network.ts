/** Which network an RPC node serves (its genesis hash), and whether it holds the chain from genesis. */
import { NETWORKS, type Network, type NetworkName } from '../../chain/networks.js';
import { blockHashAt, hashIn, heightIn } from './answers.js';
import type { RpcClient } from './client.js';

/** Node's chain name (getblockchaininfo `chain`) per network. */
const CHAIN_NAMES: Record<NetworkName, string> = {
  bitcoin: 'main',
  'bitcoin-testnet': 'test',
  'bitcoin-testnet4': 'testnet4',
  'bitcoin-signet': 'signet',
  'bitcoin-regtest': 'regtest',
  namecoin: 'main',
  'namecoin-testnet': 'test',
  'namecoin-regtest': 'regtest',
};

export interface ChainInfo {
  chain: string;
  blocks: number;
  bestblockhash: string;
  pruned?: boolean;
  pruneheight?: number;
}

/** The node's getblockchaininfo, its tip height, hash and prune height checked (an error names the field). */
export async function chainInfo(client: RpcClient): Promise<ChainInfo> {
  const method = 'getblockchaininfo';
  const info = await client.call<Record<string, unknown> | null>(method);
  if (typeof info !== 'object' || info === null || Array.isArray(info)) {
    throw new Error(`RPC ${client.where}: ${method}: the result is ${JSON.stringify(info)}, not an object`);
  }
  const pruned = info.pruned === true;
  return {
    chain: String(info.chain),
    blocks: heightIn(client.where, method, 'blocks', info.blocks),
    bestblockhash: hashIn(client.where, method, 'bestblockhash', info.bestblockhash),
    pruned,
    pruneheight: pruned ? heightIn(client.where, method, 'pruneheight', info.pruneheight) : undefined,
  };
}

/**
 * The node's network: `expected` checked against the node's genesis block, or the one known
 * network with that genesis (a mismatching chain name is a warning). A pruned node is an error.
 */
export async function detectNetwork(client: RpcClient, expected: Network | undefined): Promise<Network> {
  const { where } = client;
  const info = await chainInfo(client);
  const genesis = await blockHashAt(client, 0);
  let network: Network;
  if (expected) {
    network = expected;
    if (genesis !== network.genesis) {
      throw new Error(`RPC ${where}: getblockhash 0: the node's genesis block ${genesis} (chain "${info.chain}") is not the ${network.name} genesis ${network.genesis}`);
    }
  } else {
    const candidates = Object.values(NETWORKS).filter((n) => n.genesis === genesis);
    if (candidates.length === 0) {
      throw new Error(`RPC ${where}: getblockhash 0: the node's chain "${info.chain}" (genesis ${genesis}) is none of the known networks`);
    }
    if (candidates.length > 1) {
      throw new Error(
        `RPC ${where}: getblockhash 0: chain "${info.chain}" with genesis ${genesis} could be ${candidates.map((n) => n.name).join(' or ')}; pass --network`,
      );
    }
    network = candidates[0]!;
    if (CHAIN_NAMES[network.name] !== info.chain) {
      client.warnings.push(`RPC ${where}: node reports chain "${info.chain}", genesis says ${network.name}`);
    }
  }
  if (info.pruned && (info.pruneheight ?? 0) > 0) {
    throw new Error(
      `RPC ${where}: getblockchaininfo: the node is pruned: blocks at heights 0–${info.pruneheight! - 1} are deleted, so the chain from genesis is not available`,
    );
  }
  return network;
}
