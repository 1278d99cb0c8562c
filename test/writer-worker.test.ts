import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ABSENT, DELETED, UNCHANGED, WRITTEN, writeBatch, writeFile, type WriteBatch } from '../src/publish/writer-worker.js';

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

  it('writes files with their sha256, then in update mode keeps unchanged files and deletes', () => {
    const r = writeBatch(root, false, new Set(), batchOf([['tx/a.json', '{"a":1}'], ['b/c/d.bin', 'xyz']]), { path: root });
    expect(readFileSync(join(root, 'tx/a.json'), 'utf8')).toBe('{"a":1}');
    expect([...r.status!]).toEqual([WRITTEN, WRITTEN]);
    expect(r.bytes).toBe(10);
    expect(Buffer.from(r.digests!.subarray(32, 64)).toString('hex')).toBe(createHash('sha256').update('xyz').digest('hex'));

    const old = new Date(2000, 0, 1);
    utimesSync(join(root, 'tx/a.json'), old, old);
    const u = writeBatch(root, true, new Set(), batchOf([['tx/a.json', '{"a":1}'], ['b/c/d.bin', 'new'], ['gone.json', null], ['b/c/d2.bin', null]]), { path: root });
    expect([...u.status!]).toEqual([UNCHANGED, WRITTEN, ABSENT, ABSENT]);
    expect(statSync(join(root, 'tx/a.json')).mtime.getTime()).toBe(old.getTime());
    expect(readFileSync(join(root, 'b/c/d.bin'), 'utf8')).toBe('new');

    writeFileSync(join(root, 'gone.json'), 'x');
    const d = writeBatch(root, true, new Set(), batchOf([['gone.json', null]]), { path: root });
    expect([...d.status!]).toEqual([DELETED]);
    expect(() => statSync(join(root, 'gone.json'))).toThrow();
  });

  it('reports the path it failed on', () => {
    writeFileSync(join(root, 'file'), 'not a dir');
    const at = { path: root };
    expect(() => writeBatch(root, false, new Set(), batchOf([['ok.json', '1'], ['file/under.json', '2']]), at)).toThrow();
    expect(at.path).toBe(join(root, 'file/under.json'));
  });

  it('writes a file given as byte parts (gathered writes, more parts than one writev takes), the same bytes and sha256 as one buffer', () => {
    const parts = Array.from({ length: 1500 }, (_, i) => Buffer.from(i % 3 ? `part ${i},` : ''));
    const whole = Buffer.concat(parts);
    const digests = Buffer.alloc(64);
    const dirs = new Set<string>();
    expect(writeFile(root, false, dirs, 'p/parts.json', parts, digests, 32, { path: '' })).toBe(WRITTEN);
    expect(readFileSync(join(root, 'p/parts.json'))).toEqual(whole);
    expect(digests.subarray(32).toString('hex')).toBe(createHash('sha256').update(whole).digest('hex'));
    // Update mode: the same parts leave the file alone; one byte more or less is a change.
    expect(writeFile(root, true, dirs, 'p/parts.json', parts, digests, 0, { path: '' })).toBe(UNCHANGED);
    expect(writeFile(root, true, dirs, 'p/parts.json', [...parts, Buffer.from('x')], digests, 0, { path: '' })).toBe(WRITTEN);
    expect(writeFile(root, true, dirs, 'p/parts.json', parts.slice(0, -1), digests, 0, { path: '' })).toBe(WRITTEN);
    expect(readFileSync(join(root, 'p/parts.json'))).toEqual(Buffer.concat(parts.slice(0, -1)));
  });
});
