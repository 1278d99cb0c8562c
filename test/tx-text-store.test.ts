// The scratch store of rendered /tx texts shared with the address render threads.
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { TxTextAppender, TxTextReader, TxTextStore } from '../src/pipeline/tx-text-store.js';

const dir = mkdtempSync(join(tmpdir(), 'tx-texts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const txidOf = (i: number) => createHash('sha256').update(String(i)).digest('hex');
const textOf = (txid: string, i: number) => Buffer.from(`{"hash":"${txid}","n":${i}${'x'.repeat(i % 3000)}}`);

describe('TxTextStore', () => {
  it('gives back every text stored, across table growth and chunk flushes, and nothing else', () => {
    const store = new TxTextStore(join(dir, 'a.tmp'));
    const n = 70_000; // more than half the initial 65536 slots: the table grows
    // Half from the main thread (file 0), half as a render thread appends them (file 3).
    const thread = new TxTextAppender(store.path(3));
    for (let i = 0; i < n; i++) {
      if (i % 2) store.add(txidOf(i), textOf(txidOf(i), i));
      else thread.append(txidOf(i), textOf(txidOf(i), i));
      if (i % 5000 === 0) store.addEntries(3, thread.take());
    }
    store.addEntries(3, thread.take());
    thread.close();
    store.add(txidOf(5), Buffer.from('{"hash":"second of a duplicate txid"}')); // the first one stays
    const pretty = txidOf(n + 7); // a pretty document names its tx further in
    const prettyText = Buffer.from(`{\n  "hash": "${pretty}",\n  "n": 1\n}`);
    store.add(pretty, prettyText);
    const reader = new TxTextReader(store.table());
    expect(reader.find(pretty)).toEqual(prettyText);
    for (let i = 0; i < n; i += 499) expect(reader.find(txidOf(i))).toEqual(textOf(txidOf(i), i));
    expect(reader.find(txidOf(5))).toEqual(textOf(txidOf(5), 5));
    expect(reader.find(txidOf(n + 1))).toBeUndefined();
    // Same first 8 bytes as a stored txid, different txid: not its text.
    const t = txidOf(42);
    expect(reader.find(t.slice(0, 16) + 'f'.repeat(48))).toBeUndefined();
    reader.close();
    store.close();
    expect(existsSync(store.path(0)) || existsSync(store.path(3))).toBe(false);
  });
});
