/**
 * The pack's host glue answers like `snapshot serve` on the tree on real chains, as on the demo
 * chain (test/pack-hosts.test.ts): Bitcoin mainnet 0–599 (the nbitcoin blk files) and the Namecoin
 * Core regtest datadir (its `blocks/` directory, obfuscated blk files, stale blocks, names with
 * hostile bytes). Each chain is built twice, `--format tree` (the reference, served by
 * `snapshot serve`) and `--format pack` (with the glue the build writes beside the pack); every
 * manifest path of the tree and every conformance-table target of the chain (every document,
 * every name in all 64 variants by its query, the error cases) gets the same status, content type,
 * cache policy, CORS header and bytes, plain and with `Accept-Encoding: gzip` (a gzip answer
 * decoded), and no request costs more range reads than the format allows (2; a recipe 2 plus its
 * groups of nearby tx blobs), through
 *   - the generated Cloudflare Worker in workerd with wrangler's local R2;
 *   - the generated Netlify Edge Function in Deno, reading the pack by HTTP Range.
 * Unlike the demo test, each target and gzip choice is asked once per runtime (the answer
 * cache's second answers are the demo test's part). The runtimes are skipped with the reason when
 * their binaries cannot run here; the chains are skipped when ../shared lacks them (and fail with
 * CI=true).
 */
import { mkdirSync, readFileSync } from 'node:fs';
import type { Agent } from 'node:http';
import { join } from 'node:path';
import { beforeAll, expect, it } from 'vitest';
import { NETWORKS } from '../src/chain/networks.js';
import { ALL_NAME_VARIANTS, namePath } from '../src/contract/layout.js';
import { PACK_WORKER_DIR } from '../src/hosts/pack-glue.js';
import { route, makeRouterSite } from '../src/contract/router.js';
import { Progress } from '../src/runtime/progress.js';
import { buildSnapshot, type BuildOptions } from '../src/site/build.js';
import { openBlocksDir } from '../src/source/blkdir.js';
import { memorySource } from '../src/source/memory.js';
import { listFiles, namesOf } from './support/conformance-rows.js';
import { chainPath, framedBlocks, readChain } from './support/helpers.js';
import { tempDir } from './support/memory-builds.js';
import { expectConditional, hostCase, runDeno, runWorkerd, type HostCase, type TallyFloor } from './support/pack-hosts.js';
import { describeShared } from './support/shared-data.js';
import { denoBinary, workerdBinary } from './runtimes/launch.js';

const dir = tempDir('snapshot-pack-hosts-chains-');
const silent = new Progress({ write: () => true } as unknown as NodeJS.WriteStream, false);
const DENO = denoBinary();
const WORKERD = workerdBinary();

interface Chain {
  key: string;
  label: string;
  /** What it needs of ../shared. */
  shared: string[];
  source: BuildOptions['source'];
  /** The name asked in every query spelling (the others in one spelling per variant, some in more). */
  richName?: Buffer;
  /** Lower bounds of what each front end must have seen. */
  floor: TallyFloor;
}

const CHAINS: Chain[] = [
  {
    key: 'btc',
    label: 'Bitcoin mainnet 0–599',
    shared: ['chaindata/nbitcoin/blk00000.dat', 'chaindata/nbitcoin/blk00001.dat'],
    source: async () => {
      const raws = [...framedBlocks(readChain('nbitcoin', 'blk00000.dat')), ...framedBlocks(readChain('nbitcoin', 'blk00001.dat'))];
      return memorySource(NETWORKS.bitcoin, raws.map((raw) => ({ raw, kind: 'main' as const })), 'nbitcoin blk files');
    },
    floor: { counted: 2000, recipes: 300, gzipAnswers: 500 },
  },
  {
    key: 'nmc',
    label: 'the Namecoin Core regtest datadir (blocks:)',
    shared: ['chaindata/namecoin-core-regtest/blocks/xor.dat'],
    source: () => openBlocksDir(join(chainPath('namecoin-core-regtest'), 'blocks'), NETWORKS['namecoin-regtest']),
    // Updated in the chain's last block, with the longest history.
    richName: Buffer.from('d/harbor'),
    floor: { counted: 3000, recipes: 500, gzipAnswers: 1500 },
  },
];

for (const chain of CHAINS) {
  describeShared(...chain.shared)(`pack hosts: ${chain.label}`, () => {
    let c: HostCase;
    const scratch = (name: string) => {
      const d = dir(chain.key, name);
      mkdirSync(d, { recursive: true });
      return d;
    };

    beforeAll(async () => {
      mkdirSync(dir(chain.key));
      const [tree, pack] = [dir(chain.key, 'tree'), dir(chain.key, 'pack')];
      await buildSnapshot({ source: chain.source, outDir: tree, progress: silent });
      await buildSnapshot({ source: chain.source, outDir: pack, format: 'pack', progress: silent });
      c = await hostCase(tree, pack, chain.key, chain.richName);
    }, 300_000);

    it('the targets cover the tree: every manifest path, every name in every variant by its query, the error cases', () => {
      const manifest = new Set(c.manifestPaths);
      expect(c.targets.filter((t) => manifest.has(t)).length).toBe(manifest.size);
      expect(c.targets.length).toBeGreaterThan(manifest.size + 500);
      const statuses = new Set([...c.want.values()].map((a) => a.status));
      for (const s of [200, 400, 404, 414]) expect(statuses.has(s), `a target answered ${s}`).toBe(true);
      // Every name's every variant is asked by its query (not by its file path), and answers 200.
      const names = namesOf(listFiles(c.tree));
      const site = makeRouterSite(c.info);
      const byQuery = new Set(c.targets.filter((t) => t.includes('?') && c.want.get(t)!.status === 200).map((t) => route(t, site)).flatMap((r) => (r.type === 'file' ? [r.file] : [])));
      for (const n of names) {
        for (const v of ALL_NAME_VARIANTS) {
          const file = namePath(n, v);
          // The base variant is its plain path (a manifest path); every other one is asked by its query.
          if (v.history || v.with.size > 0) expect(byQuery.has(file), `${n.toString('latin1')} ${file}`).toBe(true);
          else expect(manifest.has('/' + file), file).toBe(true);
        }
      }
      if (chain.richName) expect(names.some((n) => n.equals(chain.richName!))).toBe(true);
      console.log(`pack hosts: ${chain.label}: ${c.targets.length} targets (${manifest.size} manifest paths, ${names.length} names)`);
    });

    // The two runtimes at the same time: each one's counted pass waits for one answer at a time.
    const run = { once: true, after: (agent: Agent, url: string) => expectConditional(c, agent, url) };
    (WORKERD.skip !== undefined ? it.skip : it.concurrent)(`Cloudflare Worker in workerd with wrangler's local R2${WORKERD.skip ? ` (${WORKERD.skip})` : ''}`, { timeout: 600_000 }, async () => {
      // The bucket the build's own wrangler.toml names.
      const bucket = /bucket_name = "([^"]+)"/.exec(readFileSync(join(c.pack, PACK_WORKER_DIR, 'wrangler.toml'), 'utf8'))![1]!;
      await runWorkerd(c, `${chain.label}: Cloudflare Worker in workerd (local R2)`, scratch('workerd'), bucket, chain.floor, run);
    });

    (DENO.skip !== undefined ? it.skip : it.concurrent)(`Netlify Edge Function in Deno over HTTP Range${DENO.skip ? ` (${DENO.skip})` : ''}`, { timeout: 600_000 }, async () => {
      await runDeno(c, `${chain.label}: Netlify Edge Function in Deno (HTTP Range)`, DENO.path!, scratch('deno-dir'), chain.floor, run);
    });
  });
}
