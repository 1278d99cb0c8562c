/**
 * `snapshot verify`: checks a built tree against its manifest and for internal consistency.
 *
 * Memory stays bounded by the chain's block count, not by its files or transactions: the
 * manifest is streamed, every file is checked on its own and the documents a check needs
 * (spenders, spent outputs, an address's transactions) are read on demand through a small
 * cache. The main chain (walked from the tip over `prev_block`) is held as 32 bytes per block.
 *
 * Phases:
 *  1. `_site.json`, `stats.json`, and the main chain from the tip down to genesis
 *     (`prev_block` back, `next_block` forward, the count equals the height + 1).
 *  2. The manifest, line by line: size and sha256 of the file, JSON parses, its shape against
 *     the published JSON Schema of its kind (shape.ts; `_site.json`'s in phase 1), and the
 *     checks of its kind (tx, block, address, name variants). A block document is
 *     checked field by field against its parsed .bin (header, size, n_tx, mrkl_tree, aux_pow,
 *     each embedded tx by the tx checks), a tx document against its .bin.
 *  3. The tree: no file that the manifest does not list (except `_manifest.json`), and nothing
 *     but regular files and directories (a symlink, even to identical bytes, FIFO or device is
 *     named; files are opened without following symlinks, so none is read through one).
 *  4. Totals: every tx document belongs to a main-chain block, stats and `_site.json` counts.
 */
import { statSync } from 'node:fs';
import { siteAndChain } from './chain.js';
import { manifest, tree } from './manifest.js';
import { loadShapeChecks } from './shape.js';
import { totals } from './stats.js';
import { reportLines, type VerifyOptions, type VerifyReport, Verifier } from './verifier.js';

export type { VerifyOptions, VerifyProblem, VerifyReport } from './verifier.js';

/** Checks a snapshot tree; never throws for problems in the tree (only for an unusable `dir`). */
export async function verifySnapshot(dir: string, opts: VerifyOptions = {}): Promise<VerifyReport> {
  const started = Date.now();
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new Error(`${dir} is not a directory`);
  await loadShapeChecks();
  const v = new Verifier(dir, opts.maxProblems ?? (opts.verbose ? 100_000 : 1000), opts.onProgress);
  siteAndChain(v);
  const { canonical } = await manifest(v);
  await tree(v, canonical);
  totals(v);
  return {
    ok: v.problemCount === 0,
    dir,
    network: v.site?.network,
    height: v.site?.height,
    tip: v.site?.tip,
    counts: v.counts,
    problemCount: v.problemCount,
    problems: v.problems,
    seconds: (Date.now() - started) / 1000,
  };
}

/** The CLI's output: one summary line, then (verbose) the counts and every kept problem. */
export function formatVerifyReport(r: VerifyReport, verbose = false): string {
  const c = r.counts;
  const what = `${c.manifestEntries} files, ${c.mainBlocks} main + ${c.offChainBlocks} off-chain blocks, ${c.txs} txs, ${c.addresses} addresses, ${c.names} names`;
  const details = verbose ? [`  checked ${what}, ${c.bytes} bytes, ${c.jsonFiles} JSON, ${c.links} links, ${c.cappedAddresses} capped addresses; ${c.filesOnDisk} files on disk; ${r.seconds.toFixed(2)}s`] : [];
  return reportLines(r, what, verbose, details);
}

