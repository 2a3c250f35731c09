/**
 * The RevalidationsInProgress port's contract: only the effect that owns an entry removes it,
 * from every shard at once; tenants are apart. Entries are written by a fan-out's start (its
 * own contract, `fan-out-starts/contract.ts`). The conflict case runs where the subject follows
 * AWS's transaction conflict rule (DynamoDB Local does not show it).
 */
import { afterEach, beforeEach, describe, expect, it } from '@jest/globals';
import { keyOf } from '../../../../lambda/adapters/shared/dynamodb/items.js';
import {
  IN_PROGRESS_SK,
  inProgressPartition,
} from '../../../../lambda/adapters/revalidations-in-progress/keys.js';
import { TransactionConflictError } from '../../../../lambda/core/errors.js';
import type { TableSubject } from '../../../helpers/contract-subjects.js';

const start = (effectId: string, shards: number, tenant?: string) => ({
  status: {
    effectId,
    tenant,
    mode: 'stale' as const,
    regenerate: false,
    state: 'marking' as const,
    pages: 0,
    marked: 0,
    regenerations: 0,
    held: 0,
    heldPages: [],
    acceptedAtMs: 2_000,
  },
  shards,
  fanOuts: [
    {
      tenant,
      effectId,
      mode: 'stale' as const,
      tag: 'post',
      regenerate: false,
      cursor: '',
      updatedAtMs: 2_000,
      marked: 0,
    },
  ],
  atMs: 2_000,
});

export function revalidationsInProgressContract(
  name: string,
  make: () => Promise<TableSubject>,
): void {
  describe(`RevalidationsInProgress contract (${name})`, () => {
    let s: TableSubject;
    beforeEach(async () => {
      s = await make();
    });
    afterEach(() => s.destroy());

    it('removes an entry from every shard, only for the effect that owns it; tenants are apart', async () => {
      const rows = s.inProgress;
      await s.fanOutStarts.start(start('rv_b', 4));
      await s.fanOutStarts.start(start('rv_t', 1, 't1'));
      expect(await rows.end(undefined, 4, 'stale#post', 'rv_a')).toBe(false);
      expect((await rows.read(undefined, 3)).get('stale#post')?.effectId).toBe('rv_b');
      expect(await rows.end(undefined, 4, 'stale#post', 'rv_b')).toBe(true);
      for (const shard of [0, 1, 2, 3]) expect((await rows.read(undefined, shard)).size).toBe(0);
      expect((await rows.read('t1', 0)).get('stale#post')?.effectId).toBe('rv_t');
    });

    // What DynamoDB Local does not show: it serialises transactions, so none is ever cancelled.
    it('a removal meeting another writer’s transaction (DynamoDB Local does not show it) is refused whole, to be tried again', async () => {
      if (s.conflicts === undefined) return;
      await s.fanOutStarts.start(start('rv_b', 2));
      const ongoing = s.conflicts.rule.begin('TransactWriteItemsCommand', {
        TransactItems: [
          {
            Update: {
              TableName: s.conflicts.tableName,
              Key: keyOf(inProgressPartition(undefined, 1), IN_PROGRESS_SK),
            },
          },
        ],
      });
      await expect(s.inProgress.end(undefined, 2, 'stale#post', 'rv_b')).rejects.toBeInstanceOf(
        TransactionConflictError,
      );
      expect((await s.inProgress.read(undefined, 0)).get('stale#post')?.effectId).toBe('rv_b');
      ongoing();
      expect(await s.inProgress.end(undefined, 2, 'stale#post', 'rv_b')).toBe(true);
    });
  });
}
