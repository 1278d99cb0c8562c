/**
 * The bucket a publish writes to, through the AWS SDK v3 S3 client: any S3-compatible store
 * (AWS S3; Cloudflare R2, Backblaze B2, MinIO through `endpoint`, path-style). Credentials and
 * region come from the SDK's default chain (environment, shared config/credentials files, SSO,
 * instance roles). Every error names the object and the S3 error code.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { PassThrough } from 'node:stream';
import { DeleteObjectCommand, GetObjectCommand, ListObjectsCommand, PutObjectCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { Upload } from '@aws-sdk/lib-storage';

/** `s3://<bucket>/<prefix>`: the prefix without leading or trailing slashes ('' = the whole bucket). */
export interface BucketUrl {
  bucket: string;
  prefix: string;
}

export function parseBucketUrl(url: string): BucketUrl {
  const m = /^s3:\/\/([^/]+)(?:\/(.*))?$/.exec(url);
  const example = 's3://my-bucket/snapshots/bitcoin';
  if (!m) throw new Error(`--to ${JSON.stringify(url)} is not s3://<bucket>/<prefix> (e.g. --to ${example})`);
  const bucket = m[1]!;
  if (!/^[a-z0-9][a-z0-9.-]{1,61}[a-z0-9]$/.test(bucket)) throw new Error(`--to ${JSON.stringify(url)}: bucket ${JSON.stringify(bucket)} is not a bucket name (3–63 of a-z 0-9 . -, starting and ending with a letter or digit)`);
  const prefix = (m[2] ?? '').replace(/^\/+|\/+$/g, '');
  for (const seg of prefix === '' ? [] : prefix.split('/')) {
    if (seg === '' || seg === '.' || seg === '..') throw new Error(`--to ${JSON.stringify(url)}: the prefix has an empty, "." or ".." segment`);
  }
  return { bucket, prefix };
}

export interface BucketOptions {
  /** An S3-compatible endpoint (R2, B2, MinIO…): path-style addressing. */
  endpoint?: string;
  region?: string;
  /** Attempts per request (the SDK's standard retry strategy: throttling, 5xx and network errors with back-off). */
  maxAttempts: number;
}

export interface ObjectHeaders {
  contentType: string;
  cacheControl: string;
  contentEncoding?: string;
}

/** The SDK's error code and HTTP status, or the error's own message. */
function describe(e: unknown): string {
  if (e instanceof S3ServiceException) return `${e.name} (HTTP ${e.$metadata.httpStatusCode ?? '?'})${e.message && e.message !== e.name && e.message !== 'UnknownError' ? `: ${e.message}` : ''}`;
  const text = e instanceof Error ? e.message : String(e);
  if (/Region is missing/.test(text)) return `${text} (pass --region or set AWS_REGION)`;
  if (/Could not load credentials/.test(text)) return `${text} (set AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY, or AWS_PROFILE)`;
  return text;
}

function notFound(e: unknown): boolean {
  return e instanceof S3ServiceException && (e.name === 'NoSuchKey' || e.name === 'NotFound');
}

export class Bucket {
  readonly client: S3Client;

  constructor(
    readonly url: BucketUrl,
    opts: BucketOptions,
  ) {
    // The SDK's documented switch (aws/aws-sdk-js-v3#7983) for its Node 20 end-of-support notice.
    process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';
    this.client = new S3Client({
      region: opts.region,
      endpoint: opts.endpoint,
      forcePathStyle: opts.endpoint !== undefined,
      maxAttempts: opts.maxAttempts,
      retryMode: 'standard',
      // Checksums only where S3 requires them: the PUTs carry their own (Content-MD5 or
      // x-amz-checksum-sha256 per part), and stores short of S3's newest defaults accept these.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
    });
  }

  key(rel: string): string {
    return this.url.prefix === '' ? rel : `${this.url.prefix}/${rel}`;
  }

  /** `s3://bucket/key`, for messages. */
  where(rel: string): string {
    return `s3://${this.url.bucket}/${this.key(rel)}`;
  }

  private fail(op: string, rel: string | undefined, e: unknown): never {
    const what = rel === undefined ? `s3://${this.url.bucket}/${this.url.prefix}` : this.where(rel);
    throw new Error(`${op} ${what} failed: ${describe(e)}`, { cause: e });
  }

  /** The object's bytes, or undefined when there is none. */
  async get(rel: string): Promise<Uint8Array | undefined> {
    try {
      const r = await this.client.send(new GetObjectCommand({ Bucket: this.url.bucket, Key: this.key(rel) }));
      return await r.Body!.transformToByteArray();
    } catch (e) {
      if (notFound(e)) return undefined;
      this.fail('GET', rel, e);
    }
  }

  /**
   * Every key under the prefix (relative to it) with its size. ListObjects (v1) paged by the last
   * key: every S3-compatible store answers it, and s3rver's v2 continuation tokens need DES,
   * which OpenSSL 3 no longer offers.
   */
  async list(): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    const prefix = this.url.prefix === '' ? '' : `${this.url.prefix}/`;
    let marker: string | undefined;
    try {
      for (;;) {
        const r = await this.client.send(new ListObjectsCommand({ Bucket: this.url.bucket, Prefix: prefix, Marker: marker }));
        const page = r.Contents ?? [];
        for (const o of page) out.set(o.Key!.slice(prefix.length), o.Size ?? 0);
        if (!r.IsTruncated || page.length === 0) break;
        marker = page[page.length - 1]!.Key;
      }
    } catch (e) {
      this.fail('LIST', undefined, e);
    }
    return out;
  }

  /** One PUT of `body` with its Content-MD5, which the store checks before it keeps the object. */
  async put(rel: string, body: Uint8Array, h: ObjectHeaders): Promise<void> {
    const md5 = createHash('md5').update(body).digest('base64');
    try {
      await this.client.send(
        new PutObjectCommand({
          Bucket: this.url.bucket,
          Key: this.key(rel),
          Body: body,
          ContentLength: body.length,
          ContentMD5: md5,
          ContentType: h.contentType,
          CacheControl: h.cacheControl,
          ContentEncoding: h.contentEncoding,
        }),
      );
    } catch (e) {
      this.fail('PUT', rel, e);
    }
  }

  /**
   * A large file in a multipart upload (`partBytes` per part, `queue` parts at once), each part
   * with its x-amz-checksum-sha256; resolves to the sha256 of the bytes read, which the caller
   * compares with what the snapshot says before anything refers to the object.
   */
  async upload(rel: string, file: string, h: ObjectHeaders, partBytes: number, queue: number, onBytes: (n: number) => void): Promise<string> {
    const hash = createHash('sha256');
    const body = new PassThrough();
    const source = createReadStream(file);
    source.on('data', (chunk) => {
      hash.update(chunk as Buffer);
      onBytes((chunk as Buffer).length);
    });
    source.on('error', (e) => body.destroy(e));
    source.pipe(body);
    try {
      const upload = new Upload({
        client: this.client,
        partSize: partBytes,
        queueSize: queue,
        params: {
          Bucket: this.url.bucket,
          Key: this.key(rel),
          Body: body,
          ChecksumAlgorithm: 'SHA256',
          ContentType: h.contentType,
          CacheControl: h.cacheControl,
          ContentEncoding: h.contentEncoding,
        },
      });
      await upload.done();
    } catch (e) {
      source.destroy();
      this.fail('PUT (multipart)', rel, e);
    }
    return hash.digest('hex');
  }

  async delete(rel: string): Promise<void> {
    try {
      await this.client.send(new DeleteObjectCommand({ Bucket: this.url.bucket, Key: this.key(rel) }));
    } catch (e) {
      this.fail('DELETE', rel, e);
    }
  }

  close(): void {
    this.client.destroy();
  }
}
