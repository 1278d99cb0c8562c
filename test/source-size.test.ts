/**
 * No source file under src/ is longer than 400 lines, so each stays readable as one piece; a file
 * that grows past it is split into cohesive modules. Offenders are named with their line counts.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { REPO } from './support/helpers.js';

const MAX_LINES = 400;

/** Every .ts file below `dir`, as a path relative to the repository. */
function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const path = join(dir, e.name);
    if (e.isDirectory()) return sources(path);
    return e.isFile() && e.name.endsWith('.ts') ? [relative(REPO, path)] : [];
  });
}

/** Lines as `wc -l` counts them, plus an unterminated last line. */
function lineCount(text: string): number {
  const lines = text.split('\n').length;
  return text.endsWith('\n') ? lines - 1 : lines;
}

describe('source size', () => {
  it(`has no file under src/ over ${MAX_LINES} lines`, () => {
    const files = sources(join(REPO, 'src'));
    expect(files.length).toBeGreaterThan(0);
    const over = files
      .map((f) => ({ f, n: lineCount(readFileSync(join(REPO, f), 'utf8')) }))
      .filter(({ n }) => n > MAX_LINES)
      .map(({ f, n }) => `${f}: ${n} lines`);
    expect(over, `split these into smaller modules:\n${over.join('\n')}`).toEqual([]);
  });
});
