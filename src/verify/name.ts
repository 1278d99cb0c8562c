/** Checks of `name/<enc>.json` and the `v/<key>/name/<enc>.json` variants. */
import { ALL_NAME_VARIANTS, baseNamePath, isCanonicalNamePath, namePathEncoded, variantFromKey, variantKey } from '../contract/layout.js';
import { type Verifier } from './verifier.js';

export function checkName(ver: Verifier, rel: string, enc: string): void {
  ver.counts.names++;
  if (!isCanonicalNamePath(enc)) ver.problem(rel, 'is not a canonical name path');
  for (const v of ALL_NAME_VARIANTS) {
    const p = namePathEncoded(enc, v);
    if (p !== rel && !ver.exists(p)) ver.missingProblem(p, `is missing (variant of ${rel})`);
  }
}

export function checkNameVariant(ver: Verifier, rel: string, rest: string): void {
  const m = /^([^/]+)\/name\/(.+)\.json$/.exec(rest);
  const v = m ? variantFromKey(m[1]!) : undefined;
  if (!m || !v || variantKey(v) === '') {
    ver.problem(rel, 'is not v/<variant>/name/<name>.json');
    return;
  }
  if (!ver.exists(baseNamePath(m[2]!))) ver.problem(rel, `has no base document ${baseNamePath(m[2]!)}`);
}
