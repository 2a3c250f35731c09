/**
 * Settings of CDN purges that wait for their pages (soft purges, `core/revalidate/soft-purge.ts`):
 * the purge queue, its DLQ, the deadline and the bound. The purger's event source (batch size,
 * batching window) is the construct's alone: `lib/isr-deploy-settings.ts`.
 */
import { int, text } from './define.js';
import { url } from './function-settings.js';
import { MAX_SQS_DELAY_SECONDS } from './limits.js';
import type { Reader } from './spec.js';

/** Who queues purges: the revalidate function (a deadline), the worker (a soft purge, a tag's deadline). */
const SENDERS: readonly Reader[] = ['revalidate', 'worker'];

export const PURGE_SETTINGS = {
  /**
   * The purge queue (standard, so each purge carries its own delay): the worker sends a page's
   * soft purge once it is published and a tag's deadline purge; the revalidate function its
   * paths' deadline purge. Unset: a revalidation purges the CDN at once, `regenerate` or not.
   * @bounds a URL
   */
  purgeQueueUrl: text('ISR_PURGE_QUEUE_URL', 'ref', SENDERS, undefined, { check: url }),
  /**
   * The purge queue's dead-letter queue, where the purger sends a purge it gives up on, with the
   * reason.
   * @bounds a URL
   */
  purgeDlqUrl: text('ISR_PURGE_DLQ_URL', 'ref', ['purger'], undefined, {
    required: true,
    check: url,
  }),
  /**
   * With `regenerate: true`, how long after a revalidation (each tag: after its pages are marked)
   * the pages not purged yet by their new generation are purged anyway (a failed, held or
   * bounded page). SQS delays a message at most 900 s.
   * @default 300
   */
  purgeDeadlineSeconds: int(
    'ISR_PURGE_DEADLINE_SECONDS',
    'prop',
    SENDERS,
    300,
    1,
    MAX_SQS_DELAY_SECONDS,
    { why: 'an SQS message is delayed at most 900 s', local: 30 },
  ),
  /**
   * Pages of one revalidation purged one by one once regenerated (`regenerate: true`); the rest
   * wait for the deadline's purge by tag. Each is one invalidation item, billed $0.005 past
   * CloudFront's 1,000 free a month, so this bounds a revalidation's cost ($5 at 1,000). `0`:
   * every page waits for the deadline.
   * @default 1_000
   */
  softPurgeMaxPages: int('ISR_SOFT_PURGE_MAX_PAGES', 'prop', SENDERS, 1_000, 0, 1_000_000, {
    why: '0: every page waits for the deadline',
  }),
};
