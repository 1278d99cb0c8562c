/**
 * Checks of the values the RPC source takes from a node's answers before it uses them: a height
 * the node reports sizes buffers and bounds loops, so a value out of range fails here naming the
 * URL, the method and the field instead of deep inside the build.
 */
import type { RpcClient } from './client.js';

/** Highest height accepted from a node (block heights are signed 32-bit in Bitcoin Core). */
export const MAX_HEIGHT = 2 ** 31 - 1;

/** A value as shown in an error: numbers as JSON writes them, other values as JSON (shortened), absent as "missing". */
function shown(value: unknown): string {
  if (value === undefined) return 'missing';
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

function reject(where: string, method: string, field: string, value: unknown, what: string): never {
  throw new Error(`RPC ${where}: ${method}: ${field} is ${shown(value)}, ${what}`);
}

/** `value` as a block height (0 … 2^31-1). */
export function heightIn(where: string, method: string, field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > MAX_HEIGHT) {
    reject(where, method, field, value, 'not a height (0 … 2^31-1)');
  }
  return value;
}

/** `value` as a count (0 … 2^53-1: exact in a JavaScript number). */
export function countIn(where: string, method: string, field: string, value: unknown): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 0) reject(where, method, field, value, 'not a count (0 … 2^53-1)');
  return value;
}

/** `value` as a block hash in display order (64 hex digits), lower-cased. */
export function hashIn(where: string, method: string, field: string, value: unknown): string {
  if (typeof value !== 'string' || !/^[0-9a-fA-F]{64}$/.test(value)) reject(where, method, field, value, 'not a block hash (64 hex digits)');
  return value.toLowerCase();
}

/** The node's hash of the main-chain block at `height` (getblockhash), checked to be a hash. */
export async function blockHashAt(client: RpcClient, height: number): Promise<string> {
  return hashIn(client.where, 'getblockhash', 'result', await client.call('getblockhash', [height]));
}
