import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { ABSENT, DELETED, UNCHANGED, WRITTEN, writeBatch, type WriteBatch } from '../src/publish/writer-worker.js';

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
});
