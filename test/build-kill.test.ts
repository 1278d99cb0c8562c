import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSnapshot } from '../src/site/build.js';
import { demoSource } from '../src/site/demo-source.js';
import { MANIFEST_PATH } from '../src/site/layout.js';
import { manifestMismatches } from './helpers.js';

const CHILD = join(dirname(fileURLToPath(import.meta.url)), 'fixtures', 'build-child.ts');

/** Runs the child build and SIGKILLs it when `killWhen` matches its output or after `ms`. */
function killBuild(outDir: string, how: { onOutput?: string; afterMs?: number }): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, outDir, 'hold'], { stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const kill = () => child.kill('SIGKILL');
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      if (how.onOutput && out.includes(how.onOutput)) kill();
    });
    if (how.afterMs !== undefined) setTimeout(kill, how.afterMs);
    child.on('error', reject);
    child.on('exit', (code, signal) => (signal === 'SIGKILL' ? resolve() : reject(new Error(`child exited ${code}: ${out}`))));
  });
}


describe('a killed build leaves the previous out/ intact', () => {
  let dir: string;
  let out: string;
  let manifest: string;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'snapshot-kill-'));
    out = join(dir, 'out');
    await buildSnapshot({ source: demoSource(), outDir: out, height: 120 });
    manifest = readFileSync(join(out, MANIFEST_PATH), 'utf8');
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it.each([
    ['just before the swap', { onOutput: 'publishing' }],
    ['early in the scan', { afterMs: 900 }],
    ['while writing files', { afterMs: 2500 }],
  ])('SIGKILL %s', async (_when, how) => {
    await killBuild(out, how);
    expect(readFileSync(join(out, MANIFEST_PATH), 'utf8')).toBe(manifest);
    expect(manifestMismatches(out)).toEqual([]);
  });

  it('the next build recovers without manual steps and leaves nothing behind', async () => {
    const r = await buildSnapshot({ source: demoSource(), outDir: out });
    expect(r.height).toBe(150);
    expect(manifestMismatches(out)).toEqual([]);
    expect(readdirSync(dir).sort()).toEqual(['out', 'out.state']);
  });
});

describe('recovery of a build killed between the two renames of the swap', () => {
  it('puts the previous tree back and removes the dead build’s staging dir', async () => {
    const { mkdirSync, renameSync, writeFileSync, existsSync } = await import('node:fs');
    const { recoverInterrupted } = await import('../src/site/publish.js');
    const dir = mkdtempSync(join(tmpdir(), 'snapshot-swap-'));
    const out = join(dir, 'out');
    mkdirSync(out);
    writeFileSync(join(out, 'stats.json'), '{}');
    const deadPid = 2 ** 22 + 12345; // above Linux's pid_max default: never a live process
    renameSync(out, `${out}.old-${deadPid}`);
    mkdirSync(`${out}.tmp-${deadPid}`);
    recoverInterrupted(out);
    expect(readFileSync(join(out, 'stats.json'), 'utf8')).toBe('{}');
    expect(existsSync(`${out}.tmp-${deadPid}`)).toBe(false);
    expect(readdirSync(dir)).toEqual(['out']);
    rmSync(dir, { recursive: true, force: true });
  });
});
