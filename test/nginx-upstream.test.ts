// `snapshot build --nginx-upstream host:port`: the generated nginx.conf proxies what nginx cannot
// answer itself to a running `snapshot serve`, so real nginx answers every request as that server
// does (without it, percent-encoded names and upper-case hashes are 404 on nginx).
import { execFile } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeNamePathBytes } from '../src/contract/layout.js';
import { nginxUpstream } from '../src/hosts/nginx.js';
import { startServer, type RunningServer } from '../src/serve/server.js';
import { freePort, nodeArgs, REPO } from './support/helpers.js';
import { rawRequest, type RawResponse } from './support/http-raw.js';
import { HAVE_NGINX, listenOn, startNginx, type RunningNginx } from './support/nginx.js';

const tmp = mkdtempSync(join(tmpdir(), 'snapshot-nginx-up-'));
chmodSync(tmp, 0o755); // nginx workers run as an unprivileged user
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const cli = (...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> =>
  new Promise((ok) => {
    execFile(process.execPath, [...nodeArgs('src/cli.ts'), ...args], { cwd: REPO, encoding: 'utf8' }, (err, stdout, stderr) =>
      ok({ status: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });

describe('--nginx-upstream values', () => {
  it('host:port with a port 1–65535 (host name, IPv4, [IPv6]); anything else is one clear error', () => {
    for (const v of ['127.0.0.1:8080', 'localhost:1', 'snap-serve.internal:65535', '[::1]:8080']) expect(nginxUpstream('nginx-upstream', v)).toBe(v);
    for (const v of ['', 'localhost', '127.0.0.1:', ':8080', '127.0.0.1:0', '127.0.0.1:65536', 'host:80x', 'http://127.0.0.1:8080', 'a b:80', 'host:80;evil', '::1:8080']) {
      expect(() => nginxUpstream('nginx-upstream', v), JSON.stringify(v)).toThrow(`--nginx-upstream ${JSON.stringify(v)} is not host:port with a port 1–65535`);
    }
  });

  it('the CLI refuses a bad value before building: exit 1, one line', async () => {
    const r = await cli('build', '--nginx-upstream', '127.0.0.1:99999', '--out', join(tmp, 'bad'));
    expect(r.status).toBe(1);
    expect(r.stderr).toContain('--nginx-upstream "127.0.0.1:99999" is not host:port with a port 1–65535');
  });
});

/** Every file of `dir` (relative paths). */
function listFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) => join(e.parentPath, e.name).slice(dir.length + 1));
}

/** Targets of every kind: each document, upper-case hashes, names percent-encoded and with queries, misses, hostile targets. */
function targets(dir: string): string[] {
  const out: string[] = [];
  for (const f of listFiles(dir)) {
    const id = /^(tx|block)\/([0-9a-f]{64})\.(json|bin|hex)$/.exec(f);
    if (id) out.push(`/${f}`, `/${id[1]}/${id[2]!.toUpperCase()}.${id[3]}`);
    if (/^address\/\w+\.json$/.test(f)) out.push(`/${f}`);
    const name = /^name\/(.+)\.json$/.exec(f);
    const bytes = name ? decodeNamePathBytes(name[1]!) : undefined;
    if (bytes) {
      const natural = [...bytes].map((b) => (/[A-Za-z0-9._~-]/.test(String.fromCharCode(b)) ? String.fromCharCode(b) : '%' + b.toString(16).toUpperCase().padStart(2, '0'))).join('');
      out.push(`/${f}`, `/${f}?history`, `/${f}?with_rawtx&with_height`, `/name/${natural}.json`, `/name/${natural}.json?history&with_all`);
    }
  }
  out.push('/', '/stats.json', '/names.json', '/openapi.json', '/tx/xyz.json', `/tx/${'AB'.repeat(32)}.json`, '/name/d/nope.json', '/address/foo.json', '/nope', '/nginx.conf');
  out.push('/tx/../stats.json', '/%2e%2e/_site.json', '/name/a//b.json', '/a%zz', `/tx/${'a'.repeat(9000)}.json`);
  return [...new Set(out)];
}

const shown = (r: RawResponse) => ({
  status: r.status,
  type: r.headers['content-type'],
  cache: r.headers['cache-control'],
  cors: r.headers['access-control-allow-origin'],
  body: r.body.toString('latin1'),
});

describe.skipIf(!HAVE_NGINX)('nginx with --nginx-upstream pointed at snapshot serve', () => {
  let out: string;
  let server: RunningServer;
  let nginx: RunningNginx;

  beforeAll(async () => {
    const servePort = await freePort();
    out = join(tmp, 'out');
    const r = await cli('build', '--out', out, '--hosts', 'nginx', '--nginx-upstream', `127.0.0.1:${servePort}`);
    expect(r.status, r.stderr).toBe(0);
    out = realpathSync(out);
    server = await startServer({ dir: out, port: servePort, host: '127.0.0.1' });
    const port = await freePort();
    nginx = await startNginx(listenOn(readFileSync(join(out, 'nginx.conf'), 'utf8'), port), join(tmp, 'nginx'), port);
  });
  afterAll(async () => {
    await nginx?.stop();
    await server?.close();
  });

  it('the config names the upstream', () => {
    expect(readFileSync(join(out, 'nginx.conf'), 'utf8')).toContain(`proxy_pass http://${new URL(server.url).host}$request_uri;`);
  });

  it('a percent-encoded name and an upper-case tx hash: 200 with the document (404 without an upstream)', async () => {
    const txid = readdirSync(join(out, 'tx')).find((f) => f.endsWith('.json'))!.slice(0, 64);
    for (const [target, file] of [['/name/d%2Fhistory.json', 'name/d/history.json'], [`/tx/${txid.toUpperCase()}.json`, `tx/${txid}.json`]] as const) {
      const r = await rawRequest(nginx.url, target);
      expect({ target, status: r.status, body: r.body.toString('latin1') }).toEqual({ target, status: 200, body: readFileSync(join(out, file), 'latin1') });
    }
  });

  it('every target answers as snapshot serve does (status, type, cache, CORS, body)', async () => {
    const list = targets(out);
    expect(list.length).toBeGreaterThan(1000);
    try {
      for (let i = 0; i < list.length; i += 16) {
        const part = list.slice(i, i + 16);
        const [viaNginx, direct] = await Promise.all([Promise.all(part.map((t) => rawRequest(nginx.url, t))), Promise.all(part.map((t) => rawRequest(server.url, t)))]);
        part.forEach((t, k) => expect(shown(viaNginx[k]!), t).toEqual(shown(direct[k]!)));
      }
    } catch (e) {
      console.error(nginx.errors());
      throw e;
    }
  });
});
