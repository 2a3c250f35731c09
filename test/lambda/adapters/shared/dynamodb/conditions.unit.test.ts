import { describe, expect, it } from '@jest/globals';
import {
  Guard,
  leaseHeld,
  leasedLockDelete,
} from '../../../../../lambda/adapters/shared/dynamodb/conditions.js';

const lease = { pk: 'p', token: 't-1' };

describe('leaseHeld', () => {
  it('holds a refresh or a release to the token alone, with the update names joined', () => {
    expect(leaseHeld(lease, { update: 'SET #ttl = :ttl' })).toEqual({
      ConditionExpression: Guard.leaseToken,
      ExpressionAttributeNames: { '#ttl': 'ttl', '#lease_token': 'lease_token' },
      ExpressionAttributeValues: { ':token': { S: 't-1' } },
    });
  });

  it('holds a write under the lease to the token and the lease live on the caller clock', () => {
    expect(leaseHeld(lease, { now: 100 })).toEqual({
      ConditionExpression: `${Guard.leaseToken} AND ${Guard.leaseLive}`,
      ExpressionAttributeNames: {
        '#lease_token': 'lease_token',
        '#lease_expires_at': 'lease_expires_at',
      },
      ExpressionAttributeValues: { ':token': { S: 't-1' }, ':now': { N: '100' } },
    });
  });
});

describe('leasedLockDelete', () => {
  it("deletes the caller's LOCK only while held, live and (for a publish) unmarked, returning LOCK on failure", () => {
    expect(leasedLockDelete('table', lease, { now: 100, unmarked: true })).toEqual({
      Delete: {
        TableName: 'table',
        Key: { pk: { S: 'p' }, sk: { S: 'LOCK' } },
        ConditionExpression: `${Guard.leaseToken} AND ${Guard.leaseLive} AND ${Guard.notRevalidated}`,
        ExpressionAttributeNames: {
          '#lease_token': 'lease_token',
          '#lease_expires_at': 'lease_expires_at',
          '#revalidated_by': 'revalidated_by',
        },
        ExpressionAttributeValues: { ':token': { S: 't-1' }, ':now': { N: '100' } },
        ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
      },
    });
  });

  it('leaves out the revalidation mark where the write is not a render (restore, hold)', () => {
    expect(leasedLockDelete('table', lease, { now: 100 }).Delete?.ConditionExpression).toBe(
      `${Guard.leaseToken} AND ${Guard.leaseLive}`,
    );
  });
});
