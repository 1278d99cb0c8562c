/**
 * The published package as a user gets it: `npm pack` (its `prepack` builds dist/), then the
 * tarball installed globally into a temporary prefix and into a temporary project, and the
 * installed commands run on the embedded demo chain: `snapshot --version`, `snapshot build`,
 * `snapshot verify`, `snapshot serve` (a few URLs fetched), `chain-snapshot` and
 * `npx chain-snapshot`, and the Netlify output run in Deno as the generated `netlify.toml` inside
 * the tree describes it (test/runtimes/netlify-host.ts); a script outside the repository reads a pack
 * through `chain-snapshot/reader` (from a directory and over HTTP Range) and type-checks against its
 * declarations. Dependencies come from npm's cache (`--prefer-offline`) or the registry.
 */
import { spawn, type SpawnOptions } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { denoBinary, startDenoNetlify } from './runtimes/launch.js';
import { rangeServer } from './support/range-server.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const PKG = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { name: string; version: string };

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(cmd: string, args: string[], opts: SpawnOptions = {}): Promise<Run> {
  return new Promise((ok, fail) => {
    const p = spawn(cmd, args, { ...opts, stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    p.stdout!.on('data', (d) => (stdout += d));
    p.stderr!.on('data', (d) => (stderr += d));
    p.on('error', fail);
    p.on('close', (code) => ok({ code, stdout, stderr }));
  });
}

async function mustRun(cmd: string, args: string[], opts: SpawnOptions = {}): Promise<Run> {
  const r = await run(cmd, args, opts);
  if (r.code !== 0) throw new Error(`${cmd} ${args.join(' ')} exited ${r.code}:\n${r.stderr.slice(-3000)}\n${r.stdout.slice(-2000)}`);
  return r;
}

function filesBelow(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => relative(dir, join(e.parentPath, e.name)));
}

describe('published package', () => {
  let tmp: string;
  let tarball: string;
  let packed: string[];
  /** Global install: `<prefix>/bin/snapshot`; project install: `<project>/node_modules`. */
  let prefix: string;
  let project: string;
  const install = ['--prefer-offline', '--no-audit', '--no-fund', '--loglevel=error'];

  beforeAll(async () => {
    tmp = mkdtempSync(join(tmpdir(), 'package-'));
    // Packed from a copy of the tracked files (no dist/ from an earlier build: the tarball's
    // dist/ must come from `prepack`), so that the repository's own dist/, which other test
    // files run at the same time (`npm run demo`), is left alone.
    const copy = join(tmp, 'repo');
    const tracked = (await mustRun('git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard'], { cwd: ROOT })).stdout.split('\0').filter(Boolean);
    expect(tracked).toContain('package.json');
    // node_modules: a symlink in a git worktree (listed as untracked there), linked again below.
    for (const f of tracked) if (f !== 'node_modules' && existsSync(join(ROOT, f))) cpSync(join(ROOT, f), join(copy, f));
    symlinkSync(join(ROOT, 'node_modules'), join(copy, 'node_modules'));
    const pack = await mustRun('npm', ['pack', '--json', '--pack-destination', tmp], { cwd: copy });
    const info = (JSON.parse(pack.stdout) as { filename: string; files: { path: string }[] }[])[0]!;
    tarball = join(tmp, info.filename);
    packed = info.files.map((f) => f.path);
    prefix = join(tmp, 'prefix');
    project = join(tmp, 'project');
    await Promise.all([
      mustRun('npm', ['install', '--global', '--prefix', prefix, ...install, tarball]),
      mustRun('npm', ['install', '--prefix', project, ...install, tarball]),
    ]);
  }, 300_000);

  afterAll(() => {
    if (tmp) rmSync(tmp, { recursive: true, force: true });
  });

  it('the tarball holds the compiled CLI and what it reads at run time, not the sources', () => {
    expect(packed).toContain('package.json');
    expect(packed).toContain('README.md');
    expect(packed).toContain('dist/cli.js');
    // Every module the edge glue ships is there as compiled JS (the installed CLI has no TypeScript).
    for (const m of ['hosts/edge.js', 'contract/router.js', 'contract/layout.js']) expect(packed).toContain(`dist/${m}`);
    expect(packed.filter((p) => !p.startsWith('dist/') && !p.startsWith('docs/'))).toEqual(expect.arrayContaining(['package.json', 'README.md']));
    // TypeScript only as the declarations of chain-snapshot/reader (dist/types/**/*.d.ts).
    const declaration = (p: string) => p.startsWith('dist/types/') && p.endsWith('.d.ts');
    expect(packed.filter((p) => p.startsWith('src/') || p.startsWith('test/') || (p.endsWith('.ts') && !declaration(p)) || p.endsWith('.map'))).toEqual([]);
    // The API documents the build copies into every site (docs/), when the repository has them.
    if (existsSync(join(ROOT, 'docs'))) for (const f of filesBelow(join(ROOT, 'docs'))) expect(packed).toContain(`docs/${f}`);
  });

  it('--version prints the package version, under both command names and through npx', async () => {
    // Run outside the repository, so no package.json of the working directory can answer.
    for (const bin of ['snapshot', 'chain-snapshot']) {
      expect((await mustRun(join(prefix, 'bin', bin), ['--version'], { cwd: tmp })).stdout.trim()).toBe(PKG.version);
    }
    const npx = await mustRun('npx', ['--no-install', 'chain-snapshot', '--version'], { cwd: project });
    expect(npx.stdout.trim()).toBe(PKG.version);
  });

  it('the installed snapshot builds, verifies and serves the demo chain', async () => {
    const out = join(tmp, 'out');
    const bin = join(prefix, 'bin', 'snapshot');
    const build = await mustRun(bin, ['build', '--out', out], { cwd: tmp });
    expect(build.stdout).toMatch(/^built .*: namecoin-regtest height \d+/);
    // The edge glue was shipped from the installed dist/ (byte-equal modules).
    expect(readFileSync(join(out, '_worker.js/lib/contract/router.js'), 'utf8')).toBe(readFileSync(join(prefix, 'lib/node_modules', PKG.name, 'dist/contract/router.js'), 'utf8').replace(/\n\/\/# sourceMappingURL=.*\s*$/, '\n'));
    await mustRun(bin, ['verify', '--dir', out]);

    const server = spawn(bin, ['serve', '--dir', out, '--port', '0'], { stdio: ['ignore', 'ignore', 'pipe'] });
    const exited = new Promise<number | null>((ok) => server.once('exit', (code) => ok(code)));
    try {
      const url = await new Promise<string>((ok, fail) => {
        let err = '';
        server.stderr!.on('data', (d) => {
          err += d;
          const m = / on (http:\/\/\S+?)\/?\s/.exec(err);
          if (m) ok(m[1]!);
        });
        void exited.then((code) => fail(new Error(`snapshot serve exited ${code}: ${err}`)));
      });
      const get = async (path: string) => {
        const r = await fetch(url + path);
        return { status: r.status, type: r.headers.get('content-type'), body: Buffer.from(await r.arrayBuffer()) };
      };
      const stats = await get('/stats.json');
      expect(stats.status).toBe(200);
      expect(stats.body.equals(readFileSync(join(out, 'stats.json')))).toBe(true);
      const txid = readdirSync(join(out, 'tx')).find((f) => f.endsWith('.json'))!.slice(0, 64);
      const tx = await get(`/tx/${txid.toUpperCase()}.json`);
      expect(tx.status).toBe(200);
      expect(tx.body.equals(readFileSync(join(out, 'tx', `${txid}.json`)))).toBe(true);
      const bin64 = await get(`/tx/${txid}.bin`);
      expect(bin64.type).toBe('application/octet-stream');
      expect(bin64.body.equals(readFileSync(join(out, 'tx', `${txid}.bin`)))).toBe(true);
      const history = await get('/name/d/history.json?history');
      expect(history.body.equals(readFileSync(join(out, 'v/history/name/d/history.json')))).toBe(true);
      const missing = await get('/tx/xyz.json');
      expect({ status: missing.status, body: missing.body.toString() }).toEqual({ status: 404, body: '{"error":"Tx xyz not found."}' });
      const ui = await get('/');
      expect(ui.body.equals(readFileSync(join(out, 'index.html')))).toBe(true);
      // The API contract the installed copy read from its own docs/ (the repository's files).
      for (const f of existsSync(join(ROOT, 'docs', 'openapi.json')) ? ['openapi.json', 'schemas/tx.schema.json'] : []) {
        const doc = await get(`/${f}`);
        expect({ path: f, status: doc.status, same: doc.body.equals(readFileSync(join(ROOT, 'docs', f))) }).toEqual({ path: f, status: 200, same: true });
      }
    } finally {
      server.kill('SIGTERM');
      expect(await exited).toBe(0);
    }
  });

  const deno = denoBinary();
  it.skipIf(deno.skip !== undefined)('the installed snapshot writes a Netlify site deployable as it is: netlify.toml inside the tree, run in Deno', async () => {
    const out = join(tmp, 'out-netlify');
    await mustRun(join(prefix, 'bin', 'snapshot'), ['build', '--out', out, '--hosts', 'netlify'], { cwd: tmp });
    // No TOML parser among the dependencies: the keys Netlify needs, read from the [build] table.
    const toml = readFileSync(join(out, 'netlify.toml'), 'utf8');
    const build = /^\[build\]\n((?:[ \t]*\w+ = "[^"\n]*"\n)+)/m.exec(toml)?.[1] ?? '';
    const key = (k: string) => new RegExp(`^\\s*${k} = "([^"\\n]*)"$`, 'm').exec(build)?.[1];
    const publish = key('publish');
    const functions = key('edge_functions');
    expect({ publish, functions }).toEqual({ publish: expect.any(String), functions: expect.any(String) });
    // Relative to the directory of netlify.toml (Netlify's base directory): `out` as it is.
    const site = resolve(out, publish!);
    const fnDir = resolve(out, functions!);
    expect(realpathSync(site)).toBe(realpathSync(out));
    expect(relative(realpathSync(site), realpathSync(fnDir)).startsWith('..')).toBe(false);
    const runtime = await startDenoNetlify(deno.path!, [site], [fnDir]);
    try {
      const url = runtime.urls[0]!;
      const get = async (path: string) => {
        const r = await fetch(url + path);
        return { status: r.status, body: Buffer.from(await r.arrayBuffer()).toString('latin1') };
      };
      const file = (rel: string) => ({ status: 200, body: readFileSync(join(out, rel)).toString('latin1') });
      const txid = readdirSync(join(out, 'tx')).find((f) => f.endsWith('.json'))!.slice(0, 64);
      expect(await get('/stats.json')).toEqual(file('stats.json'));
      expect(await get(`/tx/${txid.toUpperCase()}.json`)).toEqual(file(`tx/${txid}.json`));
      expect(await get('/name/d%2Fhistory.json?history')).toEqual(file('v/history/name/d/history.json'));
      expect(await get('/tx/xyz.json')).toEqual({ status: 404, body: '{"error":"Tx xyz not found."}' });
      expect(await get('/netlify.toml')).toEqual({ status: 404, body: '{"error":"Not found."}' });
    } catch (e) {
      console.error(runtime.output().slice(-3000));
      throw e;
    } finally {
      await runtime.stop();
    }
  });

  it('chain-snapshot/reader: a script outside the repository reads a pack from its directory and over HTTP Range, with type declarations', async () => {
    const bin = join(prefix, 'bin', 'snapshot');
    const tree = join(tmp, 'reader-tree');
    const pack = join(tmp, 'reader-pack');
    await Promise.all([mustRun(bin, ['build', '--out', tree], { cwd: tmp }), mustRun(bin, ['build', '--out', pack, '--format', 'pack'], { cwd: tmp })]);
    // As a user writes it: the package's export, nothing of its layout.
    writeFileSync(
      join(project, 'read.mjs'),
      `import { openPack } from 'chain-snapshot/reader';
const [where, encoding, ...paths] = process.argv.slice(2);
const pack = await openPack(where);
const out = {};
for (const p of paths) {
  const a = await pack.get(p, { acceptEncoding: encoding });
  if (!a) { out[p] = null; continue; }
  const chunks = a.bytes ? [a.bytes] : [];
  if (a.stream) for await (const c of a.stream) chunks.push(c);
  out[p] = { contentEncoding: a.contentEncoding, size: a.size, base64: Buffer.concat(chunks).toString('base64') };
}
await pack.close();
console.log(JSON.stringify(out));
`,
    );
    const txid = readdirSync(join(tree, 'tx')).find((f) => f.endsWith('.json'))!.slice(0, 64);
    const addr = readdirSync(join(tree, 'address')).find((f) => f.endsWith('.json'))!;
    const paths = ['stats.json', `tx/${txid}.json`, `tx/${txid}.hex`, `tx/${txid}.bin`, `address/${addr}`, 'name/d/history.json', 'v/history/name/d/history.json'];
    const read = async (where: string, encoding: string) =>
      JSON.parse((await mustRun(process.execPath, ['read.mjs', where, encoding, ...paths, 'tx/nope.json'], { cwd: project })).stdout) as Record<string, { contentEncoding: string; size: number; base64: string } | null>;
    const http = await rangeServer(pack);
    try {
      for (const [where, encoding] of [[pack, 'identity'], [http.url, 'identity'], [http.url, 'gzip']] as const) {
        const got = await read(where, encoding);
        expect(got['tx/nope.json']).toBeNull();
        for (const p of paths) {
          const a = got[p]!;
          const bytes = Buffer.from(a.base64, 'base64');
          expect({ where, p, size: a.size === bytes.length }).toEqual({ where, p, size: true });
          const plain = a.contentEncoding === 'gzip' ? gunzipSync(bytes) : bytes;
          expect({ where, encoding, p, same: plain.equals(readFileSync(join(tree, p))) }).toEqual({ where, encoding, p, same: true });
          if (encoding === 'identity') expect(a.contentEncoding).toBe('identity');
        }
        if (encoding === 'gzip') expect(Object.values(got).some((a) => a?.contentEncoding === 'gzip')).toBe(true);
      }
      expect(http.requests()).toBeGreaterThan(paths.length);
    } finally {
      http.server.close();
    }
    // The declarations: a TypeScript user's code checks against them (and a wrong call does not).
    writeFileSync(
      join(project, 'check.mts'),
      `import { openPack, type PackAnswer, type PackReader } from 'chain-snapshot/reader';
const pack: PackReader = await openPack('https://example.org/pack/');
const a: PackAnswer | undefined = await pack.get('stats.json', { acceptEncoding: 'gzip' });
const size: number | undefined = a?.size;
const reads: number = pack.reads;
// @ts-expect-error a path is a string
await pack.get(1);
await pack.close();
export { size, reads };
`,
    );
    writeFileSync(join(project, 'tsconfig.json'), JSON.stringify({ compilerOptions: { strict: true, module: 'nodenext', moduleResolution: 'nodenext', target: 'es2023', lib: ['es2023', 'dom'], types: [], noEmit: true }, files: ['check.mts'] }));
    await mustRun(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.json'], { cwd: project });
    expect(packed).toContain('dist/types/pack/reader.d.ts');
  }, 300_000);
});
