// The tree read threads of packFromTree (src/pack/read-ahead.ts): every file of a tree, in
// manifest order, with its sha256 and gzip; a block's `.bin` with its txs' places and documents.
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { TreeReader } from '../src/pack/read-ahead.js';
import { buildSnapshot } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { tempDir } from './support/memory-builds.js';

const dir = tempDir('snapshot-read-ahead-');
const BLOCK_BIN = /^block\/[0-9a-f]{64}\.bin$/;

describe('tree read threads', () => {
  let tree: string;
  let lines: { sha: string; size: number; path: string }[];

  beforeAll(async () => {
    tree = dir('tree');
    await buildSnapshot({ source: demoSource(), outDir: tree });
    lines = readFileSync(join(tree, MANIFEST_PATH), 'utf8')
      .trim()
      .split('\n')
      .map((l) => l.split(' '))
      .map(([sha, size, path]) => ({ sha: sha!, size: Number(size), path: path! }));
  });

  it('give every file in manifest order with its sha256 and gzip; a block .bin with its txs, each slice and document the tree’s own', async () => {
    const reader = new TreeReader(tree, 6);
    async function* items() {
      yield* lines;
    }
    const seen: string[] = [];
    let blocks = 0;
    const txs = new Set<string>();
    try {
      for await (const [line, read] of reader.ahead(items(), () => true, (l) => l.path.endsWith('.json'), (l) => BLOCK_BIN.test(l.path))) {
        seen.push(line.path);
        const file = (await read!)!;
        const bytes = readFileSync(join(tree, line.path));
        expect(file.bytes.equals(bytes), line.path).toBe(true);
        expect(file.sha).toBe(line.sha);
        expect(createHash('sha256').update(bytes).digest('hex')).toBe(line.sha);
        if (line.path.endsWith('.json') && bytes.length > 0) expect(gunzipSync(file.gzip!).equals(bytes), line.path).toBe(true);
        else expect(file.gzip).toBeUndefined();
        if (!BLOCK_BIN.test(line.path)) {
          expect(file.txs).toBeUndefined();
          continue;
        }
        blocks++;
        expect(file.txs!.length).toBeGreaterThan(0);
        for (const t of file.txs!) {
          // Checked against the tree's files for the tx, which the block's bytes did not make; a
          // tx of an off-chain block has none.
          const bin = join(tree, `tx/${t.txid}.bin`);
          if (!existsSync(bin)) {
            expect(t.doc).toBeUndefined();
            continue;
          }
          txs.add(t.txid);
          expect(file.bytes.subarray(t.start, t.start + t.length).equals(readFileSync(bin))).toBe(true);
          expect(t.doc!.bytes.equals(readFileSync(join(tree, `tx/${t.txid}.json`)))).toBe(true);
        }
      }
    } finally {
      await reader.close();
    }
    expect(seen).toEqual(lines.map((l) => l.path));
    expect(blocks).toBe(lines.filter((l) => BLOCK_BIN.test(l.path)).length);
    expect(txs.size).toBe(lines.filter((l) => /^tx\/[0-9a-f]{64}\.bin$/.test(l.path)).length);
  });

  it('a file that is not there fails its read, naming it; with `missing`, it is undefined', async () => {
    const reader = new TreeReader(tree, 6);
    try {
      await expect(reader.read(['tx/none.json'])).rejects.toThrow(`${tree}/tx/none.json: ENOENT`);
      expect(await reader.read(['tx/none.json', MANIFEST_PATH], true)).toEqual([undefined, expect.objectContaining({ sha: expect.any(String) })]);
    } finally {
      await reader.close();
    }
  });
});
