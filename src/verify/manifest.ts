/** Phases 2 and 3: the manifest line by line (size, sha256, dispatch by kind) and the tree against it. */
import { createReadStream, lstatSync } from 'node:fs';
import { isUtf8 } from 'node:buffer';
import { createInterface } from 'node:readline';
import { sha256 } from '../chain/hash.js';
import { MANIFEST_PATH } from '../contract/layout.js';
import { compareManifestPaths, parseManifestLine, safePath } from '../contract/manifest.js';
import { checkAddress } from './address.js';
import { checkBlock } from './block.js';
import { checkBlockHeight } from './block-height.js';
import { OTHER_PROBLEM, SYMLINK_PROBLEM, splitFirst, countLines, walk } from './files.js';
import { checkName, checkNameVariant } from './name.js';
import { schemaOf, shapeProblem } from './shape.js';
import { checkTx } from './tx.js';
import { type Verifier } from './verifier.js';

export async function manifest(ver: Verifier): Promise<{ canonical: boolean }> {
  // Streamed, not read whole: a symlink or FIFO in its place is refused first.
  const st = lstatSync(ver.abs(MANIFEST_PATH), { throwIfNoEntry: false });
  if (st && !st.isFile()) {
    ver.missingProblem(MANIFEST_PATH, st.isSymbolicLink() ? SYMLINK_PROBLEM : OTHER_PROBLEM);
    return { canonical: false };
  }
  const total = await countLines(ver.abs(MANIFEST_PATH));
  if (total === undefined) {
    ver.problem(MANIFEST_PATH, 'is missing');
    return { canonical: false };
  }
  const notUtf8 = await linesNotUtf8(ver.abs(MANIFEST_PATH));
  let sorted = true;
  let prevPath = '';
  let lineNo = 0;
  const lines = createInterface({ input: createReadStream(ver.abs(MANIFEST_PATH)), crlfDelay: Infinity });
  for await (const line of lines) {
    lineNo++;
    if (lineNo % 500 === 0) ver.onProgress?.('files', lineNo, total);
    ver.counts.manifestEntries++;
    const parsed = parseManifestLine(line);
    if (!parsed) {
      ver.problem(MANIFEST_PATH, `line ${lineNo} is not "<sha256> <size> <path>": ${JSON.stringify(line.slice(0, 200))}`);
      sorted = false;
      continue;
    }
    const { sha256: sha, size, path: rel } = parsed;
    // Unsorted (the writer sorts by path), the stray-file check takes the slow path, which also
    // names duplicates.
    if (compareManifestPaths(rel, prevPath) <= 0) sorted = false;
    prevPath = rel;
    if (rel === MANIFEST_PATH) {
      ver.problem(MANIFEST_PATH, 'lists itself');
      continue;
    }
    if (!safePath(rel) || notUtf8.has(lineNo)) {
      ver.problem(MANIFEST_PATH, `line ${lineNo} names an unsafe path ${JSON.stringify(rel)}`);
      continue;
    }
    checkFile(ver, rel, sha, size);
  }
  // readline hides whether the last line ends in a newline: more lines than newlines say it does not.
  if (lineNo > total) {
    ver.problem(MANIFEST_PATH, `line ${lineNo} has no newline at its end`);
    sorted = false;
  }
  ver.onProgress?.('files', lineNo, total);
  return { canonical: sorted };
}

/**
 * The numbers of the lines that are not UTF-8 (at most 1000): readline decodes their bytes to
 * U+FFFD, where the build's reader refuses them as unsafe paths.
 */
async function linesNotUtf8(path: string): Promise<Set<number>> {
  const bad = new Set<number>();
  let line = 0;
  let carry = Buffer.alloc(0);
  const scan = (buf: Buffer) => {
    // Split at newlines (ASCII: never inside a character); only a bad chunk is split by line.
    if (isUtf8(buf)) {
      for (let i = buf.indexOf(10); i !== -1; i = buf.indexOf(10, i + 1)) line++;
      return;
    }
    for (let start = 0; start < buf.length && bad.size < 1000; ) {
      const nl = buf.indexOf(10, start);
      const end = nl === -1 ? buf.length : nl;
      line++;
      if (!isUtf8(buf.subarray(start, end))) bad.add(line);
      start = end + 1;
    }
  };
  for await (const chunk of createReadStream(path) as AsyncIterable<Buffer>) {
    const buf = carry.length > 0 ? Buffer.concat([carry, chunk]) : chunk;
    const last = buf.lastIndexOf(10);
    scan(buf.subarray(0, last + 1));
    carry = Buffer.from(buf.subarray(last + 1));
  }
  if (carry.length > 0 && !isUtf8(carry)) bad.add(line + 1);
  return bad;
}

export function checkFile(ver: Verifier, rel: string, sha: string, size: number): void {
  const buf = ver.readBytes(rel, 'is listed in the manifest but missing');
  if (!buf) return;
  ver.presentEntries++;
  ver.counts.bytes += buf.length;
  if (buf.length !== size) ver.problem(rel, `size ${buf.length} differs from the manifest (${size})`);
  else if (sha256(buf).toString('hex') !== sha) ver.problem(rel, 'sha256 differs from the manifest');
  if (!rel.endsWith('.json')) {
    if (checkSibling(ver, rel)) ver.keep(rel, buf);
    return;
  }
  ver.counts.jsonFiles++;
  const text = buf.toString('utf8');
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch (e) {
    ver.problem(rel, `is not valid JSON (${(e as Error).message})`);
    return;
  }
  const schema = schemaOf(rel, doc);
  const shape = schema && shapeProblem(schema, doc);
  if (shape) ver.problem(rel, shape);
  const [top, rest] = splitFirst(rel);
  if (top === 'tx') checkTx(ver, rel, rest.slice(0, -5), doc);
  else if (top === 'block') checkBlock(ver, rel, rest.slice(0, -5), doc);
  else if (top === 'block-height') checkBlockHeight(ver, rel, rest.slice(0, -5), doc);
  else if (top === 'address') checkAddress(ver, rel, rest.slice(0, -5), doc, text);
  else if (top === 'name') checkName(ver, rel, rest.slice(0, -5));
  else if (top === 'v') checkNameVariant(ver, rel, rest);
}

/** tx/<id>.bin|.hex and block/<h>.bin|.hex come with their .json; true when this is such a file and its .json is there (to check it against). */
export function checkSibling(ver: Verifier, rel: string): boolean {
  const m = /^(tx|block)\/([^/]+)\.(bin|hex)$/.exec(rel);
  if (!m) return false;
  if (ver.exists(`${m[1]}/${m[2]}.json`)) return true;
  ver.problem(rel, `has no ${m[1]}/${m[2]}.json beside it`);
  return false;
}

export async function tree(ver: Verifier, canonical: boolean): Promise<void> {
  // Fast path: the manifest's paths are distinct (canonical order is strictly increasing) and
  // all exist, so the tree holds no stray file iff it holds exactly as many files.
  const total = ver.presentEntries;
  let files = 0;
  walk(ver.dir, '', (rel, kind) => {
    // A listed symlink was reported when the manifest phase read it; this names the rest
    // (symlinked directories, unlisted ones, FIFOs, sockets, devices).
    if (kind !== 'file') {
      ver.missingProblem(rel, kind === 'symlink' ? SYMLINK_PROBLEM : OTHER_PROBLEM);
      return;
    }
    if (rel === MANIFEST_PATH) return;
    files++;
    if (files % 5000 === 0) ver.onProgress?.('tree', files, total);
  });
  ver.counts.filesOnDisk = files;
  ver.onProgress?.('tree', files, total);
  if (canonical && files === ver.presentEntries) return;
  // Slow path (only for a broken tree or manifest): hold the listed paths.
  const listed = new Set<string>();
  try {
    if (!lstatSync(ver.abs(MANIFEST_PATH)).isFile()) throw new Error('not a regular file');
    const lines = createInterface({ input: createReadStream(ver.abs(MANIFEST_PATH)), crlfDelay: Infinity });
    for await (const line of lines) {
      const rel = parseManifestLine(line)?.path;
      if (rel === undefined) continue;
      if (listed.has(rel)) ver.problem(rel, 'is listed twice in the manifest');
      listed.add(rel);
    }
  } catch {
    // no usable manifest: every file is stray
  }
  walk(ver.dir, '', (rel, kind) => {
    if (kind === 'file' && rel !== MANIFEST_PATH && !listed.has(rel)) ver.problem(rel, 'is not listed in the manifest');
  });
}
