import type { BlockHeightDoc } from '../contract/documents.js';
import { toPlainJson } from './json.js';

/** `block-height/<h>.json`: `{"height", "hash"}` of the main-chain block at `height`. */
export function renderBlockHeight(height: number, hash: string, pretty = false): string {
  const doc: BlockHeightDoc = { height, hash };
  return toPlainJson(doc, pretty);
}
