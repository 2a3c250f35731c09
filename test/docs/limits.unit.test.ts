/** Limits the docs state, checked against the constants that enforce them (issue 19, item 20). */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from '@jest/globals';
import {
  MAX_CDN_TAG_LENGTH,
  MAX_TAG_LENGTH,
  tagProblem,
} from '../../lambda/core/page/cache-tags.js';
import { MAX_HOLD_SECONDS } from '../../lambda/core/operate/rollback.js';
import { MAX_BACKOFF_SHARED_MAX_AGE } from '../../lambda/core/serve/responses.js';

const doc = (file: string) =>
  readFileSync(new URL(`../../${file}`, import.meta.url), 'utf8').replace(/\s+/g, ' ');

describe('limits the docs state', () => {
  it("a tag's length: docs/REVALIDATION.md says what cache-tags.ts enforces", () => {
    expect(MAX_TAG_LENGTH).toBe(191);
    expect(doc('docs/REVALIDATION.md')).toContain(
      `A tag is therefore at most ${MAX_TAG_LENGTH} characters: ${MAX_CDN_TAG_LENGTH} less the longest scope`,
    );
    expect(tagProblem('t'.repeat(MAX_TAG_LENGTH))).toBeUndefined();
    expect(tagProblem('t'.repeat(MAX_TAG_LENGTH + 1))).toBeDefined();
  });

  it("a hold's length: docs/OPERATIONS.md and the README say what rollback.ts enforces", () => {
    const days = MAX_HOLD_SECONDS / 86_400;
    expect(doc('docs/OPERATIONS.md')).toContain(`A hold lasts at most ${days} days`);
    expect(doc('README.md')).toContain(`(at most ${days}d; release lifts it)`);
  });

  it("a STALE answer's s-maxage during a failure backoff: docs/BEHAVIOUR.md says what responses.ts does", () => {
    expect(doc('docs/BEHAVIOUR.md')).toContain(
      "except while the page's regeneration is backing off after failures (below): then " +
        `\`s-maxage\` is the wait before its next attempt, at most ${MAX_BACKOFF_SHARED_MAX_AGE} s`,
    );
  });
});
