/**
 * vitest globalSetup: with CI=true, a run without the shared data beside the repository stops
 * before any test starts, naming what is missing (without CI those tests are skipped one by one:
 * test/support/shared-data.ts).
 */
import { missingShared, ON_CI } from './shared-data.js';

/** What every run on CI needs under ../shared: the real chain data and the reference fixtures. */
const NEEDED = ['chaindata', 'webbtc-fixtures'];

export default function setup(): void {
  const missing = ON_CI ? missingShared(NEEDED) : undefined;
  if (missing !== undefined) {
    throw new Error(`CI=true but ${missing}. CI runs every test on the shared data: provide ../shared beside the repository, or run without CI=true to skip those tests.`);
  }
}
