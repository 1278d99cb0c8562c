// The manifest is merged from the sorted runs of rows each writing thread keeps (no
// index write per file), and in an incremental build from the published manifest and the
// run's changes: the bytes equal a manifest computed from the tree from first principles.
import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { compareManifestPaths, encodeManifestLine, maxLineBytes, parseManifestLine, putManifestLine } from '../src/contract/manifest.js';
import { writeManifest } from '../src/publish/manifest.js';
import { ManifestRows, resetRowsDir } from '../src/publish/manifest-rows.js';
import { SiteWriter } from '../src/publish/site-writer.js';

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'snapshot-mmerge-'));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const sha = (c: string) => createHash('sha256').update(c).digest();
/** The manifest text from first principles: sorted by UTF-8 bytes, `sha256 size path`. */
const expected = (tree: Record<string, string>) =>
  Object.keys(tree)
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
    .map((p) => `${sha(tree[p]!).toString('hex')} ${Buffer.byteLength(tree[p]!)} ${p}\n`)
    .join('');

/** Logs `(path, content | null)` rows on `logs` threads (by a hash of the path, as SiteWriter's lanes), runs of `runRows`. */
function logRows(rowsDir: string, changes: [string, string | null][], logs: number, runRows: number): number {
  resetRowsDir(rowsDir);
  const rows = Array.from({ length: logs }, (_, i) => new ManifestRows(rowsDir, `t${i}`, runRows));
  for (const [p, c] of changes) {
    const log = rows[Buffer.from(p).reduce((h, b) => (h * 31 + b) % 1_000_003, 7) % logs]!;
    if (c === null) log.deleted(p);
    else log.written(p, Buffer.byteLength(c), sha(c), 0);
  }
  return rows.reduce((n, r) => n + r.seal(), 0);
}

const NON_ASCII = ['name/d/caf\u00e9.json', 'name/d/\u{1F600}.json', 'name/d/\uE000.json', 'name/d/\uFFFD.json'];

describe('writeManifest from runs of rows', () => {
  const tree: Record<string, string> = {};
  const prev = () => join(dir, 'prev');

  it('a full build: rows of two threads in several runs each, non-ASCII paths (UTF-8 order), a path written twice by one thread keeps the last', () => {
    const rowsDir = join(dir, 'rows1');
    const changes: [string, string | null][] = [];
    for (let i = 4999; i >= 0; i--) changes.push([`tx/${((i * 7919) % 5000).toString(16).padStart(6, '0')}.json`, `{"n":${i}}`]);
    for (const p of ['a.json', ...NON_ASCII, 'zz/last.json']) changes.push([p, p]);
    changes.push(['tx/000003.json', 'rewritten later, in a later run']); // a BIP30 duplicate: same thread, last write wins
    changes.push(['absent.json', null]); // a deletion of a file that never was
    for (const [p, c] of changes) {
      if (c === null) delete tree[p];
      else tree[p] = c;
    }
    const rows = logRows(rowsDir, changes, 2, 700);
    expect(readdirSync(rowsDir).length).toBeGreaterThan(6);
    const seen: number[] = [];
    const m = writeManifest(rowsDir, undefined, prev(), rows, (done, total) => seen.push(done, total));
    expect(readFileSync(prev(), 'utf8')).toBe(expected(tree));
    expect(m.files).toBe(Object.keys(tree).length + 1);
    expect(m.bytes).toBe(Object.values(tree).reduce((s, c) => s + Buffer.byteLength(c), 0));
    expect(m.sha256).toBe(createHash('sha256').update(readFileSync(prev())).digest('hex'));
    expect(seen.slice(-2)).toEqual([m.files - 1, m.files - 1]);
  });

  it('an incremental build: the published manifest merged with the changes at the start, middle and end, deletions, non-ASCII paths', () => {
    const changes: [string, string | null][] = [
      ['a.json', null], // first line deleted
      ['0.json', 'new first'],
      ['tx/000100.json', 'changed'],
      ['tx/0001ff.json', null],
      ['tx/0001ff5.json', 'added between'],
      ['name/d/\u00e9t\u00e9.json', 'added non-ASCII'],
      [NON_ASCII[2]!, 'changed non-BMP neighbour'],
      ['zz/last.json', null], // last line deleted
      ['zzz/after.json', 'appended'],
      ['never/there.json', null], // an absent file's deletion
    ];
    for (const [p, c] of changes) {
      if (c === null) delete tree[p];
      else tree[p] = c;
    }
    const rowsDir = join(dir, 'rows2');
    const rows = logRows(rowsDir, changes, 2, 3);
    const merged = join(dir, 'merged');
    const m = writeManifest(rowsDir, prev(), merged, rows);
    expect(readFileSync(merged, 'utf8')).toBe(expected(tree));
    expect(m.files).toBe(Object.keys(tree).length + 1);
    expect(m.bytes).toBe(Object.values(tree).reduce((s, c) => s + Buffer.byteLength(c), 0));
    expect(m.sha256).toBe(createHash('sha256').update(readFileSync(merged)).digest('hex'));
    // No changes: the published manifest, byte for byte.
    resetRowsDir(rowsDir);
    writeManifest(rowsDir, merged, join(dir, 'same'), 0);
    expect(readFileSync(join(dir, 'same'), 'utf8')).toBe(readFileSync(merged, 'utf8'));
  });

  it('from an empty previous manifest; refuses one that is not a manifest, naming the file, and a path two threads wrote', () => {
    const rowsDir = join(dir, 'rows3');
    logRows(rowsDir, Object.entries(tree), 3, 1000);
    const empty = join(dir, 'empty');
    writeFileSync(empty, '');
    writeManifest(rowsDir, empty, join(dir, 'from-empty'), 0);
    expect(readFileSync(join(dir, 'from-empty'), 'utf8')).toBe(expected(tree));
    const bad = join(dir, 'bad');
    writeFileSync(bad, 'not a manifest\n');
    expect(() => writeManifest(rowsDir, bad, join(dir, 'x'), 0)).toThrow(bad);
    const a = new ManifestRows(rowsDir, 'other');
    a.written('tx/000100.json', 1, sha('x'), 0);
    a.seal();
    expect(() => writeManifest(rowsDir, undefined, join(dir, 'y'), 0)).toThrow('tx/000100.json was written by two threads');
  });
});

describe('SiteWriter', () => {
  it('its threads keep the rows of what they wrote (hex encoded there), deleted, and rewrote; sealed, the manifest lists the tree; no write after the seal', async () => {
    const root = join(dir, 'tree');
    const rowsDir = join(dir, 'writer-rows');
    mkdirSync(root);
    resetRowsDir(rowsDir);
    writeFileSync(join(root, 'old.json'), 'to delete');
    const writer = new SiteWriter(root, rowsDir, undefined);
    const tree: Record<string, string> = {};
    try {
      for (let i = 0; i < 1000; i++) {
        const raw = Buffer.from(`raw ${i}`);
        writer.write(`tx/${i}.bin`, raw);
        writer.writeHex(`tx/${i}.hex`, raw);
        tree[`tx/${i}.bin`] = raw.toString('latin1');
        tree[`tx/${i}.hex`] = raw.toString('hex');
        await writer.backpressure();
      }
      writer.write('tx/7.bin', 'rewritten'); // the same path again: the same thread, the last write wins
      tree['tx/7.bin'] = 'rewritten';
      writer.delete('old.json');
      await writer.seal();
      expect(() => writer.write('late.json', 'x')).toThrow('late.json: written after the manifest rows were sealed');
    } finally {
      await writer.close();
    }
    expect(writer.counts).toEqual({ written: 2001, unchanged: 0, deleted: 1 });
    expect(readFileSync(join(root, 'tx/12.hex'), 'utf8')).toBe(Buffer.from('raw 12').toString('hex'));
    const m = writeManifest(rowsDir, undefined, join(dir, 'writer-manifest'), writer.sealedRows);
    expect(readFileSync(join(dir, 'writer-manifest'), 'utf8')).toBe(expected(tree));
    expect(m.files).toBe(2001);
  });
});

describe('the manifest line codec (contract/manifest.ts)', () => {
  it('encode, put in place and parse agree; the order is UTF-8 byte order', () => {
    const hex = fc.uint8Array({ minLength: 32, maxLength: 32 });
    fc.assert(
      fc.property(hex, fc.integer({ min: 0, max: Number.MAX_SAFE_INTEGER }), fc.string({ minLength: 1 }), (digest, size, path) => {
        const sha = Buffer.from(digest).toString('hex');
        const line = encodeManifestLine(sha, size, path);
        const chunk = Buffer.alloc(maxLineBytes(path));
        const end = putManifestLine(chunk, 0, digest, 0, size, path);
        expect(chunk.subarray(0, end).toString('utf8')).toBe(Buffer.from(line, 'utf8').toString('utf8'));
        expect(parseManifestLine(line.slice(0, -1))).toEqual({ sha256: sha, size, path });
      }),
    );
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => {
        expect(Math.sign(compareManifestPaths(a, b))).toBe(Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b))));
      }),
    );
    // Code units from U+D800 up: JS string order and UTF-8 order differ.
    expect(compareManifestPaths('\uffff', '\u{10000}')).toBeLessThan(0);
    expect(parseManifestLine(`${'a'.repeat(64)} 01 x`)).toBeUndefined();
    expect(parseManifestLine(`${'A'.repeat(64)} 1 x`)).toBeUndefined();
  });
});
