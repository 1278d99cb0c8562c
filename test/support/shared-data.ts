/**
 * The one rule for tests on the shared data beside the repository (`../shared`: real chain data
 * and reference fixtures, read-only, never copied into the repository):
 * - present: the tests run;
 * - missing: they are skipped, one skipped test per suite naming the missing path (the suite's
 *   body is not run, so it may read the data at collection);
 * - missing with CI=true: the file fails at collection with an error naming the path, because CI
 *   must run every test (and test/support/ci-shared-data.ts stops the whole run before it starts).
 */
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'vitest';

/** `../shared` beside the repository. */
export const SHARED = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'shared');

/** Runs on CI (where missing shared data is an error, not a skip). */
export const ON_CI = process.env.CI === 'true';

/** `../shared/<path>` as an absolute path (`path` relative to `../shared`, e.g. `chaindata/nbitcoin`). */
export function sharedPath(path: string): string {
  return join(SHARED, path);
}

/** Whether `../shared/<path>` exists. */
export function sharedData(path: string): boolean {
  return existsSync(sharedPath(path));
}

/** What is missing of `paths` (relative to ../shared), said for a reader; undefined when all are there. */
export function missingShared(paths: readonly string[]): string | undefined {
  const missing = paths.filter((p) => !sharedData(p));
  if (missing.length === 0) return undefined;
  return missing.map((p) => `../shared/${p} is missing (${sharedPath(p)})`).join('; ');
}

/**
 * Whether the tests on `paths` run: true when every path exists, false when one is missing
 * (skip them). With CI=true a missing path throws instead: at collection, this fails the file.
 */
export function requireShared(...paths: string[]): boolean {
  const missing = missingShared(paths);
  if (missing === undefined) return true;
  if (ON_CI) throw new Error(`CI=true but ${missing}: tests on the shared data may not be skipped on CI`);
  return false;
}

/**
 * `describe` for a suite on `../shared/<paths>`: vitest's own `describe` when they exist; when
 * one is missing, the suite holds a single skipped test whose name says what is missing (its
 * body is not run); with CI=true, a missing path fails the file (see {@link requireShared}).
 */
export function describeShared(...paths: string[]): typeof describe {
  if (requireShared(...paths)) return describe;
  const reason = `skipped: ${missingShared(paths)!}`;
  return ((name: string) => describe(name, () => it.skip(reason, () => {}))) as unknown as typeof describe;
}

/** `it` for a test on `../shared/<paths>`, under the same rule as {@link describeShared}. */
export function itShared(...paths: string[]): typeof it {
  if (requireShared(...paths)) return it;
  const reason = missingShared(paths)!;
  return ((name: string) => it.skip(`${name} (skipped: ${reason})`, () => {})) as unknown as typeof it;
}
