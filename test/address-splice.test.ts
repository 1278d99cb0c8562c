// The byte splicing of address documents (render/address.ts addressCompactParts, render/tx.ts
// outElementRanges) checked against JSON.parse of the whole documents and against the object
// renderer (toJson) fed with parsed outputs, on the demo chain's real transactions.
import { describe, expect, it } from 'vitest';
import { demoChain } from '../src/builder/demo.js';
import { parseBlock } from '../src/chain/block.js';
import { addressCompactParts, renderAddress, type UnspentSplice } from '../src/render/address.js';
import type { JsonValue } from '../src/render/json.js';
import { outElementRanges, renderTx } from '../src/render/tx.js';

const chain = demoChain();
const texts = chain.main.flatMap((b) =>
  parseBlock(b.raw, { auxpow: true }).txs.map((tx, i) => {
    // Spend every other output (by a made-up input) so that some out elements carry next_in.
    const spenders = tx.outputs.map((_, n) => ((n + i) % 2 ? { hash: b.txids[0]!, n } : undefined));
    return { txid: tx.txid, text: Buffer.from(renderTx(tx, chain.network, spenders, { block: b.hash, height: b.height, time: b.time })) };
  }),
);

describe('outElementRanges', () => {
  it('finds each out element of every demo tx, byte for byte as JSON.parse sees it', () => {
    let outputs = 0;
    for (const { text } of texts) {
      const parsed = JSON.parse(text.toString()) as { out: unknown[] };
      const ranges = outElementRanges(text);
      expect(ranges.length).toBe(parsed.out.length * 2);
      parsed.out.forEach((o, i) => expect(JSON.parse(text.subarray(ranges[2 * i], ranges[2 * i + 1]).toString())).toEqual(o));
      outputs += parsed.out.length;
    }
    expect(outputs).toBeGreaterThan(texts.length);
  });

  it('skips brackets, quotes and backslashes inside strings', () => {
    const doc = { hash: 'x', in: [{ scriptSig: '"out":[ ] } {' }], out: [{ value: 'a]}', s: 'q\\"[{' }, { value: '\\', t: ['[', { u: '}' }] }, {}], nid: '"out":[' };
    const text = Buffer.from(JSON.stringify(doc));
    const ranges = outElementRanges(text);
    expect(ranges.length).toBe(6);
    doc.out.forEach((o, i) => expect(JSON.parse(text.subarray(ranges[2 * i], ranges[2 * i + 1]).toString())).toEqual(o));
  });

  it('rejects a document without an out array or cut inside it', () => {
    expect(() => outElementRanges(Buffer.from('{"in":[]}'))).toThrow(/without an "out" array/);
    expect(() => outElementRanges(Buffer.from('{"out":[{"value":"1"}'))).toThrow(/ends inside/);
  });
});

describe('addressCompactParts', () => {
  /** An address-like document over `picked` txs, unspent: each tx's outputs without next_in. */
  function both(picked: typeof texts): [Buffer, string] {
    const unspent: UnspentSplice[] = [];
    const values: JsonValue[] = [];
    for (const { txid, text } of picked) {
      const out = (JSON.parse(text.toString()) as { out: Record<string, JsonValue>[] }).out;
      const ranges = outElementRanges(text);
      out.forEach((o, vout) => {
        if (o.next_in) return;
        unspent.push({ txid, vout, text, ranges });
        values.push({ tx: { hash: txid, n: vout }, ...o });
      });
    }
    const summary = { address: 'n1"\\é', hash160: 'ab'.repeat(20), txInCount: picked.length, txOutCount: 3, coinIn: 10n ** 20n, coinOut: 7n };
    const compact = Buffer.concat([...addressCompactParts({ ...summary, unspent, transactions: picked.map((t) => ({ txid: t.txid, text: t.text })) })]);
    const plain = renderAddress({ ...summary, unspent: values, transactions: new Map(picked.map((t) => [t.txid, t.text.toString()])) });
    return [compact, plain];
  }

  it('gives the same bytes as the object renderer, and JSON.parse reads the parts back', () => {
    for (const picked of [texts, texts.slice(5, 6), texts.filter((_, i) => i % 7 === 3)]) {
      const [compact, plain] = both(picked);
      expect(compact.toString()).toBe(plain);
      const doc = JSON.parse(compact.toString()) as { address: string; unspent: { tx: { hash: string } }[]; transactions: Record<string, unknown>; tx_sz: number; balance: number };
      expect(doc.address).toBe('n1"\\é');
      expect(Object.keys(doc.transactions)).toEqual(picked.map((t) => t.txid));
      for (const t of picked) expect(doc.transactions[t.txid]).toEqual(JSON.parse(t.text.toString()));
      expect(doc.tx_sz).toBe(picked.length);
      expect(doc.unspent.length).toBeGreaterThan(0);
    }
  });

  it('renders an address without transactions as empty array and object', () => {
    const [compact, plain] = both([]);
    expect(compact.toString()).toBe(plain);
    expect(compact.toString()).toContain('"unspent":[],"tx_sz":0,"transactions":{}}');
  });

  it('lazy texts: the same bytes, each tx text taken only when its part is produced, in document order', () => {
    const [compact] = both(texts);
    const taken: string[] = [];
    const lazy = (txid: string, text: Buffer) => () => (taken.push(txid), text);
    const unspent: UnspentSplice[] = [];
    for (const { txid, text } of texts) {
      const out = (JSON.parse(text.toString()) as { out: { next_in?: unknown }[] }).out;
      out.forEach((o, vout) => void (o.next_in || unspent.push({ txid, vout, text: lazy(txid, text) })));
    }
    const summary = { address: 'n1"\\é', hash160: 'ab'.repeat(20), txInCount: texts.length, txOutCount: 3, coinIn: 10n ** 20n, coinOut: 7n };
    const gen = addressCompactParts({ ...summary, unspent, transactions: texts.map((t) => ({ txid: t.txid, text: lazy(t.txid, t.text) })) });
    expect(taken).toEqual([]); // nothing before the first part is asked for
    const parts = [...gen];
    expect(Buffer.concat(parts).equals(compact)).toBe(true);
    expect(taken).toEqual([...unspent.map((u) => u.txid), ...texts.map((t) => t.txid)]);
  });
});

