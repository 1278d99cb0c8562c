/**
 * `--source` parsing: `blocks:<dir>` (a node's blocks directory, `~` expanded)
 * or `rpc:<url>` (a node's JSON-RPC endpoint).
 */
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Network } from '../chain/networks.js';
import { openBlocksDir, type BlocksDirOptions } from './blkdir.js';
import { openRpc, type RpcOptions } from './rpc.js';
import type { ChainSource } from './types.js';

export type { ChainSource, ChainTip, OffChainBlock, SourceBlock } from './types.js';
export { openBlocksDir, type BlocksDirOptions, type BlocksDirSource } from './blkdir.js';
export { openRpc, RpcError, type RpcOptions, type RpcSource } from './rpc.js';

export interface SourceOptions {
  blocks?: BlocksDirOptions;
  rpc?: Omit<RpcOptions, 'network'>;
}

/** Expands a leading `~` or `~/` to the home directory. */
export function expandHome(path: string, home = homedir()): string {
  if (path === '~') return home;
  if (path.startsWith('~/')) return join(home, path.slice(2));
  return path;
}

/**
 * Opens a chain source from its command-line spec. A blocks dir needs the
 * network (magic and genesis); over RPC it is taken from the node when absent.
 */
export async function openSource(spec: string, network: Network | undefined, opts: SourceOptions = {}): Promise<ChainSource> {
  const colon = spec.indexOf(':');
  const kind = colon === -1 ? '' : spec.slice(0, colon);
  const rest = colon === -1 ? '' : spec.slice(colon + 1);
  if (kind === 'blocks') {
    if (!rest) throw new Error('--source blocks:<dir>: the directory is missing');
    if (!network) throw new Error(`--source ${spec}: a blocks dir needs --network (magic and genesis differ per network)`);
    return openBlocksDir(expandHome(rest), network, opts.blocks);
  }
  if (kind === 'rpc') {
    if (!rest) throw new Error('--source rpc:<url>: the URL is missing');
    return openRpc(rest, { ...opts.rpc, ...(network ? { network } : {}) });
  }
  const shown = spec.replace(/\/\/[^@/]*@/, '//***@');
  throw new Error(`--source "${shown}": expected blocks:<dir> (e.g. blocks:~/.namecoin/blocks) or rpc:<url> (e.g. rpc:http://user:pass@127.0.0.1:8336)`);
}
