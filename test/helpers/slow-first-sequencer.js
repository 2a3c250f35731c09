// Jest loads the test sequencer outside its module system, so this file is plain ESM.
import { relative } from 'node:path';
import TestSequencer from '@jest/test-sequencer';

/**
 * Seconds each slow suite took in the last fresh-clone CI run (2 cores, one suite at a time):
 * what a run with no timing cache of its own (a new CI machine) goes by. Only the order uses
 * them; a suite missing here falls back to Jest's cached time, then to 0.
 */
export const KNOWN_SECONDS = {
  'test/docs/nextjs-local-steps.test.ts': 81,
  'test/docs/first-hour.test.ts': 73,
  'test/next/versions.test.ts': 68,
  'test/local/start.test.ts': 64,
  'test/model/model-check.test.ts': 58,
  'test/package/install.test.ts': 41,
  'test/lib/isr-cdn.test.ts': 15,
  'test/lib/isr-nag.test.ts': 14,
  'test/lib/isr-routing.test.ts': 14,
  'test/cli/npm-start.test.ts': 13,
  'test/next/data-cache.test.ts': 12,
  'test/docs/deploy-synth.test.ts': 11,
  'test/lib/isr-storage.test.ts': 11,
  'test/local/start-revalidate.test.ts': 10,
  'test/package/bundles.test.ts': 10,
};

/**
 * Slowest suites first, so that with two workers no long suite starts last and runs alone
 * (Jest does this only from its own timing cache, which a fresh CI machine lacks, and otherwise
 * goes by file size). Failed-last-time suites still come first, as Jest has them.
 */
export default class SlowFirstSequencer extends TestSequencer {
  sort(tests) {
    const expected = (test) => {
      const cached = this.time(test);
      if (cached !== undefined) return cached / 1000;
      return KNOWN_SECONDS[relative(test.context.config.rootDir, test.path)] ?? 0;
    };
    const rank = new Map(super.sort([...tests]).map((test, index) => [test, index]));
    return [...tests].sort(
      (a, b) =>
        Number(this.hasFailed(b)) - Number(this.hasFailed(a)) ||
        expected(b) - expected(a) ||
        rank.get(a) - rank.get(b),
    );
  }
}
