import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { expect } from 'vitest';
import type { BuildReport } from '../../src/site/build.js';
import { MANIFEST_PATH } from '../../src/contract/layout.js';

/**
 * Determinism: `fullRebuild` (a `full: true` build into the tree at `dir`) must say it was a full
 * build, write every file again (none kept as unchanged) and give a byte-identical manifest.
 */
export async function expectFullRebuildIdentical(dir: string, fullRebuild: () => Promise<BuildReport>): Promise<void> {
  const first = readFileSync(join(dir, MANIFEST_PATH), 'utf8');
  const again = await fullRebuild();
  expect(again.mode).toBe('full');
  expect(again.fullReason).toBe('asked for a full build');
  const listed = first.trim().split('\n').length; // every file but the manifest itself
  expect(again.files).toBe(listed + 1);
  expect(again.written).toBe(listed);
  expect(again.unchanged).toBe(0);
  expect(readFileSync(join(dir, MANIFEST_PATH), 'utf8')).toBe(first);
}
