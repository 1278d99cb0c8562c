import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readFileSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import pLimit from 'p-limit';
import { inject } from 'vitest';
import { MANIFEST_PATH } from '../../src/contract/layout.js';
import { parseManifestLine } from '../../src/contract/manifest.js';
import { SHARED, sharedData } from './shared-data.js';

export { SHARED };
/**
 * Whether ../shared/chaindata exists, for scripts outside the tests (bench/). Tests use
 * describeShared/itShared (test/support/shared-data.ts): they skip naming the missing path, and fail on CI.
 */
export const HAVE_SHARED = sharedData('chaindata');

export function chainPath(...parts: string[]): string {
  return join(SHARED, 'chaindata', ...parts);
}

export function fixturePath(...parts: string[]): string {
  return join(SHARED, 'webbtc-fixtures', ...parts);
}

export function readChain(...parts: string[]): Buffer {
  return readFileSync(chainPath(...parts));
}

/** Splits `magic | len | block` framed data (strict; test helper only). */
export function framedBlocks(buf: Buffer): Buffer[] {
  const out: Buffer[] = [];
  let pos = 0;
  while (pos + 8 <= buf.length) {
    const len = buf.readUInt32LE(pos + 4);
    if (len === 0) break;
    out.push(buf.subarray(pos + 8, pos + 8 + len));
    pos += 8 + len;
  }
  return out;
}

/** Paths whose bytes differ from the tree's `_manifest.json` (size or sha256); [] when the tree matches. */
export function manifestMismatches(dir: string): string[] {
  const bad: string[] = [];
  const text = readFileSync(join(dir, MANIFEST_PATH), 'utf8');
  for (const [i, line] of text.slice(0, -1).split('\n').entries()) {
    const parsed = parseManifestLine(line);
    if (!parsed) throw new Error(`${join(dir, MANIFEST_PATH)}: line ${i + 1} is not "<sha256> <size> <path>": ${JSON.stringify(line)}`);
    const { sha256: sha, size, path } = parsed;
    const buf = existsSync(join(dir, path)) ? readFileSync(join(dir, path)) : undefined;
    if (!buf || buf.length !== Number(size) || createHash('sha256').update(buf).digest('hex') !== sha) bad.push(path);
  }
  return bad;
}

/**
 * The blocks of the Namecoin Core regtest datadir (`chaindata/namecoin-core-regtest`), XOR-decoded,
 * in file order, with the file and height `blocks-manifest.json` gives for each.
 */
export function namecoinRegtestRecords(): { file: string; height: number; chain: 'main' | 'stale'; hash: string; data: Buffer }[] {
  const base = chainPath('namecoin-core-regtest');
  const man = JSON.parse(readFileSync(join(base, 'blocks-manifest.json'), 'utf8')) as {
    files: Record<string, { blocks?: { offset: number; length: number; height: number; chain: 'main' | 'stale'; hash: string }[] }>;
  };
  const key = readFileSync(join(base, 'blocks', 'xor.dat'));
  const out: { file: string; height: number; chain: 'main' | 'stale'; hash: string; data: Buffer }[] = [];
  for (const file of Object.keys(man.files).sort()) {
    const blocks = man.files[file]!.blocks;
    if (!blocks) continue;
    const buf = Buffer.from(readFileSync(join(base, 'blocks', file)));
    for (let i = 0; i < buf.length; i++) buf[i]! ^= key[i % 8]!;
    for (const b of blocks) out.push({ file, height: b.height, chain: b.chain, hash: b.hash, data: buf.subarray(b.offset + 8, b.offset + 8 + b.length) });
  }
  return out;
}

/** A local port with nothing listening on it now: bind one, then close it. */
export async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, '127.0.0.1', r));
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** The repository root (this file is test/support/helpers.ts). */
export const REPO = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Node's arguments to run one of the repository's TypeScript files (`src/cli.ts`,
 * `test/fixtures/….ts`; absolute or relative to the repo) in a child process: its copy compiled
 * once per test run by the globalSetup (test/support/compile-children.ts), or through tsx where that
 * setup did not run.
 */
export function nodeArgs(tsFile: string): string[] {
  const rel = relative(REPO, resolve(REPO, tsFile));
  const compiled = inject('compiledDir') as string | undefined;
  if (compiled) return [join(compiled, rel.replace(/\.ts$/, '.js'))];
  return ['--import', pathToFileURL(join(REPO, 'node_modules', 'tsx', 'dist', 'loader.mjs')).href, join(REPO, rel)];
}

const INCREMENTAL_CHILD = join(REPO, 'test', 'fixtures', 'incremental-child.ts');

/**
 * Runs the child script `script` (a test fixture) with `args` until it prints `paused <point>`,
 * then SIGKILLs it; rejects unless it died by that signal there.
 */
export function killChildAt(script: string, args: readonly string[], point: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [...nodeArgs(script), ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (out.includes(`paused ${point}\n`)) child.kill('SIGKILL');
    });
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.on('error', reject);
    child.on('exit', (code, signal) => {
      if (signal === 'SIGKILL' && out.includes(`paused ${point}\n`)) resolve();
      else reject(new Error(`child was not killed at ${point} (exit ${code}, signal ${signal}): ${out}${err}`));
    });
  });
}

/**
 * Runs fixtures/incremental-child.ts (a build of the scenario chain `seed` up to `height` into
 * `outDir`) until it pauses at `point`, then SIGKILLs it; rejects unless the kill happened there.
 */
export function killIncrementalChildAt(outDir: string, seed: number, height: number, point: string): Promise<void> {
  return killChildAt(INCREMENTAL_CHILD, [outDir, String(seed), String(height), point], point);
}

/** `fn` over `items` with at most `limit` at once (p-limit), the results in the items' order. */
export function mapLimit<T, R>(items: readonly T[], limit: number, fn: (x: T) => Promise<R>): Promise<R[]> {
  const run = pLimit(limit);
  return Promise.all(items.map((x) => run(() => fn(x))));
}
