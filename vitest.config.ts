import { BaseSequencer, type TestSpecification } from 'vitest/node';
import { defineConfig } from 'vitest/config';

// The slowest files (measured on 2 cores), started first so that the two workers end
// together instead of one long file running alone at the end; the rest in vitest's own order.
const SLOWEST = [
  'test/rpc-rerun.test.ts',
  'test/build-kill.test.ts',
  'test/conformance.test.ts',
  'test/cli.test.ts',
  'test/incremental.test.ts',
  'test/incremental-kill.test.ts',
  'test/ui.e2e.test.ts',
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

export default defineConfig({
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 120_000,
    // Compiles what the tests run as child processes once per run (see there).
    globalSetup: ['test/compile-children.ts'],
    pool: 'forks',
    // vitest's default is one worker less than the cores: a single worker on a 2-core machine.
    maxWorkers: 2,
    sequence: { sequencer: SlowestFirst },
  },
});
