import { createHash } from 'node:crypto';
import { mkdirSync, mkdtempSync, readFileSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ABSENT, DELETED, UNCHANGED, WRITTEN, writeBatch, writeFile, type WriteBatch } from '../src/publish/writer-worker.js';
import { ManifestRows } from '../src/publish/manifest-rows.js';
import { startWorker } from '../src/publish/worker-start.js';

let logs = 0;
/** A fresh manifest-row log in its own directory, and what it wrote out once sealed (one run: its lines). */
function newRows(): { rows: ManifestRows; lines: () => string[] } {
  const dir = join(tmpdir(), `snapshot-writer-rows-${process.pid}-${logs++}`);
  rmSync(dir, { recursive: true, force: true });
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
    const r = writeBatch(root, false, new Set(), log.rows, batchOf([['tx/a.json', '{"a":1}'], ['b/c/d.bin', 'xyz']]), { path: root });
    expect(readFileSync(join(root, 'tx/a.json'), 'utf8')).toBe('{"a":1}');
    expect([...r.status!]).toEqual([WRITTEN, WRITTEN]);
    expect(r.bytes).toBe(10);
    expect(log.lines()).toEqual([`${sha('xyz')} 3 b/c/d.bin`, `${sha('{"a":1}')} 7 tx/a.json`]);

    const old = new Date(2000, 0, 1);
    utimesSync(join(root, 'tx/a.json'), old, old);
    const log2 = newRows();
    const u = writeBatch(root, true, new Set(), log2.rows, batchOf([['tx/a.json', '{"a":1}'], ['b/c/d.bin', 'new'], ['gone.json', null], ['b/c/d2.bin', null]]), { path: root });
    expect([...u.status!]).toEqual([UNCHANGED, WRITTEN, ABSENT, ABSENT]);
    expect(statSync(join(root, 'tx/a.json')).mtime.getTime()).toBe(old.getTime());
    expect(readFileSync(join(root, 'b/c/d.bin'), 'utf8')).toBe('new');

    writeFileSync(join(root, 'gone.json'), 'x');
    const d = writeBatch(root, true, new Set(), log2.rows, batchOf([['gone.json', null]]), { path: root });
    expect([...d.status!]).toEqual([DELETED]);
    expect(() => statSync(join(root, 'gone.json'))).toThrow();
    // No row for the unchanged file; one for each deletion (the last of gone.json's two).
    expect(log2.lines()).toEqual([`${sha('new')} 3 b/c/d.bin`, `${DEL} 0 b/c/d2.bin`, `${DEL} 0 gone.json`]);
  });

  it('reports the path it failed on', () => {
    writeFileSync(join(root, 'file'), 'not a dir');
    const at = { path: root };
    expect(() => writeBatch(root, false, new Set(), newRows().rows, batchOf([['ok.json', '1'], ['file/under.json', '2']]), at)).toThrow();
    expect(at.path).toBe(join(root, 'file/under.json'));
  });

  it('writes a file given as byte parts (gathered writes, more parts than one writev takes), the same bytes and sha256 as one buffer', () => {
    const parts = Array.from({ length: 1500 }, (_, i) => Buffer.from(i % 3 ? `part ${i},` : ''));
    const whole = Buffer.concat(parts);
    const log = newRows();
    const dirs = new Set<string>();
    expect(writeFile(root, false, dirs, 'p/parts.json', parts, log.rows, { path: '' })).toBe(WRITTEN);
    expect(readFileSync(join(root, 'p/parts.json'))).toEqual(whole);
    expect(log.lines()).toEqual([`${sha(whole)} ${whole.length} p/parts.json`]);
    // Update mode: the same parts leave the file alone; one byte more or less is a change.
    const rows = newRows().rows;
    expect(writeFile(root, true, dirs, 'p/parts.json', parts, rows, { path: '' })).toBe(UNCHANGED);
    expect(writeFile(root, true, dirs, 'p/parts.json', [...parts, Buffer.from('x')], rows, { path: '' })).toBe(WRITTEN);
    expect(writeFile(root, true, dirs, 'p/parts.json', parts.slice(0, -1), rows, { path: '' })).toBe(WRITTEN);
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
      expect(writeFile(root, false, new Set(), `big/${i}.json`, parts, log.rows, { path: '' })).toBe(WRITTEN);
      expect(readFileSync(join(root, `big/${i}.json`)).equals(whole)).toBe(true);
      expect(log.lines()).toEqual([`${sha(whole)} ${whole.length} big/${i}.json`]);
      // Update mode writes a temporary file the same way and renames it over the old one.
      const changed = [...parts, Buffer.from('!')];
      const log2 = newRows();
      expect(writeFile(root, true, new Set(), `big/${i}.json`, changed, log2.rows, { path: '' })).toBe(WRITTEN);
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
    expect(writeFile(root, false, new Set(), 'gen/doc.json', parts(), log.rows, { path: '' })).toBe(WRITTEN);
    const whole = Buffer.concat(made);
    expect(readFileSync(path).equals(whole)).toBe(true);
    expect(log.lines()).toEqual([`${sha(whole)} ${whole.length} gen/doc.json`]);
    // Parts 16, 32 and 48 were asked for after at least the 256 KiB slices before them were written.
    expect(sizesSeen.slice(1).every((size, k) => size >= (k + 1) * 16 * 64 * 1024 - 256 * 1024 && size > 0)).toBe(true);
    // Update mode takes the parts as a list (it compares them with the old bytes first).
    const again = newRows();
    expect(writeFile(root, true, new Set(), 'gen/doc.json', made.values(), again.rows, { path: '' })).toBe(UNCHANGED);
    expect(writeFile(root, true, new Set(), 'gen/doc.json', [...made, Buffer.from('x')].values(), again.rows, { path: '' })).toBe(WRITTEN);
    expect(readFileSync(path).equals(Buffer.concat([whole, Buffer.from('x')]))).toBe(true);
  });

  it("the program's threads start with a small young generation (their nursery would otherwise stay resident at tens of MiB each)", async () => {
    // Any module of the program's threads: this one does nothing without its workerData kind.
    const worker = startWorker(new URL('../src/publish/writer.ts', import.meta.url).href, './writer-worker', { kind: 'none' });
    await new Promise((resolve) => worker.once('online', resolve));
    expect(worker.resourceLimits?.maxYoungGenerationSizeMb).toBe(4);
    await worker.terminate();
  });
});
