/**
 * The one place the CLI gets its `CdnInvalidator` (the purge a rollback or a release makes).
 * For now: deployed stacks report "not configured" and local mode prints the purge; the real
 * CloudFront and local adapters (issue 14) plug in here.
 */
import { randomUUID } from 'node:crypto';
import type { CdnInvalidator } from '../lambda/core/ports.js';
import type { Target } from './target.js';

export function cdnInvalidatorFor(
  target: Pick<Target, 'kind'>,
  print: (line: string) => void = (line) => console.error(line),
): CdnInvalidator {
  if (target.kind === 'stack') {
    return { invalidateTags: () => Promise.resolve({ status: 'not-configured' }) };
  }
  return {
    invalidateTags: (tags) => {
      const id = `local-${randomUUID().slice(0, 8)}`;
      print(`CDN purge ${id} (local: printed only): ${tags.map((tag) => `#${tag}`).join(' ')}`);
      return Promise.resolve({ status: 'submitted', invalidationIds: [id] });
    },
  };
}
