/**
 * Damaged copies of a built tree for the verify tests: hard links to the good tree, files replaced
 * (never written through); and tiny hand-made trees for the pack tests.
 */
import { createHash } from 'node:crypto';
import { linkSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import { MANIFEST_PATH } from '../../src/contract/layout.js';

/** `d` made a tree of hard links to every file of `good`; returns `d`. */
export function linkCopy(good: string, d: string): string {
  const link = (rel: string) => {
    mkdirSync(join(d, rel), { recursive: true });
    for (const e of readdirSync(join(good, rel), { withFileTypes: true })) {
      if (e.isDirectory()) link(join(rel, e.name));
      else linkSync(join(good, rel, e.name), join(d, rel, e.name));
    }
  };
  link('');
  return d;
}

/** Replaces a file of a copy without touching the good tree it is linked to. */
export function put(d: string, rel: string, data: string | Buffer): void {
  rmSync(join(d, rel), { force: true });
  writeFileSync(join(d, rel), data);
}

/** Replaces a file and its manifest line (`<sha256 hex> <byte size> <path>`), so only the consistency checks can tell. */
export function rewriteListed(d: string, rel: string, content: string | Buffer): void {
  const buf = Buffer.from(content);
  put(d, rel, buf);
  const sha = createHash('sha256').update(buf).digest('hex');
  const manifest = readFileSync(join(d, MANIFEST_PATH), 'utf8');
  const lines = manifest.split('\n').map((l) => (l.endsWith(` ${rel}`) ? `${sha} ${buf.length} ${rel}` : l));
  expect(lines.join('\n')).not.toBe(manifest);
  put(d, MANIFEST_PATH, lines.join('\n'));
}

/** A tiny hand-made tree at `root`: `files` (path → contents) and a manifest that lists them. */
export function writeListedTree(root: string, files: Record<string, string | Buffer>): void {
  const lines: string[] = [];
  for (const [p, content] of Object.entries(files).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    const buf = Buffer.from(content);
    mkdirSync(join(root, p, '..'), { recursive: true });
    writeFileSync(join(root, p), buf);
    lines.push(`${createHash('sha256').update(buf).digest('hex')} ${buf.length} ${p}`);
  }
  writeFileSync(join(root, MANIFEST_PATH), lines.join('\n') + '\n');
}
