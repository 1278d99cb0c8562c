import type { NamesListDoc } from '../contract/documents.js';
import { toPlainJson } from './json.js';

/** One name in `names.json`: its text (decoded like name documents), canonical path, last operation. */
export interface NameListEntry {
  name: string;
  /** encodeNamePath of the name: `/name/<path>.json` is its document. */
  path: string;
  /** Height of its last operation. */
  height: number;
  expiresIn: number;
}

/**
 * `names.json` (Namecoin networks): every name of the snapshot, sorted by path —
 * `{"height", "count", "names": [{"name", "path", "height", "expires_in"}]}`.
 */
export function renderNameList(height: number, entries: readonly NameListEntry[], pretty = false): string {
  const sorted = [...entries].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  const doc: NamesListDoc = {
    height,
    count: sorted.length,
    names: sorted.map((e) => ({ name: e.name, path: e.path, height: e.height, expires_in: e.expiresIn })),
  };
  return toPlainJson(doc, pretty);
}
