/**
 * `snapshot publish`: reads what the bucket holds under the prefix (the state object, the
 * published root, a listing), plans the difference with the local snapshot (plan.ts) and runs
 * it phase by phase, or prints it (`dryRun`) with the requests' cost.
 */
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import pLimit from 'p-limit';
import { MANIFEST_PATH, UI_FILES } from '../../contract/layout.js';
import { parseManifestLine } from '../../contract/manifest.js';
import { PACK_POINTER } from '../../contract/pack-format.js';
import { CACHE_LONG, CACHE_SHORT, CONTENT_TYPES, fileHeaders } from '../../contract/router.js';
import { ioError } from '../../runtime/io-error.js';
import type { Progress } from '../../runtime/progress.js';
import { STATE_KEY, encodeState, parseState, planPublish, planSteps, type LocalObject, type LocalSnapshot, type Plan, type RemoteView, type SnapshotKind, type Step } from './plan.js';
import { Bucket, parseBucketUrl, type ObjectHeaders } from './s3.js';
import { readLocalSnapshot, sha256Hex } from './snapshot.js';

export interface PublishOptions {
  dir: string;
  /** `s3://<bucket>/<prefix>`. */
  to: string;
  endpoint?: string;
  region?: string;
  /** Requests at once. */
  concurrency: number;
  /** Attempts per request (retries with back-off on throttling, 5xx and network errors). */
  maxAttempts: number;
  dryRun: boolean;
  /** Publish beside objects the tool did not write (never deleting them). */
  force: boolean;
  /** Files larger than this go in a multipart upload (default 64 MiB). */
  multipartBytes?: number;
  /** Bytes per part of a multipart upload (default 16 MiB; S3's least is 5 MiB). */
  partBytes?: number;
  progress?: Progress;
  /** The report's lines (stdout). */
  out?: (line: string) => void;
}

export interface PublishReport {
  kind: SnapshotKind;
  /** Objects written (the state object included), their bytes, objects deleted. */
  puts: number;
  bytes: number;
  deletes: number;
  /** Objects of the snapshot already in place. */
  unchanged: number;
  /** Keys under the prefix the tool did not write (published beside with --force). */
  foreign: string[];
  /** Requests of the plan at S3 Standard list prices, in US dollars. */
  costUsd: number;
}

/** S3 Standard list prices per request (us-east-1): PUT, COPY, POST, LIST; DELETE is free. */
export const PUT_PRICE_USD = 0.005 / 1000;
export const GET_PRICE_USD = 0.0004 / 1000;
const MULTIPART_BYTES = 64 * 1024 * 1024;
const PART_BYTES = 16 * 1024 * 1024;

/** The state, the published root and the listing. */
async function readRemote(bucket: Bucket, kind: SnapshotKind): Promise<RemoteView> {
  const listed = await bucket.list();
  const stateBytes = listed.has(STATE_KEY) ? await bucket.get(STATE_KEY) : undefined;
  const state = stateBytes && parseState(Buffer.from(stateBytes).toString('utf8'), bucket.where(STATE_KEY));
  const rootKey = (state?.kind ?? kind) === 'tree' ? MANIFEST_PATH : PACK_POINTER;
  // Without the state nothing under the prefix is ours, so the root is not read.
  const rootBytes = state && listed.has(rootKey) ? await bucket.get(rootKey) : undefined;
  let root: Map<string, string> | undefined;
  if (rootBytes && state?.kind === 'tree') {
    root = new Map();
    const text = Buffer.from(rootBytes).toString('utf8');
    let at = 0;
    for (let line = 1; at < text.length; line++) {
      const nl = text.indexOf('\n', at);
      const l = parseManifestLine(text.slice(at, nl < 0 ? text.length : nl));
      if (!l) throw new Error(`${bucket.where(MANIFEST_PATH)}: line ${line} is not "<sha256> <size> <path>"; not a manifest this tool published`);
      root.set(l.path, l.sha256);
      at = nl < 0 ? text.length : nl + 1;
    }
  }
  return { state, root, rootSha256: rootBytes && sha256Hex(rootBytes), listed };
}

/** Headers of an object: a tree's as `snapshot serve` sends them; pack parts and index never change. */
export function objectHeaders(kind: SnapshotKind, key: string): ObjectHeaders {
  if (key === STATE_KEY) return { contentType: CONTENT_TYPES.json, cacheControl: 'no-store' };
  if (kind === 'tree' || UI_FILES.includes(key)) return fileHeaders(key);
  return key === PACK_POINTER ? { contentType: CONTENT_TYPES.json, cacheControl: CACHE_SHORT } : { contentType: CONTENT_TYPES.bin, cacheControl: CACHE_LONG };
}

/** Requests the plan makes (a multipart upload: create, its parts, complete). */
function putRequests(plan: Plan, multipart: number, part: number): number {
  let n = 0;
  for (const s of planSteps(plan)) {
    if (s.op === 'state') n++;
    else if (s.op === 'put') n += s.object.size > multipart ? Math.ceil(s.object.size / part) + 2 : 1;
  }
  return n;
}

export async function publishToBucket(opts: PublishOptions): Promise<PublishReport> {
  const out = opts.out ?? ((line: string) => process.stdout.write(line + '\n'));
  const multipart = opts.multipartBytes ?? MULTIPART_BYTES;
  const partBytes = opts.partBytes ?? PART_BYTES;
  const url = parseBucketUrl(opts.to);
  const local = await readLocalSnapshot(opts.dir);
  const bucket = new Bucket(url, { endpoint: opts.endpoint, region: opts.region, maxAttempts: opts.maxAttempts });
  const target = `s3://${url.bucket}/${url.prefix}`;
  try {
    const remote = await readRemote(bucket, local.kind);
    const plan = planPublish(remote, local, opts.force);
    if (plan.foreign.length > 0 && !opts.force) {
      throw new Error(
        `${bucket.where(plan.foreign[0]!)} was not written by snapshot publish (${plan.foreign.length} such object${plan.foreign.length === 1 ? '' : 's'} under ${target}): ` +
          'publish to a prefix of its own, or pass --force to publish beside them (they are never deleted)',
      );
    }
    const steps = planSteps(plan);
    const puts = steps.filter((s) => s.op !== 'delete');
    const bytes = steps.reduce((n, s) => n + (s.op === 'put' ? s.object.size : 0), 0);
    const deletes = steps.length - puts.length;
    const written = new Set(steps.flatMap((s) => (s.op === 'put' ? [s.object.key] : [])));
    const listPages = Math.max(1, Math.ceil(remote.listed.size / 1000));
    const costUsd = (putRequests(plan, multipart, partBytes) + listPages) * PUT_PRICE_USD + 2 * GET_PRICE_USD;
    const report: PublishReport = { kind: local.kind, puts: puts.length, bytes, deletes, unchanged: local.objects.filter((o) => !written.has(o.key)).length, foreign: plan.foreign, costUsd };
    for (const k of plan.foreign.slice(0, 10)) out(`note: ${bucket.where(k)} was not written by snapshot publish; left as it is (--force)`);
    if (opts.dryRun) {
      for (const s of steps) out(s.op === 'delete' ? `DELETE ${bucket.where(s.key)}` : s.op === 'state' ? `PUT ${bucket.where(STATE_KEY)} (publish state)` : `PUT ${bucket.where(s.object.key)} ${s.object.size} bytes`);
      out(
        `dry run: ${report.puts} PUTs (${bytes} bytes), ${deletes} DELETEs, ${report.unchanged} objects unchanged; ` +
          `requests at S3 Standard list prices: $${costUsd.toFixed(4)} (PUT and LIST $0.005 per 1,000, GET $0.0004 per 1,000, DELETE free; storage and transfer not included)`,
      );
      return report;
    }
    await execute(bucket, local, opts.dir, plan, { concurrency: opts.concurrency, multipart, partBytes, progress: opts.progress });
    out(
      steps.length === 0
        ? `${target} is up to date: nothing written (${local.objects.length} objects)`
        : `published ${opts.dir} (${local.kind}) to ${target}: ${report.puts} objects written (${bytes} bytes), ${deletes} deleted, ${report.unchanged} unchanged`,
    );
    return report;
  } finally {
    bucket.close();
  }
}

interface ExecOptions {
  concurrency: number;
  multipart: number;
  partBytes: number;
  progress?: Progress;
}

async function execute(bucket: Bucket, local: LocalSnapshot, dir: string, plan: Plan, o: ExecOptions): Promise<void> {
  const limit = pLimit(Math.max(1, o.concurrency));
  const steps = planSteps(plan);
  const total = steps.reduce((n, s) => n + (s.op === 'put' ? s.object.size : 0), 0);
  const deletes = steps.filter((s) => s.op === 'delete').length;
  let sent = 0;
  let deleted = 0;
  const sentBytes = (n: number) => {
    sent += n;
    o.progress?.update(sent, total, 'bytes');
  };
  const objects = steps.filter((s) => s.op === 'put').length;
  if (total > 0) o.progress?.begin(`upload of ${objects} object${objects === 1 ? '' : 's'}`);
  for (const phase of plan.phases) {
    if (phase[0]!.op === 'delete') o.progress?.begin('delete');
    let failure: unknown;
    await Promise.all(
      phase.map((step) =>
        limit(async () => {
          if (failure !== undefined) return;
          try {
            await runStep(bucket, local.kind, dir, step, o, sentBytes);
            if (step.op === 'delete') o.progress?.update(++deleted, deletes, 'objects');
          } catch (e) {
            failure ??= e;
          }
        }),
      ),
    );
    if (failure !== undefined) throw failure;
  }
  o.progress?.end();
}

async function runStep(bucket: Bucket, kind: SnapshotKind, dir: string, step: Step, o: ExecOptions, sentBytes: (n: number) => void): Promise<void> {
  if (step.op === 'delete') return bucket.delete(step.key);
  if (step.op === 'state') return bucket.put(STATE_KEY, Buffer.from(encodeState(step.state)), objectHeaders(kind, STATE_KEY));
  const obj: LocalObject = step.object;
  const file = join(dir, obj.key);
  const headers = objectHeaders(kind, obj.key);
  const changed = (got: string) =>
    new Error(`${file} is not the file the snapshot lists (sha256 ${got}, expected ${obj.sha256}); it changed since the snapshot was written: build again, then publish`);
  if (obj.size > o.multipart) {
    const got = await bucket.upload(obj.key, file, headers, o.partBytes, Math.min(4, o.concurrency), sentBytes);
    // Nothing refers to the object yet (its root comes later): the next run writes it again.
    if (got !== obj.sha256) throw changed(got);
    return;
  }
  const body = await readFile(file).catch((e: unknown) => {
    throw ioError(e, file, 'reading');
  });
  const got = sha256Hex(body);
  if (got !== obj.sha256 || body.length !== obj.size) throw changed(got);
  await bucket.put(obj.key, body, headers);
  sentBytes(body.length);
}
