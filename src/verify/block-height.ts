/** Checks of `block-height/<h>.json`: one per main-chain height, each naming the block the walk from the tip found there. */
import { blockHeightPath, parseHeight } from '../contract/layout.js';
import { isObj, shown } from './values.js';
import { type Verifier } from './verifier.js';

export function checkBlockHeight(ver: Verifier, rel: string, spelled: string, doc: unknown): void {
  const height = parseHeight(spelled);
  if (height === undefined || blockHeightPath(height) !== rel) {
    ver.problem(rel, 'is not named by a height (decimal, no leading zero)');
    return;
  }
  if (!ver.site) return;
  if (height > ver.site.height) {
    ver.problem(rel, `is above the snapshot height ${ver.site.height}`);
    return;
  }
  (ver.heightDocs ??= new Uint8Array(ver.site.height + 1))[height] = 1;
  if (!isObj(doc)) return; // shape problems are reported by the schema check (shape.ts)
  if (doc.height !== height) ver.problem(rel, `height is ${shown(doc.height)}, not the height it is named by`);
  const want = ver.chain?.hashAt(height);
  if (want !== undefined && doc.hash !== want) ver.problem(rel, `hash is ${String(doc.hash)}, but the main-chain block at height ${height} is ${want}`);
}

/** After the manifest: every height 0..tip has its document. */
export function missingHeights(ver: Verifier): void {
  if (!ver.site) return;
  if (!ver.heightDocs) {
    ver.problem(blockHeightPath(0), `is missing, and so are the other block-height documents of heights 0–${ver.site.height} (a tree made before they existed: build it again)`);
    return;
  }
  for (let h = 0; h <= ver.site.height; h++) {
    if (ver.heightDocs[h] !== 1) ver.missingProblem(blockHeightPath(h), `is missing: every height 0–${ver.site.height} has a block-height document`);
  }
}
