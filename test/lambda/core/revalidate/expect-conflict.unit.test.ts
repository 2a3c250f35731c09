/**
 * Found by the model check (issue 33, `npm run model-check -- 1000 33002`, run 150, with
 * transaction conflicts in its schedule): the accept records the pages it expects on the
 * status while its first fan-out step's transaction, which counts on the same status row, is
 * ongoing. DynamoDB refuses such a write (`TransactionConflictException`,
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling)
 * and the SDK does not retry it: the accept threw after its fan-out had started. It is now
 * retried with the jittered backoff every conflicted write of a fan-out gets (`retryConflicts`).
 */
import { describe, expect, it } from '@jest/globals';
import { TransactionConflictError } from '../../../../lambda/core/errors.js';
import type { RevalidationStatuses } from '../../../../lambda/core/revalidate/ports.js';
import { acceptRevalidation } from '../../../../lambda/core/revalidate/fan-out.js';
import { backgroundService } from '../../../helpers/fan-out.js';

/** The statuses, whose first `expect` meets another writer's ongoing transaction. */
function conflictedOnce(real: RevalidationStatuses): RevalidationStatuses {
  let conflicted = false;
  return Object.assign(Object.create(real) as RevalidationStatuses, {
    expect: (...args: Parameters<RevalidationStatuses['expect']>) => {
      if (conflicted) return real.expect(...args);
      conflicted = true;
      return Promise.reject(new TransactionConflictError('status row conflicted (injected)'));
    },
  });
}

describe('the accept of a tag revalidation', () => {
  it('answers once its expected pages are recorded, a conflict on the status row retried', async () => {
    const ctx = backgroundService();
    await ctx.get('/a');
    const revalidation = ctx.revalidation();
    const deps = { ...ctx.deps, statuses: conflictedOnce(ctx.deps.statuses) };
    const answered = await acceptRevalidation(deps, revalidation);
    expect(answered.marking).toMatchObject({ tags: 1, expected: { count: 1, exact: true } });
    expect(await ctx.deps.statuses.get(revalidation.effectId)).toMatchObject({
      expected: { count: 1 },
    });
  });
});
