/**
 * A small snapshot tree written with the layout functions, for the router/serve/conformance
 * tests (until they run on a demo-chain build): tx/block files, addresses (base58, bech32,
 * capped), names with '/' and hostile bytes in all 64 variants, stats, _site.json, host files.
 */
import { chmodSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { createHash } from 'node:crypto';
import * as bitcoin from 'bitcoinjs-lib';
import { ALL_NAME_VARIANTS, SITE_INFO_PATH, STATS_PATH, addressPath, blockPath, namePath, txPath, variantKey, type SiteInfo } from '../../src/contract/layout.js';
import { writeHostFiles, type HostFileOptions } from '../../src/hosts/index.js';

const h = (s: string) => createHash('sha256').update(s).digest('hex');

export interface TestTree {
  dir: string;
  info: SiteInfo;
  txids: string[];
  blocks: string[];
  addresses: string[];
  capped: string;
  bech32: string;
  names: Buffer[];
  /** Names with files, as the router's error text renders them. */
  missingName: Buffer;
}

export function nameBody(name: Buffer, key: string): string {
  return JSON.stringify({ name: name.toString('latin1'), variant: key });
}

export async function writeTestTree(opts: HostFileOptions = {}): Promise<TestTree> {
  const dir = mkdtempSync(join(tmpdir(), 'snapshot-tree-'));
  chmodSync(dir, 0o755); // nginx workers run as an unprivileged user
  const put = (rel: string, data: string | Buffer) => {
    const abs = join(dir, rel);
    mkdirSync(dirname(abs), { recursive: true });
    writeFileSync(abs, data);
  };
  const txids = [h('tx1'), h('tx2')];
  for (const id of txids) {
    const raw = Buffer.from(h('raw' + id), 'hex');
    put(txPath(id, 'json'), JSON.stringify({ hash: id, size: raw.length }));
    put(txPath(id, 'bin'), raw);
    put(txPath(id, 'hex'), raw.toString('hex'));
  }
  const blocks = [h('block1')];
  for (const id of blocks) {
    const raw = Buffer.from(h('rawb' + id) + h('more'), 'hex');
    put(blockPath(id, 'json'), JSON.stringify({ hash: id, height: 1 }));
    put(blockPath(id, 'bin'), raw);
    put(blockPath(id, 'hex'), raw.toString('hex'));
  }
  const hash160 = (s: string) => Buffer.from(h(s).slice(0, 40), 'hex');
  const p2pkh = bitcoin.address.toBase58Check(hash160('a1'), 0x6f);
  const p2sh = bitcoin.address.toBase58Check(hash160('a2'), 0xc4);
  const capped = bitcoin.address.toBase58Check(hash160('a3'), 0x6f);
  const bech32 = bitcoin.address.toBech32(hash160('a4'), 0, 'ncrt');
  const addresses = [p2pkh, p2sh, bech32];
  for (const a of addresses) put(addressPath(a), JSON.stringify({ address: a }));
  put(addressPath(capped), '{"error":"Too many outputs for this address (12)"}');
  const names = [
    Buffer.from('d/bitcoin'),
    Buffer.from('id/a/b.json/c'),
    Buffer.from('d/my.site'),
    Buffer.from([0x2e, 0x2e, 0x2f, 0x25, 0xff, 0x7e, 0x20, 0x2b, 0x3f, 0x23, 0x00, 0x5c, 0x22, 0x2f, 0x2f, 0x65]),
    Buffer.from('caf\u00e9/x~41'),
    // Dot segments inside names are data (reachable with the slashes sent as %2F).
    Buffer.from('x/a/../b'),
    Buffer.from('../up'),
    Buffer.from('x/./y/.'),
    Buffer.alloc(255, 'n'),
  ];
  for (const n of names) for (const v of ALL_NAME_VARIANTS) put(namePath(n, v), nameBody(n, variantKey(v)));
  put(STATS_PATH, JSON.stringify({ blocks: { main: 2 } }));
  put('names.json', JSON.stringify({ height: 1, count: names.length, names: [] }));
  put('index.html', '<!doctype html><title>snapshot</title>');
  put('assets/app.js', 'console.log(1);');
  const info: SiteInfo = { network: 'namecoin-regtest', height: 1, tip: blocks[0]!, cappedAddresses: [capped] };
  put(SITE_INFO_PATH, JSON.stringify(info));
  put('_manifest.json', '{}');
  await writeHostFiles(dir, info, opts);
  return { dir, info, txids, blocks, addresses, capped, bech32, names, missingName: Buffer.from('d/nope') };
}
