/**
 * `snapshot merge` of shard trees (docs/operations.md, "Stages and shards"): the shards' files
 * are disjoint, so the merged tree is their union, hard-linked (copied across file systems) into
 * a new release of `out`, plus the files only the merge can write (`extra`: those that name the
 * output's own directory) and one `_manifest.json`, the shards' manifests merged. It is published
 * as a build publishes (publish.ts: staged beside, swapped in with one rename; nothing foreign is
 * ever removed).
 */
import { createReadStream, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { MANIFEST_PATH } from '../contract/layout.js';
import { encodeManifestLine, parseManifestLine, safePath, type ManifestLine } from '../contract/manifest.js';
import { linkOrCopy, onPath } from '../runtime/io-error.js';
import { acquireLock, checkTargets, createStaging, publish, recoverInterrupted } from './publish.js';

/** A shard's manifest lines, in order, checked (the merged manifest must stay sorted and unique). */
export async function* manifestLines(text: AsyncIterable<string>, where: string): AsyncGenerator<ManifestLine> {
  let n = 0;
  for await (const line of text) {
    n++;
    const l = parseManifestLine(line);
    if (l === undefined || !safePath(l.path)) throw new Error(`${where}:${n}: not a manifest line: ${JSON.stringify(line.slice(0, 120))}`);
    yield l;
  }
}

/**
 * The lines of a file. The reader is made when the first line is asked for, and iterated at once:
 * readline emits lines as the file is read, and one made earlier would lose those emitted before
 * its iterator exists (several are read in turns here).
 */
export async function* fileLines(path: string): AsyncGenerator<string> {
  yield* createInterface({ input: createReadStream(path), crlfDelay: Infinity });
}

const byteOrder = (a: string, b: string) => Buffer.compare(Buffer.from(a, 'utf8'), Buffer.from(b, 'utf8'));

/**
 * The lines of several sorted manifests as one sorted manifest (UTF-8 byte order of the paths),
 * each with the index of its source; `skip` paths are left out; a path in two sources throws,
 * naming both (shards are disjoint).
 */
export async function* mergeManifests(sources: { lines: AsyncIterable<ManifestLine>; name: string }[], skip: ReadonlySet<string>): AsyncGenerator<ManifestLine & { from: number }> {
  const its = sources.map((s) => s.lines[Symbol.asyncIterator]());
  const heads: (ManifestLine | undefined)[] = [];
  const next = async (i: number) => {
    for (;;) {
      const r = await its[i]!.next();
      if (r.done) return undefined;
      if (!skip.has(r.value.path)) return r.value;
    }
  };
  for (let i = 0; i < its.length; i++) heads.push(await next(i));
  let last: { path: string; from: number } | undefined;
  for (;;) {
    let min = -1;
    for (let i = 0; i < heads.length; i++) if (heads[i] && (min < 0 || byteOrder(heads[i]!.path, heads[min]!.path) < 0)) min = i;
    if (min < 0) return;
    const line = heads[min]!;
    if (last && byteOrder(last.path, line.path) >= 0) {
      throw new Error(last.path === line.path ? `${line.path} is in two shards: ${sources[last.from]!.name} and ${sources[min]!.name}` : `${sources[min]!.name}: its manifest is not sorted at ${line.path}`);
    }
    last = { path: line.path, from: min };
    yield { ...line, from: min };
    heads[min] = await next(min);
  }
}

/** Writes manifest lines to `path`; returns the lines written. */
export async function writeManifestLines(path: string, lines: AsyncIterable<ManifestLine>, onLine?: (l: ManifestLine) => void): Promise<number> {
  let chunk: string[] = [];
  let n = 0;
  let size = 0;
  writeFileSync(path, '', { flag: 'wx' });
  for await (const l of lines) {
    onLine?.(l);
    const text = encodeManifestLine(l.sha256, l.size, l.path);
    chunk.push(text);
    size += text.length;
    n++;
    if (size >= 1 << 20) {
      writeFileSync(path, chunk.join(''), { flag: 'a' });
      chunk = [];
      size = 0;
    }
  }
  writeFileSync(path, chunk.join(''), { flag: 'a' });
  return n;
}

export interface TreeShard {
  /** The shard's published tree. */
  dir: string;
  /** How errors name it (its output directory). */
  name: string;
}

/** Merges the shard trees into a new release of `out` (their `skip` paths left out, `extra` added) and publishes it; `check` sees each path with its shard. Returns the files of the merged tree (manifest included). */
export async function mergeTrees(shards: readonly TreeShard[], out: string, skip: ReadonlySet<string>, extra: ReadonlyMap<string, string>, check: (path: string, from: number) => void): Promise<{ files: number; outDir: string }> {
  const { outDir } = checkTargets(out, undefined);
  const lock = acquireLock(outDir);
  try {
    recoverInterrupted(outDir);
    const staging = createStaging(outDir);
    try {
      const dirs = new Set<string>();
      const place = (rel: string) => {
        const d = dirname(join(staging, rel));
        if (!dirs.has(d)) onPath(d, 'creating', () => mkdirSync(d, { recursive: true }));
        dirs.add(d);
        return join(staging, rel);
      };
      const extraLines = [...extra].map(([path, text]): ManifestLine => {
        onPath(place(path), 'writing', () => writeFileSync(place(path), text, { flag: 'wx' }));
        return { sha256: createHash('sha256').update(text).digest('hex'), size: Buffer.byteLength(text), path };
      });
      async function* fixed(): AsyncGenerator<ManifestLine> {
        yield* extraLines.sort((a, b) => byteOrder(a.path, b.path));
      }
      const sources = [
        ...shards.map((s) => ({ lines: manifestLines(fileLines(join(s.dir, MANIFEST_PATH)), join(s.dir, MANIFEST_PATH)), name: s.name })),
        { lines: fixed(), name: 'the merge' },
      ];
      const lines = mergeManifests(sources, new Set([...skip, MANIFEST_PATH]));
      const count = await writeManifestLines(join(staging, MANIFEST_PATH), withFiles(lines, shards, place, check));
      checkTargets(outDir, undefined);
      await publish(staging, outDir);
      return { files: count + 1, outDir };
    } catch (e) {
      rmSync(staging, { recursive: true, force: true });
      throw e;
    }
  } finally {
    lock.release();
  }
}

/** Each shard file put into the staging tree (a hard link, or a copy across file systems) as its line passes. */
async function* withFiles(lines: AsyncIterable<ManifestLine & { from: number }>, shards: readonly TreeShard[], place: (rel: string) => string, check: (path: string, from: number) => void): AsyncGenerator<ManifestLine> {
  for await (const l of lines) {
    if (l.from < shards.length) {
      check(l.path, l.from);
      const src = join(shards[l.from]!.dir, l.path);
      const dst = place(l.path);
      linkOrCopy(src, dst);
    }
    yield l;
  }
}
