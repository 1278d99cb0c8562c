// Incremental builds make each changed compact address document from its previous version: the
// entries of txs whose /tx document did not change are copied from the published file
// (pipeline/address-previous.ts, address-document.ts). Checked here: the previous document is cut
// into exactly its entries (against JSON.parse), anything not in the expected layout is refused,
// a damaged previous document makes the build assemble that document whole (still the right
// bytes), and the reuse really happens (the build report counts it).
import { readFileSync, realpathSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { demoChain } from '../src/builder/demo.js';
import { parseBlock } from '../src/chain/block.js';
import { parsePreviousAddressDocument } from '../src/pipeline/address-previous.js';
import { valueEnd } from '../src/render/json-scan.js';
import { addressCompactParts, renderAddressCapped, type UnspentSplice } from '../src/render/address.js';
import { outElementRanges, renderTx } from '../src/render/tx.js';
import { scenario } from './support/chains.js';
import { manifestMismatches } from './support/helpers.js';
import { build, manifest, tempDir } from './support/memory-builds.js';

const chain = demoChain();
const texts = chain.main.flatMap((b) =>
  parseBlock(b.raw, { auxpow: true }).txs.map((tx, i) => {
    const spenders = tx.outputs.map((_, n) => ((n + i) % 2 ? { hash: b.txids[0]!, n } : undefined));
    return { txid: tx.txid, text: Buffer.from(renderTx(tx, chain.network, spenders, { block: b.hash, height: b.height, time: b.time })) };
  }),
);
const ADDRESS = 'n1"\\é';

/** A compact address document over `picked` txs (their outputs without next_in as unspent). */
function documentOf(picked: typeof texts, address = ADDRESS): Buffer {
  const unspent: UnspentSplice[] = [];
  for (const { txid, text } of picked) {
    const out = (JSON.parse(text.toString()) as { out: { next_in?: unknown }[] }).out;
    const ranges = outElementRanges(text);
    out.forEach((o, vout) => void (o.next_in || unspent.push({ txid, vout, text, ranges })));
  }
  const summary = { address, hash160: 'ab'.repeat(20), txInCount: picked.length, txOutCount: 1, coinIn: 5n, coinOut: 2n };
  return Buffer.concat([...addressCompactParts({ ...summary, unspent, transactions: picked.map((t) => ({ txid: t.txid, text: t.text })) })]);
}

describe('parsePreviousAddressDocument', () => {
  it('cuts a document into exactly its unspent and transaction entries', () => {
    const doc = documentOf(texts);
    const parsed = JSON.parse(doc.toString()) as { unspent: { tx: { hash: string; n: number } }[]; transactions: Record<string, unknown> };
    const prev = parsePreviousAddressDocument(doc, ADDRESS)!;
    expect(prev).toBeDefined();
    expect([...prev.txs.keys()]).toEqual(Object.keys(parsed.transactions));
    for (const [txid, [s, e]] of prev.txs) expect(JSON.parse(`{${doc.subarray(s, e).toString()}}`)).toEqual({ [txid]: parsed.transactions[txid] });
    expect(prev.unspent.size).toBe(parsed.unspent.length);
    for (const u of parsed.unspent) {
      const [s, e] = prev.unspent.get(`${u.tx.hash}:${u.tx.n}`)!;
      expect(JSON.parse(doc.subarray(s, e).toString())).toEqual(u);
    }
    // An address without transactions.
    const empty = parsePreviousAddressDocument(documentOf([]), ADDRESS)!;
    expect([empty.txs.size, empty.unspent.size]).toEqual([0, 0]);
  });

  it('refuses what is not the expected layout of that address', () => {
    const doc = documentOf(texts.slice(0, 6));
    const s = doc.toString();
    const txid = texts[3]!.txid;
    const other = texts[0]!.txid;
    const bad: [string, string][] = [
      ['another address', documentOf(texts.slice(0, 6), 'n2').toString()],
      ['capped', renderAddressCapped(20000)],
      ['pretty', JSON.stringify(JSON.parse(s), null, 2)],
      ['cut', s.slice(0, s.length - 300)],
      ['trailing byte', s + '\n'],
      ['key is not the hash', s.replace(`"${txid}":{"hash":"${txid}"`, `"${other.slice(0, 63)}0":{"hash":"${txid}"`)],
      ['tx_sz wrong', s.replace('"tx_sz":6,', '"tx_sz":5,')],
      ['unspent head changed', s.replace('{"tx":{"hash":', '{"tx":{"hash" :')],
      ['empty', ''],
    ];
    expect(parsePreviousAddressDocument(doc, ADDRESS)).toBeDefined();
    for (const [what, text] of bad) {
      expect(text, what).not.toBe(s);
      expect(parsePreviousAddressDocument(Buffer.from(text), ADDRESS), what).toBeUndefined();
    }
  });

  it('given the txids it holds, finds the same entries by their heads, and refuses a document holding others or in another order', () => {
    const doc = documentOf(texts);
    const ids = texts.map((t) => t.txid);
    const scanned = parsePreviousAddressDocument(doc, ADDRESS)!;
    const located = parsePreviousAddressDocument(doc, ADDRESS, ids)!;
    expect(located).toBeDefined();
    expect([...located.txs]).toEqual([...scanned.txs]);
    expect([...located.unspent]).toEqual([...scanned.unspent]);
    expect(parsePreviousAddressDocument(documentOf([]), ADDRESS, [])!.txs.size).toBe(0);
    // A head inside a string of another entry is not a head: its quotes are escaped there.
    const nested = texts.slice(0, 3).map((t, i) => (i === 1 ? { ...t, text: Buffer.from(t.text.toString().replace('"ver":', `"note":${JSON.stringify(`"${ids[2]}":{"hash":"${ids[2]}"`)},"ver":`)) } : t));
    const withNote = documentOf(nested);
    expect(withNote.includes(`\\"${ids[2]}\\":{\\"hash\\":\\"${ids[2]}\\"`)).toBe(true);
    const cut = parsePreviousAddressDocument(withNote, ADDRESS, ids.slice(0, 3))!;
    expect([...cut.txs]).toEqual([...parsePreviousAddressDocument(withNote, ADDRESS)!.txs]);
    const refused: [string, readonly string[]][] = [
      ['one more in the document than expected', ids.slice(0, -1)],
      ['one the document does not hold', [...ids.slice(0, -1), 'f'.repeat(64)]],
      ['another order', [ids[1]!, ids[0]!, ...ids.slice(2)]],
      ['a txid twice', [...ids.slice(0, -1), ids[0]!]],
    ];
    for (const [what, expected] of refused) expect(parsePreviousAddressDocument(doc, ADDRESS, expected), what).toBeUndefined();
    // The same layout checks as the scan.
    const s = doc.toString();
    for (const text of [s.slice(0, s.length - 300), s + '\n', s.replace(`"tx_sz":${ids.length},`, `"tx_sz":${ids.length - 1},`)])
      expect(parsePreviousAddressDocument(Buffer.from(text), ADDRESS, ids)).toBeUndefined();
  });

  it('valueEnd skips brackets and escaped quotes inside strings', () => {
    const v = { a: '}]"{[\\', b: ['\\"', { c: '\\\\"}' }], d: '' };
    const text = Buffer.from(`${JSON.stringify(v)},"next":1`);
    expect(valueEnd(text, 0)).toBe(JSON.stringify(v).length);
    expect(valueEnd(Buffer.from('{"a":"}'), 0)).toBe(-1);
    expect(valueEnd(Buffer.from('{"a":[1,2]'), 0)).toBe(-1);
  });
});

const tmp = tempDir('snapshot-reuse-');
const shas = (dir: string) => new Map(manifest(dir).trim().split('\n').map((l) => [l.split(' ')[2]!, l.split(' ')[0]!]));

describe('incremental address documents from their previous version', () => {
  it('on render threads: copies the unchanged txs, takes only the changed ones from this run, equals a full build', async () => {
    const sc = scenario(61, { reorg: false });
    const out = tmp('threads');
    await build(sc.after, out, sc.n - 3, {}, { renderThreadsAbove: 0 });
    const r = await build(sc.after, out, sc.n, {}, { renderThreadsAbove: 0 });
    expect(r.mode).toBe('incremental');
    expect(r.renderThreads).toBeGreaterThan(0);
    const fresh = tmp('threads-fresh');
    await build(sc.after, fresh, sc.n);
    expect(manifest(out)).toBe(manifest(fresh));
    expect(manifestMismatches(out)).toEqual([]);
    expect(r.addressReuse.fallbacks).toBe(0);
    expect(r.addressReuse.spliced).toBeGreaterThan(0);
    // Every previous version cut by the txids the index says it holds.
    expect(r.addressReuse.located).toBe(r.addressReuse.spliced);
    // Most txs of a changed document are old ones: copied, not rendered again.
    expect(r.addressReuse.reusedTxs).toBeGreaterThan(r.addressReuse.renderedTxs);
  });

  it('a damaged or foreign previous document is not used: that document is assembled whole, the tree still equals a full build', async () => {
    const sc = scenario(62, { reorg: true, depth: 3 });
    const out = tmp('damaged');
    const fresh = tmp('damaged-fresh');
    await build(sc.before, out, sc.m);
    await build(sc.after, fresh, sc.n);
    // The address documents a reorg to n changes (so the incremental run rewrites them), damaged in the published tree.
    const before = shas(out);
    const after = shas(fresh);
    const changed = [...before.keys()].filter((p) => p.startsWith('address/') && p.endsWith('.json') && after.has(p) && after.get(p) !== before.get(p)).sort();
    expect(changed.length).toBeGreaterThanOrEqual(4);
    const published = realpathSync(out);
    const damage: ((s: string) => string)[] = [
      (s) => s.slice(0, Math.floor(s.length / 2)),
      (s) => JSON.stringify(JSON.parse(s), null, 2),
      () => renderAddressCapped(12345),
      (s) => s.replace(/"transactions":\{"([0-9a-f])/, (_, c: string) => `"transactions":{"${c === '0' ? '1' : '0'}`),
      (s) => s + ' ',
    ];
    changed.forEach((p, i) => {
      const path = join(published, p);
      writeFileSync(path + '.tmp', damage[i % damage.length]!(readFileSync(path, 'utf8')));
      renameSync(path + '.tmp', path);
    });
    const r = await build(sc.after, out, sc.n);
    expect(r.mode).toBe('incremental');
    expect(r.rolledBackTo).toBe(sc.m - 3);
    expect(r.addressReuse.fallbacks).toBe(changed.length);
    expect(manifest(out)).toBe(manifest(fresh));
    expect(manifestMismatches(out)).toEqual([]);
  });
});
