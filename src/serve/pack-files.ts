/**
 * `snapshot serve` of a pack directory (docs/pack-format.md): the router's file path is looked up
 * in the pack instead of on disk, and the answer handed to the server as the file cache's entries
 * are, so status, headers, conditional requests and ranges are decided by the same code as for a
 * tree.
 *
 * - ETag `W/"<size>-<crc-32 of the bytes sent>"` (weak, as the tree's; it changes with the bytes,
 *   and the gzip and plain forms of an answer have different ones); Last-Modified is the mtime of
 *   the pack's current index (every changed answer comes with a new index).
 * - An answer stored gzip goes as stored, with `Content-Encoding: gzip`, to a client that accepts
 *   gzip, decompressed to others; both carry `Vary: Accept-Encoding`.
 * - A rebuild replaces `pack.json`: {@link PackFiles.reload} (called when the server's watch sees
 *   the directory change) opens the new pack; the previous reader is closed a little later, after
 *   the requests still reading it.
 */
import { existsSync } from 'node:fs';
import { stat } from 'node:fs/promises';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { SITE_INFO_PATH, type SiteInfo } from '../contract/layout.js';
import { Encoding, Kind, PACK_POINTER } from '../contract/pack-format.js';
import { acceptsGzip, answerBytes, PackReader } from '../pack/reader.js';
import type { CacheEntry } from './file-cache.js';

const ABSENT: CacheEntry = { kind: 'absent' };
/** How long a replaced pack's reader stays open for the requests that started on it. */
const CLOSE_AFTER_MS = 30_000;

interface Generation {
  reader: PackReader;
  lastModified: string;
  mtimeMs: number;
  /** Small answers of this generation, by encoding and file (least recently used first), as the tree's file cache holds small files. */
  answers: Map<string, CacheEntry>;
  bytes: number;
}

/** Answers held in memory: at most this large each, and this much in all (as the tree's FileCache). */
const MAX_ANSWER_BYTES = 64 * 1024;
const MAX_HELD_BYTES = 64 * 1024 * 1024;

function remember(g: Generation, key: string, e: CacheEntry): CacheEntry {
  const size = e.kind === 'file' ? e.body.length : 0;
  if (size > MAX_ANSWER_BYTES) return e;
  g.answers.set(key, e);
  g.bytes += size + key.length;
  for (const [k, old] of g.answers) {
    if (g.bytes <= MAX_HELD_BYTES) break;
    g.answers.delete(k);
    g.bytes -= (old.kind === 'file' ? old.body.length : 0) + k.length;
  }
  return e;
}

async function openGeneration(dir: string): Promise<Generation> {
  const reader = await PackReader.open(dir);
  try {
    const st = await stat(join(dir, reader.index));
    return { reader, lastModified: st.mtime.toUTCString(), mtimeMs: st.mtime.getTime(), answers: new Map(), bytes: 0 };
  } catch (e) {
    await reader.close();
    throw e;
  }
}

/** The site info a pack holds (its `_site.json` entry). */
export async function packSiteInfo(dir: string): Promise<SiteInfo> {
  const reader = await PackReader.open(dir);
  try {
    return await siteInfoOf(reader, dir);
  } finally {
    await reader.close();
  }
}

async function siteInfoOf(reader: PackReader, dir: string): Promise<SiteInfo> {
  const a = await reader.get(SITE_INFO_PATH);
  if (a === undefined) throw new Error(`${dir}: the pack holds no ${SITE_INFO_PATH}`);
  return JSON.parse(Buffer.from(await answerBytes(a)).toString('utf8')) as SiteInfo;
}

/** A pack's answers as file entries for the server (see the module comment). */
export class PackFiles {
  private current: Promise<Generation>;
  /** Replaced readers not closed yet (the requests that started on them may still read). */
  private readonly retired = new Set<PackReader>();
  private closed = false;

  constructor(readonly dir: string) {
    this.current = openGeneration(dir);
    this.current.catch(() => undefined); // reported by the requests that await it
  }

  /** Whether `dir` holds a pack (a `pack.json`), not a tree. */
  static isPack(dir: string): boolean {
    return existsSync(join(dir, PACK_POINTER));
  }

  /** Opens the pack `pack.json` names now, when it is another one than the one in use. */
  async reload(): Promise<void> {
    const old = await this.current.catch(() => undefined);
    if (this.closed) return;
    const next = openGeneration(this.dir);
    const g = await next;
    if (this.closed || (old && g.reader.index === old.reader.index)) {
      await g.reader.close();
      return;
    }
    this.current = next;
    if (!old) return;
    this.retired.add(old.reader);
    setTimeout(() => {
      if (this.retired.delete(old.reader)) void old.reader.close();
    }, CLOSE_AFTER_MS).unref();
  }

  /** Closes the pack's files (the server has stopped: no request reads them any more). */
  async close(): Promise<void> {
    this.closed = true;
    const readers = [...this.retired];
    this.retired.clear();
    const g = await this.current.catch(() => undefined);
    if (g) readers.push(g.reader);
    await Promise.all(readers.map((r) => r.close()));
  }

  async siteInfo(): Promise<SiteInfo> {
    return siteInfoOf((await this.current).reader, this.dir);
  }

  /** The answer for the router's `file`, in the encoding the request's Accept-Encoding allows; absent when the pack has no such file. */
  async load(file: string, acceptEncoding: string | string[] | undefined): Promise<CacheEntry> {
    const g = await this.current;
    const gzip = acceptsGzip(acceptEncoding);
    const key = (gzip ? 'g:' : 'i:') + file;
    const held = g.answers.get(key);
    if (held !== undefined) {
      g.answers.delete(key); // most recently used last
      g.answers.set(key, held);
      return held;
    }
    const rec = await g.reader.lookup(file);
    if (rec === undefined) return remember(g, key, ABSENT);
    const a = await g.reader.get(file, { acceptEncoding: gzip ? 'gzip' : undefined });
    if (a === undefined) return remember(g, key, ABSENT);
    const body = Buffer.from(await answerBytes(a));
    const extra = a.contentEncoding === 'gzip' ? ['Content-Encoding', 'gzip', 'Vary', 'Accept-Encoding'] : rec.kind === Kind.STORED && rec.encoding === Encoding.GZIP ? ['Vary', 'Accept-Encoding'] : undefined;
    return remember(g, key, { kind: 'file', body, etag: `W/"${body.length}-${crc32(body).toString(16)}"`, lastModified: g.lastModified, mtimeMs: g.mtimeMs, extra });
  }
}
