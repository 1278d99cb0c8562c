import { createHash } from 'node:crypto';
import { existsSync, linkSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ABSENT, CHANGED, DELETED, UNCHANGED, WRITTEN, writeBatch, writeFile, type UpdateTarget, type WriteBatch } from '../src/publish/site-writer-worker.js';
import { ManifestRows } from '../src/publish/manifest-rows.js';
import { startWorker } from '../src/runtime/from-source.js';

let logs = 0;
const rowsRoot = mkdtempSync(join(tmpdir(), 'snapshot-writer-rows-'));
afterAll(() => rmSync(rowsRoot, { recursive: true, force: true }));
/** A fresh manifest-row log in its own directory, and what it wrote out once sealed (one run: its lines). */
function newRows(): { rows: ManifestRows; lines: () => string[] } {
  const dir = join(rowsRoot, String(logs++));
  mkdirSync(dir);
  const rows = new ManifestRows(dir, 't');
  return {
    rows,
    lines: () => {
      rows.seal();
      const text = readdirSync(dir).map((f) => readFileSync(join(dir, f), 'utf8')).join('');
      rmSync(dir, { recursive: true, force: true });
      return text.split('\n').filter((l) => l !== '');
    },
  };
}
const sha = (s: string | Buffer) => createHash('sha256').update(s).digest('hex');
const DEL = '-'.repeat(64);
/** Update mode on the tree itself (as a staging tree of hard links only: no stale paths). */
const sameTree = (root: string): UpdateTarget => ({ published: root, stale: new Set() });

/** A batch as SiteWriter posts it: one buffer, end offsets, -1 for a deletion. */
function batchOf(entries: [string, string | null][]): WriteBatch {
  const parts = entries.map(([, d]) => (d === null ? null : Buffer.from(d)));
  const data = Buffer.concat(parts.flatMap((p) => (p === null ? [] : [p])));
  let at = 0;
  const ends = Int32Array.from(parts.map((p) => (p === null ? -1 : (at += p.length))));
  return { paths: entries.map(([p]) => p), ends, data: data.buffer.slice(data.byteOffset, data.byteOffset + data.byteLength) as ArrayBuffer };
}

describe('writer worker (writeBatch)', () => {
  const root = mkdtempSync(join(tmpdir(), 'snapshot-writer-worker-'));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  it('writes files and logs their manifest rows (sha256, size, sorted by path), then in update mode keeps unchanged files and deletes', () => {
    const log = newRows();
    const r = writeBatch(root, undefined, new Set(), log.rows, batchOf([['tx/a.json', '{"a":1}'], ['b/c/d.bin', 'xyz']]), { path: root });
    expect(readFileSync(join(root, 'tx/a.json'), 'utf8')).toBe('{"a":1}');
    expect([...r.status!]).toEqual([WRITTEN, WRITTEN]);
    expect(r.bytes).toBe(10);
    expect(log.lines()).toEqual([`${sha('xyz')} 3 b/c/d.bin`, `${sha('{"a":1}')} 7 tx/a.json`]);

    const old = new Date(2000, 0, 1);
    utimesSync(join(root, 'tx/a.json'), old, old);
    const log2 = newRows();
    const u = writeBatch(root, sameTree(root), new Set(), log2.rows, batchOf([['tx/a.json', '{"a":1}'], ['b/c/d.bin', 'new'], ['gone.json', null], ['b/c/d2.bin', null]]), { path: root });
    expect([...u.status!]).toEqual([UNCHANGED, WRITTEN, ABSENT, ABSENT]);
    expect(statSync(join(root, 'tx/a.json')).mtime.getTime()).toBe(old.getTime());
    expect(readFileSync(join(root, 'b/c/d.bin'), 'utf8')).toBe('new');

    writeFileSync(join(root, 'gone.json'), 'x');
    const d = writeBatch(root, sameTree(root), new Set(), log2.rows, batchOf([['gone.json', null]]), { path: root });
    expect([...d.status!]).toEqual([DELETED]);
    expect(() => statSync(join(root, 'gone.json'))).toThrow();
    // No row for the unchanged file; one for each deletion (the last of gone.json's two).
    expect(log2.lines()).toEqual([`${sha('new')} 3 b/c/d.bin`, `${DEL} 0 b/c/d2.bin`, `${DEL} 0 gone.json`]);
  });

  it('reports the path it failed on', () => {
    writeFileSync(join(root, 'file'), 'not a dir');
    const at = { path: root };
    expect(() => writeBatch(root, undefined, new Set(), newRows().rows, batchOf([['ok.json', '1'], ['file/under.json', '2']]), at)).toThrow();
    expect(at.path).toBe(join(root, 'file/under.json'));
  });

  it('writes a file given as byte parts (gathered writes, more parts than one writev takes), the same bytes and sha256 as one buffer', () => {
    const parts = Array.from({ length: 1500 }, (_, i) => Buffer.from(i % 3 ? `part ${i},` : ''));
    const whole = Buffer.concat(parts);
    const log = newRows();
    const dirs = new Set<string>();
    expect(writeFile(root, undefined, dirs, 'p/parts.json', parts, log.rows, { path: '' })).toBe(WRITTEN);
    expect(readFileSync(join(root, 'p/parts.json'))).toEqual(whole);
    expect(log.lines()).toEqual([`${sha(whole)} ${whole.length} p/parts.json`]);
    // Update mode: the same parts leave the file alone; one byte more or less is a change.
    const rows = newRows().rows;
    expect(writeFile(root, sameTree(root), dirs, 'p/parts.json', parts, rows, { path: '' })).toBe(UNCHANGED);
    expect(writeFile(root, sameTree(root), dirs, 'p/parts.json', [...parts, Buffer.from('x')], rows, { path: '' })).toBe(WRITTEN);
    expect(writeFile(root, sameTree(root), dirs, 'p/parts.json', parts.slice(0, -1), rows, { path: '' })).toBe(WRITTEN);
    expect(readFileSync(join(root, 'p/parts.json'))).toEqual(Buffer.concat(parts.slice(0, -1)));
  });

  it('large documents, hashed slice by slice as they are written: the bytes and sha256 of the whole, whatever the part sizes', () => {
    // Parts around and across the 256 KiB slices writeFile hashes and writes at a time: one
    // part of 1 MiB + 1, small parts between large ones, empty parts, a single large buffer.
    const fill = (n: number, seed: number) => Buffer.from(Array.from({ length: n }, (_, i) => (i * 31 + seed) & 0xff));
    const cases: Buffer[][] = [
      [fill((1 << 20) + 1, 1)],
      [fill(3, 2), fill(262_143, 3), Buffer.alloc(0), fill(262_145, 4), fill(1, 5), fill(600_000, 6)],
      Array.from({ length: 700 }, (_, i) => fill(1000 + i, i)),
    ];
    cases.forEach((parts, i) => {
      const whole = Buffer.concat(parts);
      const log = newRows();
      expect(writeFile(root, undefined, new Set(), `big/${i}.json`, parts, log.rows, { path: '' })).toBe(WRITTEN);
      expect(readFileSync(join(root, `big/${i}.json`)).equals(whole)).toBe(true);
      expect(log.lines()).toEqual([`${sha(whole)} ${whole.length} big/${i}.json`]);
      // Update mode writes a temporary file the same way and renames it over the old one.
      const changed = [...parts, Buffer.from('!')];
      const log2 = newRows();
      expect(writeFile(root, sameTree(root), new Set(), `big/${i}.json`, changed, log2.rows, { path: '' })).toBe(WRITTEN);
      expect(readFileSync(join(root, `big/${i}.json`)).equals(Buffer.concat(changed))).toBe(true);
      expect(log2.lines()).toEqual([`${sha(Buffer.concat(changed))} ${whole.length + 1} big/${i}.json`]);
    });
    expect(readdirSync(join(root, 'big')).sort()).toEqual(['0.json', '1.json', '2.json']);
  });

  it('a document given as a generator is written as its parts come: never whole in memory, the same bytes and sha256', () => {
    const path = join(root, 'gen/doc.json');
    const sizesSeen: number[] = [];
    const made: Buffer[] = [];
    function* parts(): Generator<Uint8Array> {
      for (let i = 0; i < 64; i++) {
        // What the file holds when part i is asked for: the writer has written earlier parts already.
        if (i % 16 === 0) sizesSeen.push(i === 0 ? 0 : statSync(path).size);
        const p = Buffer.alloc(64 * 1024, i);
        made.push(p);
        yield p;
      }
    }
    const log = newRows();
    expect(writeFile(root, undefined, new Set(), 'gen/doc.json', parts(), log.rows, { path: '' })).toBe(WRITTEN);
    const whole = Buffer.concat(made);
    expect(readFileSync(path).equals(whole)).toBe(true);
    expect(log.lines()).toEqual([`${sha(whole)} ${whole.length} gen/doc.json`]);
    // Parts 16, 32 and 48 were asked for after at least the 256 KiB slices before them were written.
    expect(sizesSeen.slice(1).every((size, k) => size >= (k + 1) * 16 * 64 * 1024 - 256 * 1024 && size > 0)).toBe(true);
    // Update mode takes the parts as a list (it compares them with the old bytes first).
    const again = newRows();
    expect(writeFile(root, sameTree(root), new Set(), 'gen/doc.json', made.values(), again.rows, { path: '' })).toBe(UNCHANGED);
    expect(writeFile(root, sameTree(root), new Set(), 'gen/doc.json', [...made, Buffer.from('x')].values(), again.rows, { path: '' })).toBe(WRITTEN);
    expect(readFileSync(path).equals(Buffer.concat([whole, Buffer.from('x')]))).toBe(true);
  });

  it('update mode: a file flagged CHANGED is written without reading the published one (equal bytes: written again, not found unchanged)', () => {
    writeFileSync(join(root, 'same.json'), 'same');
    const batch = batchOf([['same.json', 'same'], ['same.json', 'same']]);
    batch.flags = Uint8Array.of(0, CHANGED);
    const log = newRows();
    expect([...writeBatch(root, sameTree(root), new Set(), log.rows, batch, { path: root }).status!]).toEqual([UNCHANGED, WRITTEN]);
    expect(readFileSync(join(root, 'same.json'), 'utf8')).toBe('same');
    expect(log.lines()).toEqual([`${sha('same')} 4 same.json`]);
  });

  it('update mode with stale paths (the spare\'s own older copies): compared with the published tree; rewritten in place (shorter: cut), linked when unchanged, removed when deleted; other links never written through', () => {
    const pub = join(root, 'stale-pub');
    const st = join(root, 'stale-staging');
    const files: Record<string, [published: string | null, staging: string | null]> = {
      'a.json': ['published a', 'older copy of a, longer than the new bytes'],
      'b.json': ['published b', 'older b'],
      'c.json': [null, 'older c'],
      'd.json': ['published d', 'older d'],
      'e.json': ['published e', null],
      'f.json': ['published f', 'older f'],
      'g.json': ['published g', 'older g'],
    };
    for (const [p, [a, b]] of Object.entries(files)) {
      for (const [dir, text] of [[pub, a], [st, b]] as const) {
        mkdirSync(dir, { recursive: true });
        if (text !== null) writeFileSync(join(dir, p), text);
      }
    }
    linkSync(join(st, 'f.json'), join(root, 'someone-elses-link'));
    const inode = (p: string) => statSync(join(st, p)).ino;
    const before = Object.fromEntries(['a.json', 'f.json'].map((p) => [p, inode(p)]));
    const update: UpdateTarget = { published: pub, stale: new Set([...Object.keys(files), 'h.json']) };
    const log = newRows();
    const r = writeBatch(st, update, new Set(), log.rows, batchOf([['a.json', 'new a'], ['b.json', 'published b'], ['c.json', null], ['d.json', null], ['e.json', 'new e'], ['f.json', 'new f'], ['x.json', 'new x']]), { path: st });
    expect([...r.status!]).toEqual([WRITTEN, UNCHANGED, ABSENT, DELETED, WRITTEN, WRITTEN, WRITTEN]);
    expect(readFileSync(join(st, 'a.json'), 'utf8')).toBe('new a');
    expect(inode('a.json')).toBe(before['a.json']); // in place, cut to the new size
    expect(inode('b.json')).toBe(statSync(join(pub, 'b.json')).ino); // the published file, linked
    expect(existsSync(join(st, 'c.json'))).toBe(false);
    expect(existsSync(join(st, 'd.json'))).toBe(false);
    expect(readFileSync(join(st, 'e.json'), 'utf8')).toBe('new e');
    expect(readFileSync(join(st, 'f.json'), 'utf8')).toBe('new f');
    expect(inode('f.json')).not.toBe(before['f.json']); // a new file: the other link keeps the older bytes
    expect(readFileSync(join(root, 'someone-elses-link'), 'utf8')).toBe('older f');
    // What the batch did not go to is left for the build to link (staging.ts refreshTree); the published tree is untouched.
    expect([...update.stale].sort()).toEqual(['g.json', 'h.json']);
    expect(readFileSync(join(st, 'g.json'), 'utf8')).toBe('older g');
    for (const [p, [a]] of Object.entries(files)) expect(a === null ? existsSync(join(pub, p)) : readFileSync(join(pub, p), 'utf8')).toBe(a ?? false);
    expect(log.lines()).toEqual([`${sha('new a')} 5 a.json`, `${DEL} 0 c.json`, `${DEL} 0 d.json`, `${sha('new e')} 5 e.json`, `${sha('new f')} 5 f.json`, `${sha('new x')} 5 x.json`]);
  });

  it('update mode on a staging tree of hard links: a changed file becomes a new file at its path (the published one keeps its bytes and inode), nothing else is left in the directory', () => {
    const pub = join(root, 'linked-pub');
    const st = join(root, 'linked-staging');
    mkdirSync(join(pub, 'address'), { recursive: true });
    mkdirSync(join(st, 'address'), { recursive: true });
    for (const p of ['address/a.json', 'address/b.json']) {
      writeFileSync(join(pub, p), `published ${p}`);
      linkSync(join(pub, p), join(st, p));
    }
    const pubInode = statSync(join(pub, 'address/a.json')).ino;
    const log = newRows();
    const update: UpdateTarget = { published: pub, stale: new Set() };
    const r = writeBatch(st, update, new Set(), log.rows, batchOf([['address/a.json', 'new a'], ['address/b.json', 'published address/b.json']]), { path: st });
    expect([...r.status!]).toEqual([WRITTEN, UNCHANGED]);
    expect(readFileSync(join(st, 'address/a.json'), 'utf8')).toBe('new a');
    expect(statSync(join(st, 'address/a.json')).ino).not.toBe(pubInode);
    expect(statSync(join(st, 'address/a.json')).nlink).toBe(1);
    expect(readFileSync(join(pub, 'address/a.json'), 'utf8')).toBe('published address/a.json');
    expect(statSync(join(pub, 'address/a.json'))).toMatchObject({ ino: pubInode, nlink: 1 });
    expect(statSync(join(st, 'address/b.json')).ino).toBe(statSync(join(pub, 'address/b.json')).ino);
    expect(readdirSync(join(st, 'address')).sort()).toEqual(['a.json', 'b.json']);
    expect(log.lines()).toEqual([`${sha('new a')} 5 address/a.json`]);
  });

  it('never writes or deletes through a symlink: at the path (fresh, update, stale), or as a directory on the way; the build fails naming the path', () => {
    const outside = join(root, 'outside');
    mkdirSync(outside);
    writeFileSync(join(outside, 'victim.txt'), 'victim');
    writeFileSync(join(outside, 'x.json'), 'outside x');
    const pub = join(root, 'sym-pub');
    const st = join(root, 'sym-staging');
    mkdirSync(pub);
    mkdirSync(st);
    writeFileSync(join(pub, 'stats.json'), 'published');
    mkdirSync(join(pub, 'dir'));
    writeFileSync(join(pub, 'dir', 'x.json'), 'published x');
    const staleX = (): UpdateTarget => ({ published: pub, stale: new Set(['dir/x.json']) });
    symlinkSync(join(outside, 'victim.txt'), join(st, 'stats.json'));
    symlinkSync(outside, join(st, 'dir'));
    const stale = (): UpdateTarget => ({ published: pub, stale: new Set(['stats.json']) });
    const cases: [UpdateTarget | undefined, string, string | null][] = [
      [undefined, 'stats.json', 'new'],
      [stale(), 'stats.json', 'new'],
      [undefined, 'dir/x.json', 'new'],
      [undefined, 'dir/new.json', 'new'],
      [sameTree(st), 'dir/x.json', 'new'],
      [sameTree(st), 'dir/x.json', null],
      [staleX(), 'dir/x.json', 'published x'],
      [staleX(), 'dir/x.json', 'new'],
      [staleX(), 'dir/x.json', null],
    ];
    for (const [update, rel, data] of cases) {
      const at = { path: '' };
      expect(() => writeFile(st, update, new Set(), rel, data === null ? null : Buffer.from(data), newRows().rows, at), `${rel} ${update ? 'update' : 'fresh'} ${data}`).toThrow(
        /symbolic link/,
      );
      expect(at.path).toBe(join(st, rel));
    }
    expect(readdirSync(outside).sort()).toEqual(['victim.txt', 'x.json']);
    expect(readFileSync(join(outside, 'victim.txt'), 'utf8')).toBe('victim');
    expect(readFileSync(join(outside, 'x.json'), 'utf8')).toBe('outside x');
    expect(lstatSync(join(st, 'stats.json')).isSymbolicLink()).toBe(true);
    // Deleting the path removes the link itself, never what it points to.
    expect(writeFile(st, stale(), new Set(), 'stats.json', null, newRows().rows, { path: '' })).toBe(DELETED);
    expect(existsSync(join(st, 'stats.json'))).toBe(false);
    expect(readFileSync(join(outside, 'victim.txt'), 'utf8')).toBe('victim');
  });

  it('a deletion removes the directories it leaves empty (a tree holds no directory its manifest does not account for), and a thread whose directory was removed by another writes there again', () => {
    const t = join(root, 'prune');
    mkdirSync(t);
    const dirs = new Set<string>();
    const other = new Set<string>();
    for (const rel of ['name/d/a.json', 'name/d/b.json', 'name/e.json']) writeFile(t, undefined, dirs, rel, Buffer.from(rel), newRows().rows, { path: '' });
    writeFile(t, undefined, other, 'name/d/c.json', Buffer.from('c'), newRows().rows, { path: '' }); // `other` knows name/d now
    for (const rel of ['name/d/a.json', 'name/d/b.json', 'name/d/c.json']) expect(writeFile(t, sameTree(t), dirs, rel, null, newRows().rows, { path: '' })).toBe(DELETED);
    expect(readdirSync(join(t, 'name'))).toEqual(['e.json']);
    expect(writeFile(t, sameTree(t), dirs, 'name/e.json', null, newRows().rows, { path: '' })).toBe(DELETED);
    expect(readdirSync(t)).toEqual([]);
    expect(writeFile(t, undefined, other, 'name/d/c.json', Buffer.from('c again'), newRows().rows, { path: '' })).toBe(WRITTEN);
    expect(readFileSync(join(t, 'name/d/c.json'), 'utf8')).toBe('c again');
  });

  it("the program's threads start with a small young generation (their nursery would otherwise stay resident at tens of MiB each)", async () => {
    // Any module of the program's threads: this one does nothing without its workerData kind.
    const worker = startWorker(new URL('../src/publish/site-writer.ts', import.meta.url).href, './site-writer-worker', { kind: 'none' });
    await new Promise((resolve) => worker.once('online', resolve));
    expect(worker.resourceLimits?.maxYoungGenerationSizeMb).toBe(4);
    await worker.terminate();
  });
});
