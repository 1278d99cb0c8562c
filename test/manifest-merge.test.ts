// The manifest of an incremental build is merged from the published one and the run's changes
// (issue 14): the same bytes as the manifest written from the whole database.
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { open, type Database, type RootDatabase } from 'lmdb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { manifestValue } from '../src/index/rows.js';
import { mergeManifest, writeManifest } from '../src/publish/manifest.js';

let dir: string;
let root: RootDatabase;
let files: Database<Buffer, string>;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'snapshot-mmerge-'));
  root = open({ path: join(dir, 'db') });
  files = root.openDB<Buffer, string>('files', { encoding: 'binary' });
});
afterAll(async () => {
  await root.close();
  rmSync(dir, { recursive: true, force: true });
});

const put = (path: string, content: string) => {
  const buf = Buffer.from(content);
  void files.put(path, manifestValue.encode({ size: buf.length, sha256: createHash('sha256').update(buf).digest() }));
};
/** The manifest text from first principles: sorted by UTF-8 bytes, `sha256 size path`. */
const expected = (tree: Record<string, string>) =>
  Object.keys(tree)
    .sort((a, b) => Buffer.compare(Buffer.from(a), Buffer.from(b)))
    .map((p) => `${createHash('sha256').update(tree[p]!).digest('hex')} ${Buffer.byteLength(tree[p]!)} ${p}\n`)
    .join('');

describe('mergeManifest', () => {
  it('equals the manifest written from scratch: changes at the start, middle and end, deletions, non-ASCII paths, a long run unchanged', () => {
    const tree: Record<string, string> = {};
    const set = (p: string, c: string) => (put(p, c), (tree[p] = c));
    files.transactionSync(() => {
      for (let i = 0; i < 5000; i++) set(`tx/${i.toString(16).padStart(6, '0')}.json`, `{"n":${i}}`);
      for (const p of ['a.json', 'name/d/caf\u00e9.json', 'name/d/\u{1F600}.json', 'name/d/\uE000.json', 'zz/last.json']) set(p, p);
    });
    const prev = join(dir, 'prev');
    const scratch = writeManifest(files, prev);
    expect(readFileSync(prev, 'utf8')).toBe(expected(tree));

    const changed = new Set<string>();
    const change = (p: string, c: string | null) => {
      changed.add(p);
      files.transactionSync(() => (c === null ? (void files.remove(p), delete tree[p]) : set(p, c)));
    };
    change('a.json', null); // first line deleted
    change('0.json', 'new first');
    change('tx/000100.json', 'changed');
    change('tx/0001ff.json', null);
    change('tx/0001ff5.json', 'added between');
    change('name/d/\u00e9t\u00e9.json', 'added non-ASCII');
    change('zz/last.json', null); // last line deleted
    change('zzz/after.json', 'appended');
    change('never/there.json', null); // an absent file's deletion

    const merged = join(dir, 'merged');
    const m = mergeManifest(prev, files, changed, merged);
    const fresh = join(dir, 'fresh');
    const f = writeManifest(files, fresh);
    expect(readFileSync(merged, 'utf8')).toBe(expected(tree));
    expect(readFileSync(merged)).toEqual(readFileSync(fresh));
    expect(m).toEqual(f);
    expect(m.sha256).toBe(createHash('sha256').update(readFileSync(merged)).digest('hex'));
    expect(m.files).toBe(Object.keys(tree).length + 1);
    expect(m.bytes).toBe(Object.values(tree).reduce((s, c) => s + Buffer.byteLength(c), 0));
    expect(scratch.files).toBe(5006);
  });

  it('from an empty previous manifest, and refuses one that is not a manifest, naming the file', () => {
    const empty = join(dir, 'empty');
    writeFileSync(empty, '');
    const all = [...files.getKeys()] as string[];
    const merged = join(dir, 'from-empty');
    mergeManifest(empty, files, all, merged);
    expect(readFileSync(merged)).toEqual(readFileSync(join(dir, 'fresh')));
    const bad = join(dir, 'bad');
    writeFileSync(bad, 'not a manifest\n');
    expect(() => mergeManifest(bad, files, [], join(dir, 'x'))).toThrow(bad);
  });
});
