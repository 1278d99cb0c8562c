// `snapshot serve` of a pack answers every URL of the conformance table (test/support/conformance-rows.ts:
// every document path, every name variant by its query, the error URLs) with the same status,
// media type, cache policy and bytes as `snapshot serve` of the tree built the same way, with and
// without Accept-Encoding: gzip; ETag, 304, HEAD and Range behave as for the tree, and a rebuild of
// the pack is picked up. Trees: the demo chain and Bitcoin mainnet 0–599 (../shared).
import { readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NETWORKS } from '../src/chain/networks.js';
import { SITE_INFO_PATH, type SiteInfo } from '../src/contract/layout.js';
import { startServer, type RunningServer } from '../src/serve/server.js';
import { buildSnapshot } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { memorySource } from '../src/source/memory.js';
import type { ChainSource } from '../src/source/types.js';
import { buildTable, listFiles, namesOf, type Row } from './support/conformance-rows.js';
import { manifestPaths } from './support/pack-compare.js';
import { framedBlocks, mapLimit, readChain } from './support/helpers.js';
import { rawRequest, type RawResponse } from './support/http-raw.js';
import { HOSTS, tempDir } from './support/memory-builds.js';
import { describeShared } from './support/shared-data.js';

const tmp = tempDir('snapshot-pack-serve-');
const GZIP = 'Accept-Encoding: gzip, deflate\r\n';

interface Seen {
  status: number;
  type: string;
  cache: string;
  body: string;
}

/** The answer as a client sees it: gzip decoded (node:zlib) when the server sent it gzip. */
function seen(r: RawResponse): Seen {
  const body = r.headers['content-encoding'] === 'gzip' ? gunzipSync(r.body) : r.body;
  return { status: r.status, type: r.headers['content-type'] ?? '', cache: r.headers['cache-control'] ?? '', body: body.toString('latin1') };
}

function servedSuite(title: string, suite: typeof describe, source: () => ChainSource, opts: { checkRows: boolean; earlierHeight: number }) {
  suite(title, () => {
    let tree: string;
    let rows: Row[];
    let treeServer: RunningServer;
    let packServer: RunningServer;

    beforeAll(async () => {
      tree = tmp(`${title}-tree`);
      const pack = tmp(`${title}-pack`);
      await Promise.all([buildSnapshot({ source: source(), outDir: tree, hosts: HOSTS }), buildSnapshot({ source: source(), outDir: pack, hosts: HOSTS, format: 'pack', height: opts.earlierHeight })]);
      treeServer = await startServer({ dir: tree, port: 0 });
      // Served from an earlier height, then rebuilt to the tip: the server picks up the new pack.
      packServer = await startServer({ dir: pack, port: 0, log: () => {} });
      expect(JSON.parse(seen(await rawRequest(packServer.url, '/stats.json')).body).blocks.main).toBe(opts.earlierHeight + 1);
      await buildSnapshot({ source: source(), outDir: pack, hosts: HOSTS, format: 'pack' });
      await new Promise((r) => setTimeout(r, 1100));
      const info = JSON.parse(readFileSync(join(tree, SITE_INFO_PATH), 'utf8')) as SiteInfo;
      rows = buildTable({ label: title, dir: tree, info, names: namesOf(listFiles(tree)) });
    }, 300_000);
    afterAll(async () => {
      await treeServer?.close();
      await packServer?.close();
    });

    for (const [label, headers] of [
      ['without Accept-Encoding', ''],
      ['with Accept-Encoding: gzip', GZIP],
    ] as const) {
      it(`every row answers as from the tree, ${label}`, async () => {
        expect(rows.length).toBeGreaterThan(1000);
        const [fromTree, fromPack] = await Promise.all([
          mapLimit(rows, 8, (r) => rawRequest(treeServer.url, r.target, 'GET', headers)),
          mapLimit(rows, 8, (r) => rawRequest(packServer.url, r.target, 'GET', headers)),
        ]);
        let gzipped = 0;
        rows.forEach((row, i) => {
          const p = fromPack[i]!;
          if (p.headers['content-encoding'] === 'gzip') gzipped++;
          expect(seen(p), row.target).toEqual(seen(fromTree[i]!));
          if (opts.checkRows) expect(seen(p), row.target).toEqual({ status: row.status, type: row.type, cache: row.cache, body: row.body.toString('latin1') });
        });
        if (headers) expect(gzipped).toBeGreaterThan(rows.length / 4);
        else expect(gzipped).toBe(0);
      }, 180_000);
    }

    it('ETag and 304, HEAD, Range and Vary as for the tree', async () => {
      const sample = rows.filter((r) => r.status === 200 && /^\/(tx|block)\/[0-9a-f]{64}\.(json|bin|hex)$/.test(r.target)).slice(0, 12);
      expect(sample.length).toBe(12);
      for (const row of sample) {
        for (const headers of ['', GZIP]) {
          const get = await rawRequest(packServer.url, row.target, 'GET', headers);
          const gz = get.headers['content-encoding'] === 'gzip';
          expect(gz ? gunzipSync(get.body).equals(row.body) : get.body.equals(row.body), row.target).toBe(true);
          expect(Number(get.headers['content-length'])).toBe(get.body.length);
          expect(get.headers['etag'], row.target).toMatch(/^W\/"\d+-[0-9a-f]+"$/);
          if (gz) expect(get.headers['vary']).toBe('Accept-Encoding');
          const head = await rawRequest(packServer.url, row.target, 'HEAD', headers);
          expect({ status: head.status, body: head.body.length, etag: head.headers['etag'], length: head.headers['content-length'] }).toEqual({
            status: 200,
            body: 0,
            etag: get.headers['etag'],
            length: String(get.body.length),
          });
          const again = await rawRequest(packServer.url, row.target, 'GET', `${headers}If-None-Match: ${get.headers['etag']}\r\n`);
          expect({ status: again.status, body: again.body.length }).toEqual({ status: 304, body: 0 });
          const part = await rawRequest(packServer.url, row.target, 'GET', `${headers}Range: bytes=2-9\r\n`);
          expect(part.status).toBe(206);
          expect(part.headers['content-range']).toBe(`bytes 2-9/${get.body.length}`);
          expect(part.body.equals(get.body.subarray(2, 10))).toBe(true);
          const beyond = await rawRequest(packServer.url, row.target, 'GET', `${headers}Range: bytes=${get.body.length + 5}-\r\n`);
          const treeBeyond = await rawRequest(treeServer.url, row.target, 'GET', `Range: bytes=${row.body.length + 5}-\r\n`);
          expect(beyond.status).toBe(416);
          expect(beyond.headers['content-type']).toBe(treeBeyond.headers['content-type']);
        }
        // The plain and the gzip form are different representations: different ETags.
        const plain = await rawRequest(packServer.url, row.target, 'HEAD');
        const zipped = await rawRequest(packServer.url, row.target, 'HEAD', GZIP);
        if (zipped.headers['content-encoding'] === 'gzip') expect(zipped.headers['etag']).not.toBe(plain.headers['etag']);
      }
    }, 180_000);
  });
}

servedSuite('demo', describe, () => demoSource(), { checkRows: true, earlierHeight: 120 });

function nbitcoinSource(): ChainSource {
  const raws = [...framedBlocks(readChain('nbitcoin', 'blk00000.dat')), ...framedBlocks(readChain('nbitcoin', 'blk00001.dat'))];
  return memorySource(NETWORKS.bitcoin, raws.map((raw) => ({ raw, kind: 'main' as const })), 'nbitcoin blk files');
}

// The table's address error rows are written for Namecoin regtest addresses: on Bitcoin only the tree is the reference.
servedSuite('Bitcoin 0–599', describeShared('chaindata'), nbitcoinSource, { checkRows: false, earlierHeight: 300 });

describe('closing a server of a pack', () => {
  /** The descriptors this process holds open on files below `dir` (Linux: /proc/self/fd). */
  const openBelow = (dir: string): string[] =>
    readdirSync('/proc/self/fd').flatMap((fd) => {
      try {
        const target = readlinkSync(`/proc/self/fd/${fd}`);
        return target.startsWith(`${dir}/`) ? [target] : [];
      } catch {
        return []; // closed meanwhile (the directory listing's own descriptor)
      }
    });

  it('closes every file of the pack it read, the replaced one too', async () => {
    const pack = tmp('closing-pack');
    await buildSnapshot({ source: demoSource(), outDir: pack, format: 'pack', height: 60 });
    const server = await startServer({ dir: pack, port: 0, log: () => {} });
    const address = manifestPaths(tmp('closing-pack.state', 'tree')).find((p) => p.startsWith('address/'))!;
    for (const target of ['/stats.json', `/${address}`]) expect((await rawRequest(server.url, target)).status, target).toBe(200);
    // Rebuilt: the next request past the watch's interval opens the new pack, the old one stays open for a while.
    await buildSnapshot({ source: demoSource(), outDir: pack, format: 'pack', height: 120 });
    await new Promise((r) => setTimeout(r, 1100));
    expect(JSON.parse(seen(await rawRequest(server.url, '/stats.json')).body).blocks.main).toBe(121);
    const before = openBelow(pack);
    expect(new Set(before.map((f) => f.slice(f.lastIndexOf('.')))), before.join(' ')).toEqual(new Set(['.idx', '.part']));
    expect(new Set(before.filter((f) => f.endsWith('.idx'))).size, 'the old and the new index').toBe(2);
    await server.close();
    expect(openBelow(pack)).toEqual([]);
  }, 120_000);
});
