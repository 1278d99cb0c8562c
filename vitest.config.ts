import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

// The slowest files (measured on 2 cores), started first so that the two workers end
// together instead of one long file running alone at the end; the rest in vitest's own order.
const SLOWEST = [
  'test/pack-hosts-chains.test.ts',
  'test/incremental-kill.test.ts',
  'test/conformance.test.ts',
  'test/build-kill.test.ts',
  'test/best-valid-chain.test.ts',
  'test/incremental.test.ts',
  'test/verify-trust.test.ts',
  'test/pack-tree.test.ts',
  'test/ui.e2e.test.ts',
  'test/rpc-rerun.test.ts',
  'test/cli.test.ts',
  'test/block-splice.test.ts',
  'test/validate.test.ts',
  'test/double-buffer.test.ts',
  'test/verify.test.ts',
  'test/corrupt-blocks.test.ts',
  'test/api-contract.test.ts',
  'test/package.test.ts',
];

class SlowestFirst extends BaseSequencer {
  override async sort(files: TestSpecification[]): Promise<TestSpecification[]> {
    const rank = (f: TestSpecification) => {
      const i = SLOWEST.findIndex((s) => f.moduleId.endsWith(s));
      return i === -1 ? SLOWEST.length : i;
    };
    const rest = await super.sort(files);
    return [...rest].sort((a, b) => rank(a) - rank(b)); // stable: the rest keep vitest's order
  }
}

// Files that keep a fresh process each: they mock modules (verify-chain), start browsers, run the
// edge runtimes or install the package. Every other file shares its worker's process with the files run
// before it (isolate: false): the sources are imported and the worker and UI bundles made once
// per worker instead of once per file (−22% CPU over those files). A file there must leave no
// global state behind (no mocks, stubs, fake timers, chdir or env changes).
const ISOLATED = [
  'test/conformance.test.ts',
  'test/ui.e2e.test.ts',
  'test/package.test.ts',
  'test/verify-chain.test.ts',
];

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // With CI=true, stops a run without ../shared before it starts; then compiles what the tests
    // run as child processes once per run (see each).
    globalSetup: ['test/support/ci-shared-data.ts', 'test/support/compile-children.ts'],
    pool: 'forks',
    // vitest's default is one worker less than the cores: a single worker on a 2-core machine.
    maxWorkers: 2,
    sequence: { sequencer: SlowestFirst },
    projects: [
      { extends: true, test: { name: 'isolated', include: ISOLATED, isolate: true } },
      { extends: true, test: { name: 'shared', include: ['test/**/*.test.ts'], exclude: ISOLATED, isolate: false } },
    ],
  },
});
