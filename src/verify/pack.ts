/**
 * `snapshot verify` of a pack directory (docs/pack-format.md): the pack's own checks
 * (PackReader.verify: each part's sha256 against the part table, every slot's and every blob's
 * checksum), then every path of the `_manifest.json` the pack holds is looked up and its answer
 * (a recipe assembled) compared with the manifest's size and sha256; the index must hold exactly
 * those paths and the manifest. A damaged blob is named by its part file, byte range and path.
 */
import { createHash } from 'node:crypto';
import { existsSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { MANIFEST_PATH, SITE_INFO_PATH, type SiteInfo } from '../contract/layout.js';
import { PACK_POINTER } from '../contract/pack-format.js';
import { answerBytes, PackReader } from '../pack/reader.js';
import { reportLines, type VerifyOptions, type VerifyProblem, type VerifyReport } from './verifier.js';

/** Whether `dir` holds a pack (a `pack.json`), not a tree. */
export function isPackDir(dir: string): boolean {
  return existsSync(join(dir, PACK_POINTER));
}

const MANIFEST_LINE = /^([0-9a-f]{64}) (\d+) (\S+)$/;
/** Decoded blobs verify keeps for the recipes that name them again (256 MiB: most of a 200k-tx chain's tx documents). */
const VERIFY_DECODED_CACHE = 256 << 20;

/** Checks the pack in `dir`; never throws for problems in the pack (only for an unusable `dir`). */
export async function verifyPack(dir: string, opts: VerifyOptions = {}): Promise<VerifyReport> {
  const started = Date.now();
  if (!statSync(dir, { throwIfNoEntry: false })?.isDirectory()) throw new Error(`${dir} is not a directory`);
  const max = opts.maxProblems ?? (opts.verbose ? 100_000 : 1000);
  const problems: VerifyProblem[] = [];
  let problemCount = 0;
  // Messages name absolute paths of the pack's files; the report's `file` is relative to the dir.
  const problem = (file: string, message: string) => {
    problemCount++;
    if (problems.length < max) problems.push({ file: file.startsWith(dir) ? relative(dir, file) : file, message });
  };
  const fromError = (message: string) => {
    const m = /^(\S+?): (.*)$/s.exec(message);
    if (m) problem(m[1]!, m[2]!);
    else problem(PACK_POINTER, message);
  };
  const counts: VerifyReport['counts'] = { manifestEntries: 0, filesOnDisk: 0, bytes: 0, jsonFiles: 0, mainBlocks: 0, offChainBlocks: 0, txs: 0, addresses: 0, cappedAddresses: 0, names: 0, links: 0 };
  let site: SiteInfo | undefined;
  let reader: PackReader | undefined;
  try {
    // Every answer is assembled in turn, in path order (random in key order): blocking reads,
    // directory slots kept (4096: all of them up to about 2M entries, ~100 MB), and decoded tx
    // documents kept for the address documents that embed them again (a hub's, thousands).
    reader = await PackReader.open(dir, { syncReads: true, slotCache: 4096, decodedCache: VERIFY_DECODED_CACHE });
  } catch (e) {
    fromError((e as Error).message);
  }
  if (reader) {
    try {
      opts.onProgress?.('pack', 0, reader.parts.length);
      for (const p of await reader.verify()) fromError(p);
      counts.filesOnDisk = reader.header.entries;
      const text = await text0(reader, MANIFEST_PATH);
      if (text === undefined) problem(MANIFEST_PATH, 'is not in the pack');
      else {
        const lines = text.length === 0 ? [] : text.replace(/\n$/, '').split('\n');
        counts.manifestEntries = lines.length;
        for (const [i, line] of lines.entries()) {
          if (i % 1024 === 0) opts.onProgress?.('files', i, lines.length);
          const m = MANIFEST_LINE.exec(line);
          if (!m) {
            problem(MANIFEST_PATH, `line ${i + 1} is not a manifest line (<sha256> <size> <path>): ${JSON.stringify(line.slice(0, 120))}`);
            continue;
          }
          const [, sha, size, path] = m as unknown as [string, string, string, string];
          await checkEntry(reader, path, Number(size), sha, problem, fromError, counts);
        }
        if (reader.header.entries !== lines.length + 1) {
          problem(reader.index, `holds ${reader.header.entries} entries; the manifest lists ${lines.length} files (and the pack holds the manifest itself): ${reader.header.entries - lines.length - 1} more than it lists`);
        }
      }
      const info = await text0(reader, SITE_INFO_PATH).catch(() => undefined);
      if (info !== undefined) site = JSON.parse(info) as SiteInfo;
    } catch (e) {
      fromError((e as Error).message);
    } finally {
      await reader.close();
    }
  }
  return { ok: problemCount === 0, dir, network: site?.network, height: site?.height, tip: site?.tip, counts, problemCount, problems, seconds: (Date.now() - started) / 1000 };
}

async function text0(reader: PackReader, path: string): Promise<string | undefined> {
  const a = await reader.get(path);
  return a === undefined ? undefined : Buffer.from(await answerBytes(a)).toString('utf8');
}

async function checkEntry(
  reader: PackReader,
  path: string,
  size: number,
  sha: string,
  problem: (file: string, message: string) => void,
  fromError: (message: string) => void,
  counts: VerifyReport['counts'],
): Promise<void> {
  let bytes: Uint8Array;
  try {
    const a = await reader.get(path);
    if (a === undefined) return problem(path, `is listed in ${MANIFEST_PATH} but not in the pack`);
    bytes = await answerBytes(a);
  } catch (e) {
    return fromError((e as Error).message);
  }
  counts.bytes += bytes.length;
  if (path.endsWith('.json')) counts.jsonFiles++;
  if (bytes.length !== size) return problem(path, `answers ${bytes.length} bytes; ${MANIFEST_PATH} says ${size}`);
  const got = createHash('sha256').update(bytes).digest('hex');
  if (got !== sha) problem(path, `answers bytes with sha256 ${got}; ${MANIFEST_PATH} says ${sha}`);
}

/** The CLI's output for a pack: one summary line, then (verbose) every kept problem. */
export function formatPackVerifyReport(r: VerifyReport, verbose = false): string {
  const what = `pack of ${r.counts.manifestEntries} files (${r.counts.filesOnDisk} entries), ${r.counts.bytes} bytes`;
  return reportLines(r, what, verbose);
}
