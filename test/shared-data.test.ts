// The rule for tests on ../shared (test/support/shared-data.ts): missing data skips them with
// the path named, except with CI=true, where it is an error naming the path.
import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { missingShared, SHARED } from './support/shared-data.js';

const REPO = join(import.meta.dirname, '..');

/** Runs `requireShared(path)` in a fresh process (CI is read once, at import) with `ci` as CI. */
function requireIn(ci: string | undefined, path: string) {
  const env = { ...process.env };
  delete env.CI;
  if (ci !== undefined) env.CI = ci;
  const code = `const m = await import('./test/support/shared-data.ts'); console.log(JSON.stringify(m.requireShared(${JSON.stringify(path)})));`;
  return spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', code], { cwd: REPO, env, encoding: 'utf8' });
}

describe('shared test data rule', () => {
  const missing = 'chaindata/no-such-directory';

  it('names each missing path, relative to ../shared and absolute', () => {
    expect(missingShared([missing])).toBe(`../shared/${missing} is missing (${join(SHARED, missing)})`);
    expect(missingShared([])).toBeUndefined();
  });

  it('without CI a missing path means skip; with CI=true it throws naming the path', () => {
    const local = requireIn(undefined, missing);
    expect([local.status, local.stdout.trim()]).toEqual([0, 'false']);
    const ci = requireIn('true', missing);
    expect(ci.status).not.toBe(0);
    expect(ci.stderr).toContain(`CI=true but ../shared/${missing} is missing (${join(SHARED, missing)})`);
  });
});
