import { buildSnapshot } from './dist/site/build.js';
import { openBlocksDir } from './dist/source/blkdir.js';
import { NETWORKS } from './dist/chain/networks.js';
const source = await openBlocksDir('/dev/shm/ir/blocks', NETWORKS['namecoin-regtest']);
const t = performance.now();
const r = await buildSnapshot({ source, outDir: '/dev/shm/ir/base/out', height: Number(process.argv[2] ?? 600) });
console.log(((performance.now() - t) / 1000).toFixed(1), 's', r.mode, JSON.stringify(r.blockDocuments), 'written', r.written, 'unchanged', r.unchanged);
console.log(r.stageSeconds.map(([s, t]) => `${s} ${t.toFixed(2)}`).join(', '));
await source.close();
