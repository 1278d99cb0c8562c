/**
 * A real S3 server for the publish tests: s3rver on a loopback port, behind a small proxy that
 * records every request (method, key, status), checks the integrity headers of every PUT the way
 * S3 does (Content-MD5, x-amz-checksum-sha256: BadDigest on a mismatch; s3rver checks neither)
 * and refuses a PUT that carries none, and lets a test answer, fail, corrupt or hold a request.
 */
import { createHash } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GetObjectCommand, ListObjectsCommand, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
// @ts-expect-error s3rver ships no types
import S3rver from 's3rver';

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
  const fx: S3Fixture = {
    endpoint: '',
    requests: [],
    hook: () => 'pass',
    held: 0,
    whenHeld: () => new Promise((r) => (fx.held > 0 ? r() : waiters.push(r))),
    client: new S3Client({
      endpoint: upstream,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' },
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    }),
    async objects(bucket, prefix = '') {
      const out = new Map<string, Buffer>();
      let marker: string | undefined;
      for (;;) {
        // v1, paged by key: s3rver's v2 continuation tokens need DES, which OpenSSL 3 refuses.
        const r = await fx.client.send(new ListObjectsCommand({ Bucket: bucket, Prefix: prefix, Marker: marker }));
        const page = r.Contents ?? [];
        const bodies = await Promise.all(page.map((o) => fx.head(bucket, o.Key!)));
        page.forEach((o, i) => out.set(o.Key!, bodies[i]!.body));
        if (!r.IsTruncated || page.length === 0) break;
        marker = page[page.length - 1]!.Key;
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
      if (verdict === 'hold') {
        fx.held++;
        for (const w of waiters.splice(0)) w();
        return;
      }
      if (typeof verdict === 'object') {
        record(verdict.status);
        return s3Error(res, verdict.status, verdict.code, 'injected by the test');
      }
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
      const up = http.request(upstream + req.url, { method: req.method, headers }, (ur) => {
        record(ur.statusCode!);
        res.writeHead(ur.statusCode!, ur.headers);
        ur.pipe(res);
      });
      up.on('error', (e) => {
        record(502);
        s3Error(res, 502, 'BadGateway', e.message);
      });
      up.end(body);
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
