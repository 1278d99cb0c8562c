/** Which network an RPC node serves (its genesis hash), and whether it holds the chain from genesis. */
import { NETWORKS, type Network, type NetworkName } from '../../chain/networks.js';
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

/**
 * The node's network: `expected` checked against the node's genesis block, or the one known
 * network with that genesis (a mismatching chain name is a warning). A pruned node is an error.
 */
export async function detectNetwork(client: RpcClient, expected: Network | undefined): Promise<Network> {
  const { where } = client;
  const info = await client.call<ChainInfo>('getblockchaininfo');
  const genesis = await client.call<string>('getblockhash', [0]);
  let network: Network;
  if (expected) {
    network = expected;
    if (genesis !== network.genesis) {
      throw new Error(`RPC ${where}: the node's genesis block ${genesis} (chain "${info.chain}") is not the ${network.name} genesis ${network.genesis}`);
    }
  } else {
    const candidates = Object.values(NETWORKS).filter((n) => n.genesis === genesis);
    if (candidates.length === 0) {
      throw new Error(`RPC ${where}: the node's chain "${info.chain}" (genesis ${genesis}) is none of the known networks`);
    }
    if (candidates.length > 1) {
      throw new Error(
        `RPC ${where}: chain "${info.chain}" with genesis ${genesis} could be ${candidates.map((n) => n.name).join(' or ')}; pass --network`,
      );
    }
    network = candidates[0]!;
    if (CHAIN_NAMES[network.name] !== info.chain) {
      client.warnings.push(`RPC ${where}: node reports chain "${info.chain}", genesis says ${network.name}`);
    }
  }
  if (info.pruned && (info.pruneheight ?? 0) > 0) {
    throw new Error(
      `RPC ${where}: the node is pruned: blocks at heights 0–${info.pruneheight! - 1} are deleted, so the chain from genesis is not available`,
    );
  }
  return network;
}
