/**
 * The browsing UI's pure helpers (src/ui), run under node without a browser: amounts keep
 * every digit, routes round-trip, the search guesses by shape, name text keeps every byte, and
 * name operations read from ASM agree with the chain's own parser on every demo output.
 */
import { describe, expect, it } from 'vitest';
import { demoChain, DEMO_NAME_OPS } from '../src/builder/demo.js';
import { nameOutputs, parseNameScript } from '../src/chain/name-script.js';
import { parseBlock } from '../src/chain/block.js';
import { scriptToAsm } from '../src/chain/script.js';
import { encodeNamePath } from '../src/contract/layout.js';
import { amountParts, amountShortText, bigHuman, bytesHuman, confirmations, decimalToUnits, fmtInt, showName, unitsToDecimal, visible } from '../src/ui/format.js';
import { exampleNames, filterNames, type NameEntry } from '../src/ui/name-list.js';
import { api, href, parseRoute, searchPlan } from '../src/ui/route.js';
import { bytesToText, nameBytesOf, nameOpOfAsm, pctDecodeBytes, pctEncodeBytes } from '../src/ui/text.js';

/** Deterministic pseudo-random bytes. */
function bytes(seed: number, n: number): Uint8Array {
  let x = seed >>> 0 || 1;
  return Uint8Array.from({ length: n }, () => {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    return (x >>> 0) & 0xff;
  });
}

describe('amounts', () => {
  it('every output value of the demo chain: the parts shown keep every digit, and the decimal round-trips', () => {
    const chain = demoChain();
    let n = 0;
    for (const b of chain.main) {
      for (const tx of parseBlock(b.raw, { auxpow: chain.network.auxpow }).txs) {
        for (const o of tx.outputs) {
          const dec = unitsToDecimal(o.value);
          const p = amountParts(dec);
          expect((p.int + '.' + p.frac + p.zeros).replace(/,/g, '')).toBe(dec);
          expect(decimalToUnits(dec)).toBe(Number(o.value));
          n++;
        }
      }
    }
    expect(n).toBeGreaterThan(150);
  });

  it('an amount with trailing zeros (5575.00460000) keeps all its digits, grouped; negative and zero amounts', () => {
    expect(amountParts('5575.00460000')).toEqual({ neg: false, int: '5,575', frac: '0046', zeros: '0000' });
    expect(amountParts('-1234567.10000000')).toEqual({ neg: true, int: '1,234,567', frac: '1', zeros: '0000000' });
    expect(amountParts('0.00000000')).toEqual({ neg: false, int: '0', frac: '', zeros: '00000000' });
    expect(unitsToDecimal(557500460000n)).toBe('5575.00460000');
    expect(unitsToDecimal(-5)).toBe('-0.00000005');
    expect(decimalToUnits('-0.00000005')).toBe(-5);
    expect(amountShortText(2_100_000_000_000_000)).toBe('21,000,000');
    expect(amountShortText(50_000_000)).toBe('0.5');
  });

  it('counts, sizes, big numbers, confirmations, visible control characters', () => {
    expect(fmtInt(1234567)).toBe('1,234,567');
    expect(fmtInt(-1234)).toBe('-1,234');
    expect(fmtInt(999)).toBe('999');
    expect(bytesHuman(999)).toBe('999 B');
    expect(bytesHuman(1_234_567)).toBe('1.23 MB');
    expect(bigHuman('123456789012345')).toBe('123,456,789,012,345');
    expect(bigHuman('1234567890123456789012')).toBe('1.234 \u00d7 10^21');
    expect(confirmations(150, 150)).toBe(1);
    expect(confirmations(150, 0)).toBe(151);
    expect(visible('a\u0000b\u007f\tc')).toBe('a\\x00b\\x7F\tc');
    expect(showName('')).toBe('(empty name)');
    expect(showName('line\nbreak')).toBe('line\\nbreak');
  });
});

describe('name text', () => {
  it('keeps a leading UTF-8 BOM (every byte of a name or value is shown)', () => {
    expect(bytesToText(Uint8Array.from([0xef, 0xbb, 0xbf, 0x41]))).toBe('\ufeffA');
    expect(bytesToText(Uint8Array.from([0xef, 0xbb, 0xbf]))).toBe('\ufeff');
  });

  it('decodes as the build does: UTF-8 when valid, else Latin-1 (one character per byte)', () => {
    for (const op of DEMO_NAME_OPS) {
      for (const hex of [op.nameHex, op.valueHex]) {
        const b = Buffer.from(hex, 'hex');
        const text = bytesToText(b);
        const back = Buffer.from(text, 'utf8').equals(b) ? b : Buffer.from(text, 'latin1');
        expect(back.equals(b)).toBe(true);
      }
    }
    expect(bytesToText(Uint8Array.from([0x64, 0x2f, 0xff, 0xfe]))).toBe('d/\u00ff\u00fe');
  });

  it('the bytes of a names.json entry: from its path, or for long names from its text', () => {
    const samples = [
      ...DEMO_NAME_OPS.map((o) => Buffer.from(o.nameHex, 'hex')),
      Buffer.alloc(255, 'a'),
      Buffer.from('d/' + '\u00e9'.repeat(120)),
      Buffer.alloc(250, 0xff),
      Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.alloc(250, 'x')]),
    ];
    for (const b of samples) {
      const path = encodeNamePath(b);
      expect(Buffer.from(nameBytesOf(bytesToText(b), path)!).equals(b)).toBe(true);
    }
    expect(samples.filter((b) => encodeNamePath(b).startsWith('~x/')).length).toBe(4);
  });
});

describe('routes', () => {
  it('name bytes survive the #/name/ route for any bytes', () => {
    for (let i = 0; i < 200; i++) {
      const b = bytes(i + 1, i % 40);
      const r = parseRoute(href.name(b));
      expect(r.kind).toBe('name');
      expect(r.kind === 'name' && Buffer.from(r.bytes).equals(Buffer.from(b))).toBe(true);
      expect(pctDecodeBytes(pctEncodeBytes(b))).toEqual(b);
    }
    // Raw text typed into the address bar counts as UTF-8.
    expect(parseRoute('#/name/d/caf\u00e9')).toEqual({ kind: 'name', bytes: new Uint8Array(Buffer.from('d/caf\u00e9')) });
  });

  it('every kind of page', () => {
    const id = 'ab'.repeat(32);
    expect(parseRoute('')).toEqual({ kind: 'home' });
    expect(parseRoute('#/')).toEqual({ kind: 'home' });
    expect(parseRoute(`#/tx/${id.toUpperCase()}`)).toEqual({ kind: 'tx', id });
    expect(parseRoute(`#/block/${id}`)).toEqual({ kind: 'block', id });
    expect(parseRoute('#/tx/123')).toEqual({ kind: 'bad', text: 'tx/123' });
    expect(parseRoute(href.address('ncrt1qxyz'))).toEqual({ kind: 'address', id: 'ncrt1qxyz' });
    expect(parseRoute('#/names')).toEqual({ kind: 'names', filter: '' });
    expect(parseRoute(href.names('d/h i'))).toEqual({ kind: 'names', filter: 'd/h i' });
    expect(parseRoute(href.search('a b%'))).toEqual({ kind: 'search', text: 'a b%' });
    expect(parseRoute('#/search/%E0%A4')).toEqual({ kind: 'search', text: '%E0%A4' });
    expect(parseRoute('#/nope')).toEqual({ kind: 'bad', text: 'nope' });
  });

  it('API URLs use the build’s own name-path encoding', () => {
    for (let i = 0; i < 50; i++) {
      const b = bytes(i + 7, i * 7);
      expect(api.name(b)).toBe(`name/${encodeNamePath(b)}.json`);
    }
    expect(api.name(Buffer.from('d/x'), 'history')).toBe('name/d/x.json?history');
    expect(api.address('a b')).toBe('address/a%20b.json');
  });
});

describe('search by shape', () => {
  const tx = 'ab'.repeat(32);
  const mined = '00000000' + 'cd'.repeat(28);
  it('64 hex digits: tx then block, block first when it looks mined; nothing else', () => {
    expect(searchPlan(tx.toUpperCase(), 150)).toEqual([{ try: 'tx', id: tx }, { try: 'block', id: tx }]);
    expect(searchPlan(mined, 150)).toEqual([{ try: 'block', id: mined }, { try: 'tx', id: mined }]);
  });
  it('a height up to the tip (any depth: one block-height document), then the same text as a name', () => {
    expect(searchPlan('145', 150).map((s) => s.try)).toEqual(['height', 'name']);
    expect(searchPlan('145', 150)[0]).toEqual({ try: 'height', height: 145 });
    expect(searchPlan('3', 200)[0]).toEqual({ try: 'height', height: 3 });
    expect(searchPlan('0', 900_000)[0]).toEqual({ try: 'height', height: 0 });
    expect(searchPlan('201', 200).map((s) => s.try)).toEqual(['name']);
    expect(searchPlan('151', 150).map((s) => s.try)).toEqual(['name']);
    expect(searchPlan('5', 1000).map((s) => s.try)).toEqual(['height', 'name']);
    expect(searchPlan('5', null).map((s) => s.try)).toEqual(['name']);
  });
  it('addresses (Base58 and bech32) before names; names as UTF-8, then Latin-1 bytes when those are not UTF-8', () => {
    expect(searchPlan('n1BoatSLRHtKNngkdXEeobR76b53LETtpy', 1).map((s) => s.try)).toEqual(['address', 'name']);
    expect(searchPlan('ncrt1qw508d6qejxtdg4y5r3zarvary0c5xw7kyagl4l', 1).map((s) => s.try)).toEqual(['address', 'name']);
    expect(searchPlan('d/history', 1)).toEqual([{ try: 'name', bytes: new Uint8Array(Buffer.from('d/history')) }]);
    const latin = searchPlan('d/\u00ff\u00fe', 1);
    expect(latin.map((s) => s.try === 'name' && Buffer.from(s.bytes).toString('hex'))).toEqual(['642fc3bfc3be', '642ffffe']);
  });
});

describe('name operations from ASM agree with the chain parser (src/chain/name-script.ts)', () => {
  it('every output of every demo transaction', () => {
    const chain = demoChain();
    let ops = 0;
    let outputs = 0;
    for (const b of [...chain.main, ...chain.side]) {
      for (const tx of parseBlock(b.raw, { auxpow: chain.network.auxpow }).txs) {
        const byVout = new Map(nameOutputs(tx).map((x) => [x.vout, x.op]));
        tx.outputs.forEach((o, vout) => {
          outputs++;
          const want = byVout.get(vout);
          const got = nameOpOfAsm(scriptToAsm(o.script), tx.version);
          if (!want) return expect(got).toBeNull();
          ops++;
          expect(got?.op).toBe(want.op);
          expect(got?.name && Buffer.from(got.name).toString('hex')).toBe(want.name?.toString('hex'));
          expect(got?.value && Buffer.from(got.value).toString('hex')).toBe(want.value?.toString('hex'));
        });
      }
    }
    expect(ops).toBeGreaterThan(20);
    expect(outputs).toBeGreaterThan(ops);
  });

  it('hand-made scripts: drop runs, OP_NOP, PUSHDATA1 names, wrong argument counts, opcodes as arguments', () => {
    const tail = Buffer.from('76a914' + '11'.repeat(20) + '88ac', 'hex');
    const push = (b: Buffer) => (b.length < 0x4c ? Buffer.concat([Buffer.from([b.length]), b]) : Buffer.concat([Buffer.from([0x4c, b.length]), b]));
    const scripts = [
      Buffer.concat([Buffer.from([0x53]), push(Buffer.from('d/x')), push(Buffer.from('v')), Buffer.from([0x6d, 0x75]), tail]),
      Buffer.concat([Buffer.from([0x53]), push(Buffer.from('d/x')), push(Buffer.from('v')), Buffer.from([0x61, 0x6d, 0x61]), tail]),
      Buffer.concat([Buffer.from([0x53]), push(Buffer.alloc(100, 0x61)), push(Buffer.alloc(0)), Buffer.from([0x6d, 0x75]), tail]),
      Buffer.concat([Buffer.from([0x53]), push(Buffer.from('d/x')), Buffer.from([0x6d, 0x75]), tail]),
      Buffer.concat([Buffer.from([0x53]), push(Buffer.from('d/x')), push(Buffer.from('v')), push(Buffer.from('w')), Buffer.from([0x6d, 0x75]), tail]),
      Buffer.concat([Buffer.from([0x53]), push(Buffer.from('d/x')), Buffer.from([0x51]), Buffer.from([0x6d, 0x75]), tail]),
      Buffer.concat([Buffer.from([0x52]), push(Buffer.from('d/x')), push(Buffer.from('r')), Buffer.from([0x00]), Buffer.from([0x6d, 0x6d]), tail]),
      Buffer.concat([Buffer.from([0x51]), push(Buffer.alloc(20, 2)), Buffer.from([0x6d]), tail]),
      Buffer.concat([Buffer.from([0x54]), push(Buffer.from('d/x')), Buffer.from([0x6d]), tail]),
      tail,
    ];
    for (const s of scripts) {
      const want = parseNameScript(s);
      const got = nameOpOfAsm(scriptToAsm(s), 0x7100);
      expect(got?.op ?? null).toBe(want?.op ?? null);
      if (want?.name) expect(Buffer.from(got!.name!).equals(want.name)).toBe(true);
      if (want?.value) expect(Buffer.from(got!.value!).equals(want.value)).toBe(true);
    }
    expect(scripts.filter((s) => parseNameScript(s)).length).toBe(5);
    // Only version-0x7100 transactions carry name operations.
    expect(nameOpOfAsm(scriptToAsm(scripts[0]!), 1)).toBeNull();
  });
});

describe('the names list in the UI', () => {
  const e = (name: string, height: number, expires_in: number): NameEntry => ({ name, path: encodeNamePath(Buffer.from(name, 'latin1')), height, expires_in });
  const list = [e('..', 114, -6), e('d/a/b', 138, 18), e('d/history', 140, 20), e('d/\u00ff\u00fe', 128, 8), e('id/json', 114, -6), e('~tilde', 114, -6), e('x y z', 149, 29)];
  it('examples are live, printable, namespaced names of the list, most recently updated first', () => {
    expect(exampleNames(list).map((x) => x.name)).toEqual(['d/history', 'd/a/b', 'd/\u00ff\u00fe']);
    expect(exampleNames([])).toEqual([]);
    for (const x of exampleNames(list, 10)) expect(list).toContain(x);
  });
  it('the filter matches any part of the name, case-insensitive', () => {
    expect(filterNames(list, 'D/').map((x) => x.name)).toEqual(['d/a/b', 'd/history', 'd/\u00ff\u00fe', 'id/json']);
    expect(filterNames(list, '').length).toBe(list.length);
  });
});
