/** The names list (`names.json`) in the browsing UI (no DOM): examples and the index filter. */

/** One entry of names.json (see docs/api.md, "Name list"). */
export interface NameEntry {
  name: string;
  path: string;
  height: number;
  expires_in: number;
}

export interface NameList {
  height: number;
  count: number;
  names: NameEntry[];
}

const PLAIN = /^[\x21-\x7e]{1,40}$/;

/**
 * Up to `n` names of the snapshot to offer as search examples: live (not expired), short
 * printable ASCII ones first, those in a namespace (`d/…`, `id/…`) before others, most recently
 * updated first. Real names of the data, never made up.
 */
export function exampleNames(list: readonly NameEntry[], n = 3): NameEntry[] {
  const score = (e: NameEntry) => (e.expires_in > 0 ? 0 : 4) + (PLAIN.test(e.name) ? 0 : 2) + (/^[a-z]+\/[^/]/.test(e.name) ? 0 : 1);
  return list
    .map((e, i) => ({ e, i, s: score(e) }))
    .sort((a, b) => a.s - b.s || b.e.height - a.e.height || a.i - b.i)
    .slice(0, n)
    .map((x) => x.e);
}

/** Entries whose name contains `filter` (case-insensitive); all when the filter is empty. */
export function filterNames(list: readonly NameEntry[], filter: string): NameEntry[] {
  const f = filter.toLowerCase();
  return f === '' ? [...list] : list.filter((e) => e.name.toLowerCase().includes(f));
}
