// `snapshot serve` never serves through a symlink inside the tree: a file or a
// directory below the root that is a symlink answers the normal JSON 404, by the in-memory cache
// and by the disk path alike. The root itself may be a symlink (`out` -> `out.releases/<n>`), and a swap
// of that symlink is followed.
import { mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { txPath } from '../src/contract/layout.js';
import { startServer, type RunningServer } from '../src/serve/server.js';
import { rawRequest } from './support/http-raw.js';
import { writeTestTree, type TestTree } from './support/site-tree.js';

describe('serve: symlinks inside the tree are never followed', () => {
  let root: string;
  let tree: TestTree;
  let out: string;
  let secret: string;
  const servers: RunningServer[] = [];
  const fake = (n: number) => n.toString(16).padStart(64, 'c');

  beforeAll(async () => {
    root = mkdtempSync(join(tmpdir(), 'serve-links-'));
    tree = await writeTestTree({ hosts: [] });
    // The root reached through a symlink, as a build publishes it.
    mkdirSync(join(root, 'out.releases'));
    renameSync(tree.dir, join(root, 'out.releases', 'r1'));
    symlinkSync('out.releases/r1', join(root, 'out'));
    out = join(root, 'out');
    secret = join(root, 'secret.txt');
    writeFileSync(secret, 'root:x:0:0:secret\n');
    const rel = join(root, 'out.releases', 'r1');
    symlinkSync(secret, join(rel, txPath(fake(1), 'bin'))); // leaves the tree
    symlinkSync(join(rel, txPath(tree.txids[0]!, 'json')), join(rel, txPath(fake(2), 'json'))); // stays inside it
    mkdirSync(join(root, 'elsewhere', 'block'), { recursive: true });
    writeFileSync(join(root, 'elsewhere', 'block', `${fake(3)}.json`), '{"planted":true}');
    for (const cache of [undefined, false] as const) servers.push(await startServer({ dir: out, port: 0, cache, info: tree.info }));
  });
  afterAll(async () => {
    for (const s of servers) await s.close();
    rmSync(root, { recursive: true, force: true });
  });

  it.each([
    ['a file symlink leaving the tree', () => `/tx/${fake(1)}.bin`, (id: string) => `Tx ${id} not found.`, 1],
    ['a file symlink inside the tree', () => `/tx/${fake(2)}.json`, (id: string) => `Tx ${id} not found.`, 2],
  ] as const)('%s: JSON 404 (cache, disk, Range)', async (_what, target, text, n) => {
    for (const s of servers) {
      for (const extra of ['', 'Range: bytes=0-3\r\n']) {
        const r = await rawRequest(s.url, target(), 'GET', extra);
        expect(r.status, `${s.url} ${extra}`).toBe(404);
        expect(JSON.parse(r.body.toString())).toEqual({ error: text(fake(n)) });
        expect(r.body.toString()).not.toContain('secret');
      }
    }
  });

  it('a directory symlink inside the tree is not followed', async () => {
    // block/<hash>.json is looked up under block/; point block itself elsewhere.
    const rel = join(root, 'out.releases', 'r1');
    renameSync(join(rel, 'block'), join(rel, 'block.real'));
    symlinkSync(join(root, 'elsewhere', 'block'), join(rel, 'block'));
    try {
      for (const s of servers) {
        const r = await rawRequest(s.url, `/block/${fake(3)}.json`);
        expect(r.status).toBe(404);
        expect(JSON.parse(r.body.toString())).toEqual({ error: `Block ${fake(3)} not found.` });
      }
    } finally {
      rmSync(join(rel, 'block'));
      renameSync(join(rel, 'block.real'), join(rel, 'block'));
    }
  });

  it('regular files are served through the root symlink, and a swap of it is followed', async () => {
    const id = tree.txids[0]!;
    const want = readFileSync(join(out, txPath(id, 'json')), 'utf8');
    const s = await startServer({ dir: out, port: 0, cache: { revalidateMs: 30 }, info: tree.info });
    try {
      expect((await rawRequest(s.url, `/tx/${id}.json`)).body.toString()).toBe(want);
      const r2 = join(root, 'out.releases', 'r2');
      mkdirSync(join(r2, 'tx'), { recursive: true });
      writeFileSync(join(r2, txPath(id, 'json')), '{"r2":true}');
      symlinkSync('out.releases/r2', join(root, 'out.new'));
      renameSync(join(root, 'out.new'), out);
      await new Promise((r) => setTimeout(r, 60));
      for (const extra of ['', 'Range: bytes=0-3\r\n']) {
        const r = await rawRequest(s.url, `/tx/${id}.json`, 'GET', extra);
        expect(r.body.toString()).toBe(extra ? '{"r2' : '{"r2":true}');
      }
    } finally {
      await s.close();
      rmSync(out);
      symlinkSync('out.releases/r1', out);
    }
  });
});
