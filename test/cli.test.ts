// Command-line input errors: one clear line naming the option and value, exit 1, nothing built or served.
import { execFile, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { port, wholeNumber } from '../src/cli-args.js';
import { FakeNode, loadBlocks } from './support/fake-node.js';
import { freePort, nodeArgs } from './support/helpers.js';
import { describeShared } from './support/shared-data.js';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const tmp = mkdtempSync(join(tmpdir(), 'snapshot-cli-'));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

const cli = (...args: string[]): Promise<{ status: number | null; stdout: string; stderr: string }> =>
  new Promise((ok) => {
    execFile(process.execPath, [...nodeArgs('src/cli.ts'), ...args], { cwd: ROOT, encoding: 'utf8' }, (err, stdout, stderr) =>
      ok({ status: err ? ((err as { code?: number }).code ?? null) : 0, stdout, stderr }),
    );
  });

describe('CLI input errors', () => {
  it('the number rules: decimal digits only, ≥ 0, at most 2^53 − 1', () => {
    for (const v of ['', 'abc', '1e2', '0x10', '-1', '1.5', ' 7', '7 ', '+7', '99999999999999999999']) {
      expect(() => wholeNumber('height', v, '1000'), JSON.stringify(v)).toThrow(`--height ${JSON.stringify(v)} is not a decimal whole number ≥ 0 (e.g. --height 1000)`);
    }
    expect(['0', '7', '0010', '9007199254740991'].map((v) => wholeNumber('height', v, '1'))).toEqual([0, 7, 10, 9007199254740991]);
    for (const v of ['', 'abc', '-1', '65536', '80.5', '0x50']) expect(() => port('port', v), JSON.stringify(v)).toThrow(/is not a port: give 0–65535/);
    expect(['0', '8080', '65535'].map((v) => port('port', v))).toEqual([0, 8080, 65535]);
  });

  it('--height and --max-address-txouts: a bad value is one line, exit 1, nothing built', async () => {
    const bad = ['', 'abc', '0x10'];
    const results = await Promise.all([
      ...bad.map((v, i) => cli('build', '--height', v, '--out', join(tmp, `h-${i}`))),
      cli('build', '--max-address-txouts', 'lots', '--out', join(tmp, 'cap')),
    ]);
    bad.forEach((v, i) => {
      const r = results[i]!;
      expect(r.status, `--height ${JSON.stringify(v)}`).toBe(1);
      expect(r.stderr).toBe(`snapshot: --height ${JSON.stringify(v)} is not a decimal whole number ≥ 0 (e.g. --height 1000)\n`);
      expect(existsSync(join(tmp, `h-${i}`))).toBe(false);
    });
    expect(results.at(-1)!.stderr).toBe('snapshot: --max-address-txouts "lots" is not a decimal whole number ≥ 0 (e.g. --max-address-txouts 10000)\n');
    expect(existsSync(join(tmp, 'cap'))).toBe(false);
  });

  it('--port must be a port; serve --dir without a snapshot is one line', async () => {
    writeFileSync(join(tmp, 'file'), 'x');
    const [p, missing, file] = await Promise.all([
      cli('serve', '--port', 'abc', '--dir', tmp),
      cli('serve', '--dir', '/missing'),
      cli('serve', '--dir', join(tmp, 'file')),
    ]);
    expect(p.status).toBe(1);
    expect(p.stderr).toBe('snapshot: --port "abc" is not a port: give 0–65535 (e.g. --port 8080)\n');
    expect(missing.status).toBe(1);
    expect(missing.stderr).toBe('snapshot: no snapshot at /missing (no such directory); build one with: snapshot build --out /missing\n');
    expect(file.stderr).toMatch(/^snapshot: no snapshot at .*file \(not a directory\)/);
  });

  it('an option given without its value is one line, exit 1, not its default', async () => {
    const [port, dir, out] = await Promise.all([cli('serve', '--port'), cli('verify', '--dir'), cli('build', '--height', '5', '--out')]);
    for (const [r, name] of [[port, 'port'], [dir, 'dir'], [out, 'out']] as const) {
      expect(r.status).toBe(1);
      expect(r.stderr).toBe(`snapshot: Not enough arguments following: ${name}\n`);
    }
  });

  it('a typo’d command suggests the right one', async () => {
    const r = await cli('biuld');
    expect(r.status).toBe(1);
    expect(r.stderr).toBe('snapshot: unknown command "biuld". Did you mean build?\n');
  });
});

const listening = (port: number, host = '127.0.0.1'): Promise<boolean> =>
  new Promise((ok) => {
    const c = connect(port, host);
    c.on('connect', () => {
      c.destroy();
      ok(true);
    });
    c.on('error', () => ok(false));
  });

/** Every descendant of `pid` (from /proc via ps). */
function descendants(pid: number): number[] {
  const out = spawnSync('ps', ['-e', '-o', 'pid=,ppid='], { encoding: 'utf8' }).stdout;
  const children = new Map<number, number[]>();
  for (const line of out.trim().split('\n')) {
    const [c, p] = line.trim().split(/\s+/).map(Number) as [number, number];
    children.set(p, [...(children.get(p) ?? []), c]);
  }
  const all: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      all.push(c);
      walk(c);
    }
  };
  walk(pid);
  return all;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

describeShared('chaindata')('snapshot build over RPC, run again (the CI loop)', () => {
  it('retries print one line each; a second run with nothing new exits 0 writing nothing; a lower --height exits 0 rolled back', async () => {
    const node = await new FakeNode({ main: loadBlocks(), side: [] }).start();
    try {
      const out = join(tmp, 'rpc-out');
      const args = ['build', '--source', `rpc:${node.url.replace('http://', 'http://u:pw@')}`, '--network', 'bitcoin-regtest', '--out', out];
      // the node answers 503 twice first: each retry is one line on stderr
      node.fault = ({ n }, res) => {
        if (n > 2) return false;
        res.writeHead(503);
        res.end();
        return true;
      };
      const first = await cli(...args);
      node.fault = undefined;
      expect(first.status, first.stderr).toBe(0);
      expect(first.stdout).toMatch(/height 103 .*, full\n/);
      const where = node.url.replace('http://', 'http://u@');
      expect(first.stderr.split('\n').filter((l) => l.startsWith('RPC '))).toEqual([
        `RPC ${where}: getblockchaininfo: HTTP 503; attempt 1/20, next in 250 ms`,
        `RPC ${where}: getblockchaininfo: HTTP 503; attempt 2/20, next in 500 ms`,
      ]);
      const second = await cli(...args);
      expect(second.status, second.stderr).toBe(0);
      expect(second.stdout).toMatch(/height 103 .*, incremental\n/);
      expect(second.stdout).toMatch(/written 0, unchanged \d+, deleted 0/);
      const lower = await cli(...args, '--height', '100');
      expect(lower.status, lower.stderr).toBe(0);
      expect(lower.stdout).toMatch(/height 100 .*, incremental, rolled back to height 100\n/);
    } finally {
      await node.stop();
    }
  }, 180_000);
});

/** The glue files each host gets in the tree (README "Deploying"): which hosts a build wrote for. */
const GLUE = { netlify: ['_headers', '_netlify'], cloudflare: ['_worker.js'], nginx: ['nginx.conf'] } as const;
const glueIn = (dir: string): string[] => (Object.keys(GLUE) as (keyof typeof GLUE)[]).filter((h) => GLUE[h].every((f) => existsSync(join(dir, f))));
const ourLines = (stderr: string): string[] => stderr.split('\n').filter((l) => l.startsWith('snapshot: '));

describe('the command synopsis in README.md and docs/operations.md', () => {
  /** command → the --flags its synopsis lines name (the indented `snapshot <command> [...]` block). */
  const synopsis = (file: string): Map<string, Set<string>> => {
    const out = new Map<string, Set<string>>();
    let cmd: string | undefined;
    for (const line of readFileSync(join(ROOT, file), 'utf8').split('\n')) {
      const start = /^ {4}snapshot (\w+) /.exec(line);
      if (start) cmd = start[1]!;
      else if (!/^ {20}\[/.test(line)) cmd = undefined;
      if (cmd) for (const [f] of line.matchAll(/--[a-z-]+/g)) out.set(cmd, (out.get(cmd) ?? new Set()).add(f));
    }
    return out;
  };

  it('names every option each command’s --help lists, and no other', async () => {
    const help = new Map<string, Set<string>>();
    for (const cmd of ['build', 'serve', 'verify', 'demo', 'publish', 'index', 'merge']) {
      const r = await cli(cmd, '--help');
      help.set(cmd, new Set([...r.stdout.matchAll(/^ {2}(--[a-z-]+)/gm)].map((m) => m[1]!).filter((f) => f !== '--help' && f !== '--version')));
    }
    for (const file of ['README.md', 'docs/operations.md']) {
      const doc = synopsis(file);
      expect([...doc.keys()].sort(), file).toEqual([...help.keys()].sort());
      for (const [cmd, flags] of help) expect([...doc.get(cmd)!].sort(), `${file}: snapshot ${cmd}`).toEqual([...flags].sort());
    }
  }, 60_000);
});

describe('build --hosts (hosting providers) and serve --host (bind address)', () => {
  const hostsOut = join(tmp, 'hosts-new');
  const aliasOut = join(tmp, 'hosts-alias');
  let built: Promise<[Awaited<ReturnType<typeof cli>>, Awaited<ReturnType<typeof cli>>]> | undefined;
  const builds = () => (built ??= Promise.all([cli('build', '--out', hostsOut, '--hosts', 'cloudflare', 'nginx'), cli('build', '--out', aliasOut, '--host', 'netlify')]));

  it('--hosts picks the hosts written for, with no warning', async () => {
    const [r] = await builds();
    expect(r.status, r.stderr).toBe(0);
    expect(ourLines(r.stderr)).toEqual([]);
    expect(glueIn(hostsOut)).toEqual(['cloudflare', 'nginx']);
  }, 120_000);

  it('build --host still works, with one warning line naming --hosts', async () => {
    const [, r] = await builds();
    expect(r.status, r.stderr).toBe(0);
    expect(ourLines(r.stderr)).toEqual([expect.stringMatching(/^snapshot: warning: --host is now --hosts\b/)]);
    expect(glueIn(aliasOut)).toEqual(['netlify']);
  }, 120_000);

  it('an unknown host is exit 1 naming --hosts and the choices, nothing built', async () => {
    const [bad, badAlias] = await Promise.all([cli('build', '--out', join(tmp, 'bad-host'), '--hosts', 'apache'), cli('build', '--out', join(tmp, 'bad-alias'), '--host', 'apache')]);
    for (const r of [bad, badAlias]) {
      expect(r.status).toBe(1);
      expect(r.stderr).toContain('Argument: hosts, Given: "apache", Choices: "netlify", "cloudflare", "nginx"\n');
    }
    expect(existsSync(join(tmp, 'bad-host'))).toBe(false);
    expect(existsSync(join(tmp, 'bad-alias'))).toBe(false);
  });

  it('help: build shows --hosts and not the old name; serve and demo describe --host as the address to listen on', async () => {
    const [b, s, d] = await Promise.all([cli('build', '--help'), cli('serve', '--help'), cli('demo', '--help')]);
    expect(b.stdout).toMatch(/^ {2}--hosts\b/m);
    expect(b.stdout).not.toMatch(/--host\b(?!s)/);
    for (const r of [s, d]) {
      expect(r.status).toBe(0);
      expect(r.stdout).toMatch(/^ {2}--host +\S.*listen/m);
      expect(r.stdout).toMatch(/^ {2}--port +\S/m);
    }
  });

  it('serve --host binds that address: 127.0.0.2 answers, 127.0.0.1 does not', async () => {
    const [r] = await builds();
    expect(r.status, r.stderr).toBe(0);
    const port = await freePort();
    const server = spawn(process.execPath, [...nodeArgs('src/cli.ts'), 'serve', '--dir', hostsOut, '--port', String(port), '--host', '127.0.0.2'], { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'] });
    let err = '';
    server.stderr.on('data', (d) => (err += d));
    const exited = new Promise<number | null>((ok) => server.once('exit', (code) => ok(code)));
    try {
      const deadline = Date.now() + 60_000;
      while (!err.includes(' on http')) {
        if (Date.now() > deadline || server.exitCode !== null) throw new Error(`serve did not start: ${err}`);
        await new Promise((ok) => setTimeout(ok, 100));
      }
      expect(err).toContain(`on http://127.0.0.2:${port}/`);
      expect(await listening(port, '127.0.0.2')).toBe(true);
      expect(await listening(port, '127.0.0.1')).toBe(false);
    } finally {
      server.kill('SIGTERM');
    }
    expect(await exited).toBe(0);
  }, 120_000);
});

describe('npm run demo', () => {
  it('killing the npm process stops the server (the port is free, no process left)', async () => {
    const port = await freePort();
    const out = join(tmp, 'demo-out');
    const npm = spawn('npm', ['run', 'demo', '--', '--port', String(port), '--out', out], { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] });
    let log = '';
    npm.stdout.on('data', (d) => (log += d));
    npm.stderr.on('data', (d) => (log += d));
    const exited = new Promise<number | null>((r) => npm.on('exit', (code, signal) => r(code ?? (signal ? -1 : null))));
    const deadline = Date.now() + 120_000;
    while (!(await listening(port))) {
      if (Date.now() > deadline || npm.exitCode !== null) throw new Error(`the demo did not start serving on ${port}:\n${log}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    const tree = descendants(npm.pid!);
    expect(tree.length).toBeGreaterThan(0);
    npm.kill('SIGTERM');
    await exited;
    const until = Date.now() + 10_000;
    while ((await listening(port)) || tree.some(alive)) {
      if (Date.now() > until) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(await listening(port)).toBe(false);
    expect(tree.filter(alive)).toEqual([]);
  }, 180_000);
});
