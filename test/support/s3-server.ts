/**
 * A real S3 server for the publish tests: s3rver on a loopback port, behind a small proxy that
 * records every request (method, key, status), checks the integrity headers of every PUT the way
 * S3 does (Content-MD5, x-amz-checksum-sha256: BadDigest on a mismatch; s3rver checks neither)
 * and refuses a PUT that carries none, and lets a test answer, fail, corrupt or hold a request.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { expect } from 'vitest';
import { MANIFEST_PATH } from '../../src/contract/layout.js';
import { STATE_KEY } from '../../src/publish/bucket/plan.js';
import { REPO, nodeArgs } from './helpers.js';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { GetObjectCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver';

/** The bucket the publish tests write to. */
export const BUCKET = 'snap-test';

export const S3_ENV = { AWS_ACCESS_KEY_ID: 'S3RVER', AWS_SECRET_ACCESS_KEY: 'S3RVER', AWS_REGION: 'us-east-1' };

export interface S3Request {
  method: string;
  bucket: string;
  key: string;
  query: string;
  status: number;
}

/** What to do with a request: forward it, answer an S3 error, corrupt its body, or never answer. */
export type Verdict = 'pass' | 'hold' | 'corrupt' | { status: number; code: string };

export interface S3Fixture {
  /** The proxy's URL: what `--endpoint` names. */
  endpoint: string;
  requests: S3Request[];
  /** Decides each request (default: pass). */
  hook: (r: Omit<S3Request, 'status'>, nth: number) => Verdict;
  /** Requests held so far; resolves `held` waiters. */
  held: number;
  whenHeld(): Promise<void>;
  /** Resolves when no forwarded request is still being answered (s3rver's writes are not atomic). */
  settled(): Promise<void>;
  /** A client straight to s3rver (not through the proxy, not counted). */
  client: S3Client;
  /** Every object of `bucket` under `prefix` (key → bytes). */
  objects(bucket: string, prefix?: string): Promise<Map<string, Buffer>>;
  /** Content-Type and Cache-Control of an object. */
  head(bucket: string, key: string): Promise<{ contentType?: string; cacheControl?: string; body: Buffer }>;
  put(bucket: string, key: string, body: string): Promise<void>;
  close(): Promise<void>;
}

function s3Error(res: http.ServerResponse, status: number, code: string, message: string): void {
  res.writeHead(status, { 'Content-Type': 'application/xml' });
  res.end(`<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>${code}</Code><Message>${message}</Message></Error>`);
}

export async function startS3(buckets: string[]): Promise<S3Fixture> {
  const dir = mkdtempSync(join(tmpdir(), 'snapshot-s3rver-'));
  const server = new S3rver({ port: 0, address: '127.0.0.1', silent: process.env.S3RVER_LOG !== '1', directory: dir, configureBuckets: buckets.map((name) => ({ name, configs: [] })) });
  const { port } = (await server.run()) as AddressInfo;
  const upstream = `http://127.0.0.1:${port}`;
  const sockets = new Set<import('node:net').Socket>();
  const waiters: (() => void)[] = [];
  let nth = 0;
  let inflight = 0;
  const idle: (() => void)[] = [];
  const forwarded = () => {
    if (--inflight === 0) for (const w of idle.splice(0)) w();
  };
  const fx: S3Fixture = {
    endpoint: '',
    requests: [],
    hook: () => 'pass',
    held: 0,
    whenHeld: () => new Promise((r) => (fx.held > 0 ? r() : waiters.push(r))),
    settled: () => new Promise((r) => (inflight === 0 ? r() : idle.push(r))),
    client: new S3Client({
      endpoint: upstream,
      region: 'us-east-1',
      forcePathStyle: true,
      // A socket per request: a kept-alive socket that s3rver closes as idle just as it is reused
      // fails the next GET with ECONNRESET (seen on a loaded machine, 64 GETs at a time).
      requestHandler: { httpAgent: new http.Agent({ keepAlive: false }) },
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    }),
    async objects(bucket, prefix = '') {
      const out = new Map<string, Buffer>();
      const page = await storeKeys(bucket, prefix);
      for (let i = 0; i < page.length; i += 64) {
        const bodies = await Promise.all(page.slice(i, i + 64).map((o) => fx.head(bucket, o.key)));
        bodies.forEach((b, j) => out.set(page[i + j]!.key, b.body));
      }
      return out;
    },
    async head(bucket, key) {
      const r = await fx.client.send(new GetObjectCommand({ Bucket: bucket, Key: key })).catch((e: Error) => {
        throw new Error(`GET ${bucket}/${key} (straight to s3rver): ${e.name}`, { cause: e });
      });
      return { contentType: r.ContentType, cacheControl: r.CacheControl, body: Buffer.from(await r.Body!.transformToByteArray()) };
    },
    async put(bucket, key, body) {
      await fx.client.send(new PutObjectCommand({ Bucket: bucket, Key: key, Body: body }));
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise((r) => proxy.close(r));
      fx.client.destroy();
      await server.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  /** Every key under `prefix` in key order, read from s3rver's store (no 1000-key pages). */
  const storeKeys = async (bucket: string, prefix: string): Promise<{ key: string; size: number }[]> => {
    const r = (await server.store.listObjects(bucket, { prefix, maxKeys: Infinity })) as { objects: { key: string; metadata: Record<string, string> }[] };
    const keys = r.objects.map((o) => ({ key: o.key, size: Number(o.metadata['content-length']) }));
    return keys.sort((a, b) => Buffer.compare(Buffer.from(a.key), Buffer.from(b.key)));
  };
  /**
   * ListObjects (v1) answered here, in key order and paged by key as S3 does: s3rver's own pages
   * follow its directory walk, so paging by the last key skips keys (and its v2 tokens need DES,
   * which OpenSSL 3 refuses). Undefined when there is no such bucket: s3rver answers that.
   */
  const listing = async (bucket: string, prefix: string, marker: string): Promise<string | undefined> => {
    if (!(await server.store.getBucket(bucket))) return undefined;
    const after = (await storeKeys(bucket, prefix)).filter((k) => Buffer.compare(Buffer.from(k.key), Buffer.from(marker)) > 0);
    const page = after.slice(0, 1000);
    const esc = (t: string) => t.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
    const contents = page.map((k) => `<Contents><Key>${esc(k.key)}</Key><Size>${k.size}</Size><StorageClass>STANDARD</StorageClass></Contents>`).join('');
    return `<?xml version="1.0" encoding="UTF-8"?>\n<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Name>${esc(bucket)}</Name><Prefix>${esc(prefix)}</Prefix><Marker>${esc(marker)}</Marker><MaxKeys>1000</MaxKeys><IsTruncated>${after.length > page.length}</IsTruncated>${contents}</ListBucketResult>`;
  };
  const proxy = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      let body = Buffer.concat(chunks);
      const u = new URL(req.url!, 'http://x');
      const [, bucket = '', ...rest] = u.pathname.split('/');
      const r = { method: req.method!, bucket: decodeURIComponent(bucket), key: rest.map(decodeURIComponent).join('/'), query: u.search };
      const record = (status: number) => fx.requests.push({ ...r, status });
      const verdict = fx.hook(r, nth++);
      if (verdict === 'pass' && r.method === 'GET' && r.key === '' && u.search.includes('prefix=')) {
        void listing(r.bucket, u.searchParams.get('prefix') ?? '', u.searchParams.get('marker') ?? '').then((xml) => {
          if (xml === undefined) return forward();
          record(200);
          res.writeHead(200, { 'Content-Type': 'application/xml' });
          res.end(xml);
        });
        return;
      }
      if (verdict === 'hold') {
        fx.held++;
        for (const w of waiters.splice(0)) w();
        return;
      }
      if (typeof verdict === 'object') {
        record(verdict.status);
        return s3Error(res, verdict.status, verdict.code, 'injected by the test');
      }
      forward();
      function forward(): void {
        if (verdict === 'corrupt' && body.length > 0) (body = Buffer.from(body))[0]! ^= 0xff;
        const isPut = r.method === 'PUT' && r.key !== '' && !req.headers['x-amz-copy-source'];
        if (isPut) {
          const md5 = req.headers['content-md5'];
          const sha = req.headers['x-amz-checksum-sha256'];
          if (md5 === undefined && sha === undefined) {
            record(400);
            return s3Error(res, 400, 'MissingChecksum', 'this test server wants Content-MD5 or x-amz-checksum-sha256 on every PUT');
          }
          if ((md5 !== undefined && createHash('md5').update(body).digest('base64') !== md5) || (sha !== undefined && createHash('sha256').update(body).digest('base64') !== sha)) {
            record(400);
            return s3Error(res, 400, 'BadDigest', 'The Content-MD5 or checksum you specified did not match what was received.');
          }
        }
        const headers = { ...req.headers, 'content-length': String(body.length) };
        delete headers.expect; // answered here already; an unsigned header
        inflight++;
        const up = http.request(upstream + req.url, { method: req.method, headers }, (ur) => {
          record(ur.statusCode!);
          res.writeHead(ur.statusCode!, ur.headers);
          ur.pipe(res);
          ur.on('end', forwarded);
          ur.on('error', forwarded);
        });
        up.on('error', (e) => {
          forwarded();
          record(502);
          s3Error(res, 502, 'BadGateway', e.message);
        });
        up.end(body);
      }
    });
  });
  proxy.on('connection', (s) => {
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });
  await new Promise<void>((r) => proxy.listen(0, '127.0.0.1', r));
  fx.endpoint = `http://127.0.0.1:${(proxy.address() as AddressInfo).port}`;
  return fx;
}

/** Requests that store an object (PUT of a whole object or of a part, or completing an upload). */
export function stores(requests: readonly S3Request[], prefix: string): S3Request[] {
  return requests.filter((r) => r.key.startsWith(prefix) && r.status < 300 && ((r.method === 'PUT' && !r.query.includes('partNumber')) || (r.method === 'POST' && r.query.includes('uploadId'))));
}

/** path → bytes of every file a tree's manifest lists, and the manifest. */
export function treeFiles(dir: string): Map<string, Buffer> {
  const files = new Map<string, Buffer>();
  const manifest = readFileSync(join(dir, MANIFEST_PATH));
  for (const line of manifest.toString('utf8').trimEnd().split('\n')) {
    const path = line.split(' ')[2]!;
    files.set(path, readFileSync(join(dir, path)));
  }
  files.set(MANIFEST_PATH, manifest);
  return files;
}

/** The bucket under `prefix` (state object left out) as path → bytes. */
export async function bucketFiles(fx: S3Fixture, prefix: string): Promise<Map<string, Buffer>> {
  const out = new Map<string, Buffer>();
  for (const [k, v] of await fx.objects(BUCKET, `${prefix}/`)) if (k !== `${prefix}/${STATE_KEY}`) out.set(k.slice(prefix.length + 1), v);
  return out;
}

export function expectSameFiles(got: Map<string, Buffer>, want: Map<string, Buffer>): void {
  expect([...got.keys()].sort()).toEqual([...want.keys()].sort());
  for (const [k, v] of want) expect(got.get(k)?.equals(v), k).toBe(true);
}

/** Files of `b` that are new or differ from `a`. */
export function changedFiles(a: Map<string, Buffer>, b: Map<string, Buffer>): number {
  let n = 0;
  for (const [k, v] of b) if (!a.get(k)?.equals(v)) n++;
  return n;
}

/** Runs the CLI; resolves with its exit code, signal, stdout and stderr. */
export function cli(args: string[], onSpawn?: (kill: () => void) => void, env: Record<string, string | undefined> = {}): Promise<{ code: number | null; signal: NodeJS.Signals | null; stdout: string; stderr: string }> {
  const child = spawn(process.execPath, [...nodeArgs('src/cli.ts'), ...args], { cwd: REPO, env: { ...process.env, ...S3_ENV, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  onSpawn?.(() => child.kill('SIGKILL'));
  return new Promise((resolve) => child.on('close', (code, signal) => resolve({ code, signal, stdout, stderr })));
}

