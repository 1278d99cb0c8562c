// One rule for the paths a manifest may name (contract/manifest.ts safePath): the build's strict
// manifest reader (the ownership check of a tree) and verify's reading of a line accept exactly the
// same paths, every path the build writes is one of them, and none of them leaves the tree.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { isUtf8 } from 'node:buffer';
import { join, posix } from 'node:path';
import fc from 'fast-check';
import { afterAll, describe, expect, it } from 'vitest';
import { NETWORKS } from '../src/chain/networks.js';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { ManifestPaths, parseManifestLine, safePath, safePathBytes } from '../src/contract/manifest.js';
import { ManifestRows } from '../src/publish/manifest-rows.js';
import { buildSnapshot } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { memorySource } from '../src/source/memory.js';
import type { ChainSource } from '../src/source/types.js';
import { verifySnapshot } from '../src/verify/index.js';
import { framedBlocks, readChain } from './support/helpers.js';
import { itShared } from './support/shared-data.js';

const dir = mkdtempSync(join(tmpdir(), 'safe-path-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const SHA = createHash('sha256').update('x').digest('hex');

/** Whether the build's strict reader takes a one-line manifest naming `path`, to its end. */
function buildAccepts(path: string): boolean {
  const file = join(dir, 'm');
  writeFileSync(file, `${SHA} 1 ${path}\n`);
  try {
    const paths = new ManifestPaths(file);
    while (paths.next());
    return true;
  } catch {
    return false;
  }
}

/**
 * Whether verify takes that manifest: it reads the file as UTF-8 text in lines (split at \n, \r\n
 * and \r), each in the line format and naming a safe path.
 */
function verifyAccepts(path: string): boolean {
  return verifyAcceptsBytes(Buffer.from(`${SHA} 1 ${path}\n`, 'utf8'));
}

/** The same for a manifest's bytes; a line that is not UTF-8 names an unsafe path. */
function verifyAcceptsBytes(bytes: Buffer): boolean {
  return bytes
    .toString('latin1')
    .slice(0, -1)
    .split(/\r\n|\n|\r/)
    .every((l) => isUtf8(Buffer.from(l, 'latin1'))) && verifyAcceptsText(bytes.toString('utf8'));
}

function verifyAcceptsText(text: string): boolean {
  return text
    .slice(0, -1)
    .split(/\r\n|\n|\r/)
    .every((line) => {
      const parsed = parseManifestLine(line);
      return parsed !== undefined && safePath(parsed.path);
    });
}

/** A path that stays in the tree: relative, normalized, no `..` component, no backslash. */
function staysInside(p: string): boolean {
  return !posix.isAbsolute(p) && posix.normalize(p) === p && !p.split('/').includes('..') && !p.includes('\\') && !/[\0\n\r]/.test(p);
}

const part = fc.constantFrom('a', '.', '..', '', '\\', '\0', '\n', '\r', '\t', '\x7f', 'é', '\u2028', '\ud800', '\udc00', '~2E', 'b.json', '/');
const hostile = fc.oneof(
  fc.string(),
  fc.string({ unit: 'binary' }),
  fc.array(part, { maxLength: 6 }).map((a) => a.join('/')),
  fc.array(part, { maxLength: 6 }).map((a) => a.join('')),
);

describe('the build and verify agree on safe paths', () => {
  it('fast-check hostile strings: build reader = verify, string rule = byte rule, accepted = stays inside', () => {
    fc.assert(
      fc.property(hostile, (p) => {
        const ok = buildAccepts(p);
        expect(ok, JSON.stringify(p)).toBe(verifyAccepts(p));
        if (Buffer.from(p, 'utf8').toString('utf8') !== p) return; // no UTF-8 of its own: the byte rule sees U+FFFD instead
        const bytes = Buffer.from(p, 'utf8');
        expect(safePathBytes(bytes, 0, bytes.length), JSON.stringify(p)).toBe(safePath(p));
        if (ok) expect(staysInside(p), JSON.stringify(p)).toBe(true);
      }),
      { numRuns: 400 },
    );
  });

  it('any bytes as a path: the build reader = verify (bytes that are not UTF-8 never pass)', () => {
    const file = join(dir, 'b');
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 12 }), (b) => {
        const bytes = Buffer.concat([Buffer.from(`${SHA} 1 `), b, Buffer.from('\n')]);
        writeFileSync(file, bytes);
        let build = true;
        try {
          const paths = new ManifestPaths(file);
          while (paths.next());
        } catch {
          build = false;
        }
        expect(build, Buffer.from(b).toString('hex')).toBe(verifyAcceptsBytes(bytes));
        expect(safePathBytes(b, 0, b.length)).toBe(isUtf8(b) && safePath(Buffer.from(b).toString('utf8')));
      }),
      { numRuns: 400 },
    );
  });

  it('the manifest writer refuses an unsafe path', () => {
    const rows = new ManifestRows(dir, 'r', 4);
    expect(() => rows.deleted('a/../b')).toThrow('refusing to list the unsafe path "a/../b" in the manifest');
    expect(() => rows.deleted('a\\b')).toThrow('unsafe path');
  });
});

/** Every path of a build's manifest is safe, and the strict reader takes the whole manifest. */
async function checkTree(name: string, source: ChainSource): Promise<void> {
  const out = join(dir, name);
  await buildSnapshot({ source, outDir: out, full: true });
  const lines = readFileSync(join(out, MANIFEST_PATH), 'utf8').slice(0, -1).split('\n');
  const paths = lines.map((l) => parseManifestLine(l)?.path);
  expect(paths.length).toBeGreaterThan(100);
  expect(paths.filter((p) => p === undefined || !safePath(p) || !staysInside(p))).toEqual([]);
  const reader = new ManifestPaths(join(out, MANIFEST_PATH));
  let n = 1;
  while (reader.next()) n++;
  expect(n).toBe(lines.length);
}

describe('every path the build writes is safe', () => {
  it('demo tree', async () => {
    await checkTree('demo', demoSource());
  });

  itShared('chaindata/nbitcoin/blk00000.dat', 'chaindata/nbitcoin/blk00001.dat')('Bitcoin mainnet 0–599 tree', async () => {
    const raws = [...framedBlocks(readChain('nbitcoin', 'blk00000.dat')), ...framedBlocks(readChain('nbitcoin', 'blk00001.dat'))];
    await checkTree('bitcoin-600', memorySource(NETWORKS.bitcoin, raws.map((raw) => ({ raw, kind: 'main' as const })), 'nbitcoin blk files'));
  }, 120_000);
});

describe('verify reads the manifest as exactly as the build does', () => {
  // A demo tree whose manifest is then spoiled one way per test; verify must name the line.
  const tree = join(dir, 'verify-demo');
  const manifestFile = join(tree, MANIFEST_PATH);
  let good: Buffer;
  const problemsWith = async (bytes: Buffer) => {
    writeFileSync(manifestFile, bytes);
    const r = await verifySnapshot(tree);
    return r.problems.filter((p) => p.file === MANIFEST_PATH).map((p) => p.message);
  };

  it('a blank line, a missing final newline, a path that is not UTF-8', async () => {
    await buildSnapshot({ source: demoSource(), outDir: tree, full: true });
    good = readFileSync(manifestFile);
    expect(await problemsWith(good)).toEqual([]);
    const lines = good.toString('utf8').split('\n').length - 1;
    expect(await problemsWith(Buffer.concat([good, Buffer.from('\n')]))).toEqual([`line ${lines + 1} is not "<sha256> <size> <path>": ""`]);
    expect(await problemsWith(good.subarray(0, -1))).toEqual([`line ${lines} has no newline at its end`]);
    // The first path's last byte before ".json" made 0xff: the build's reader refuses the manifest.
    const bad = Buffer.from(good);
    const at = bad.indexOf('.json\n') - 1;
    bad[at] = 0xff;
    const line = bad.subarray(0, at).toString('latin1').split('\n').length;
    const messages = await problemsWith(bad);
    expect(messages.some((m) => m.startsWith(`line ${line} names an unsafe path`)), messages.join('\n')).toBe(true);
    writeFileSync(join(dir, 'bad-manifest'), bad);
    expect(() => {
      const paths = new ManifestPaths(join(dir, 'bad-manifest'));
      while (paths.next());
    }).toThrow(`line ${line} (offset`);
  }, 120_000);
});
