// Measures what the pack format's choices rest on, on real trees: compression ratio and speed
// per level and document class, pack size against the tree, lookup cost, and address documents
// as recipes over the tx documents they embed (bytes saved, cost of gzip on serve).
//
//   node --import tsx bench/pack.ts [tree dir …]
// Without arguments it builds the demo tree and (with ../shared) Bitcoin mainnet 0–599 first.
import { mkdtempSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';
import { NETWORKS } from '../src/chain/networks.js';
import { MANIFEST_PATH } from '../src/contract/layout.js';
import { encodeRecipe, type RecipeSegment } from '../src/contract/pack-format.js';
import { packFromTree } from '../src/pack/from-tree.js';
import { answerBytes, PackReader } from '../src/pack/reader.js';
import { buildSnapshot } from '../src/site/build.js';
import { demoSource } from '../src/source/demo.js';
import { memorySource } from '../src/source/memory.js';
import { HAVE_SHARED, framedBlocks, readChain } from '../test/support/helpers.js';

const work = mkdtempSync(join(tmpdir(), 'bench-pack-'));
const ms = (t: bigint) => Number(process.hrtime.bigint() - t) / 1e6;

async function trees(): Promise<string[]> {
  if (process.argv.length > 2) return process.argv.slice(2);
  const out = [join(work, 'demo')];
  await buildSnapshot({ source: demoSource(), outDir: out[0]! });
  if (HAVE_SHARED) {
    const raws = [...framedBlocks(readChain('nbitcoin', 'blk00000.dat')), ...framedBlocks(readChain('nbitcoin', 'blk00001.dat'))];
    out.push(join(work, 'btc-0-599'));
    await buildSnapshot({ source: memorySource(NETWORKS.bitcoin, raws.map((raw) => ({ raw, kind: 'main' as const })), 'nbitcoin'), outDir: out[1]! });
  }
  return out;
}

function classOf(p: string): string {
  if (p.startsWith('address/')) return 'address';
  if (p.startsWith('name/') || p.startsWith('v/')) return 'name';
  const m = /^(tx|block)\/.*\.(json|bin|hex)$/.exec(p);
  return m ? `${m[1]}.${m[2]}` : 'other';
}

function compression(files: { path: string; bytes: Buffer }[]): void {
  const groups = new Map<string, Buffer[]>();
  for (const f of files) groups.set(classOf(f.path), [...(groups.get(classOf(f.path)) ?? []), f.bytes]);
  const codecs: [string, (b: Buffer) => Buffer][] = [
    ...[1, 6, 9].map((l) => [`gzip-${l}`, (b: Buffer) => gzipSync(b, { level: l })] as [string, (b: Buffer) => Buffer]),
    ...[5, 11].map(
      (q) =>
        [`br-${q}`, (b: Buffer) => brotliCompressSync(b, { params: { [constants.BROTLI_PARAM_QUALITY]: q, [constants.BROTLI_PARAM_SIZE_HINT]: b.length } })] as [
          string,
          (b: Buffer) => Buffer,
        ],
    ),
  ];
  console.log(`  class          files      bytes  ${codecs.map(([n]) => n.padStart(16)).join('')}   (ratio, MB/s of input)`);
  for (const [g, bufs] of [...groups].sort()) {
    const raw = bufs.reduce((n, b) => n + b.length, 0);
    const cells = codecs.map(([, f]) => {
      f(bufs[0]!); // warm up
      const t = process.hrtime.bigint();
      let out = 0;
      for (const b of bufs) out += f(b).length;
      const s = ms(t) / 1000;
      return `${(out / raw).toFixed(3)} ${(raw / 1e6 / s).toFixed(1).padStart(6)}`.padStart(16);
    });
    console.log(`  ${g.padEnd(12)} ${String(bufs.length).padStart(7)} ${String(raw).padStart(10)}  ${cells.join('')}`);
  }
}

function recipes(tree: string, files: { path: string; bytes: Buffer }[]): void {
  const byPath = new Map(files.map((f) => [f.path, f.bytes]));
  let docs = 0;
  let docBytes = 0;
  let gz = 0;
  let recipeBytes = 0;
  let embedded = 0;
  let regzipMs = 0;
  for (const f of files) {
    if (!f.path.startsWith('address/')) continue;
    const txids = Object.keys((JSON.parse(f.bytes.toString()) as { transactions?: Record<string, unknown> }).transactions ?? {});
    const segs: RecipeSegment[] = [];
    let at = 0;
    const found = txids.map((t) => ({ text: byPath.get(`tx/${t}.json`)!, at: f.bytes.indexOf(byPath.get(`tx/${t}.json`)!) })).sort((a, b) => a.at - b.at);
    for (const x of found) {
      if (x.at < at) continue;
      segs.push({ type: 'literal', bytes: f.bytes.subarray(at, x.at) });
      segs.push({ type: 'range', blob: { part: 0, offset: 1e9, stored: 2000, encoding: 1, crc: 0 }, start: 0, length: x.text.length });
      at = x.at + x.text.length;
      embedded++;
    }
    segs.push({ type: 'literal', bytes: f.bytes.subarray(at) });
    const r = encodeRecipe(segs);
    docs++;
    docBytes += f.bytes.length;
    gz += gzipSync(f.bytes).length;
    recipeBytes += Math.min(r.length, gzipSync(r).length);
    const t = process.hrtime.bigint();
    gzipSync(f.bytes, { level: 6 });
    regzipMs += ms(t);
  }
  console.log(
    `  address documents: ${docs} (${docBytes} bytes, ${embedded} embedded tx documents): stored gzip ${gz} bytes, as recipes ${recipeBytes} bytes ` +
      `(${((1 - recipeBytes / gz) * 100).toFixed(1)}% less); gzip-6 of the assembled answers on serve ${(docBytes / 1e6 / (regzipMs / 1000)).toFixed(1)} MB/s`,
  );
}

for (const tree of await trees()) {
  const lines = readFileSync(join(tree, MANIFEST_PATH), 'utf8').trim().split('\n');
  const files = lines.map((l) => l.split(' ')[2]!).map((path) => ({ path, bytes: readFileSync(join(tree, path)) }));
  const treeBytes = files.reduce((n, f) => n + f.bytes.length, 0);
  console.log(`\n${tree}: ${files.length} files, ${treeBytes} bytes`);
  compression(files);
  recipes(tree, files);
  const packDir = join(work, `pack-${files.length}`);
  let t = process.hrtime.bigint();
  const s = await packFromTree(tree, packDir);
  const convert = ms(t);
  const packBytes = readdirSync(packDir).reduce((n, f) => n + statSync(join(packDir, f)).size, 0);
  console.log(
    `  pack: ${packBytes} bytes (${(packBytes / treeBytes).toFixed(3)} of the tree; index ${s.indexBytes}, ${s.parts.length} part(s), ${s.blobs} blobs), ` +
      `converted in ${convert.toFixed(0)} ms`,
  );
  const r = await PackReader.open(packDir, { slotCache: 0 });
  const r0 = r.reads;
  t = process.hrtime.bigint();
  for (const f of files) await answerBytes((await r.get(f.path))!);
  const lookup = ms(t);
  console.log(`  lookups (slot cache off): ${((r.reads - r0) / files.length).toFixed(2)} range reads each, ${((files.length / lookup) * 1000).toFixed(0)} a second`);
  await r.close();
}
rmSync(work, { recursive: true, force: true });
