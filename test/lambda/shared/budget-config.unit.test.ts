/** The regeneration budget at cold start: unset is unlimited; 0, negative or not a number fails. */
import { describe, expect, it } from '@jest/globals';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ConfigError } from '../../../lambda/core/errors.js';
import { createBudgetDeps } from '../../../lambda/shared/budget.js';
import {
  loadOriginConfig,
  loadSweeperConfig,
  loadWorkerConfig,
} from '../../../lambda/shared/config.js';

const base = {
  FACETHEORY_CACHE_TABLE_NAME: 'cache',
  ISR_BODY_BUCKET: 'bodies',
  ISR_DLQ_URL: 'http://localhost/q/dlq.fifo',
  ISR_QUEUE_URL: 'http://localhost/q/queue.fifo',
};
const LOADERS = [
  ['worker', loadWorkerConfig],
  ['origin', loadOriginConfig],
  ['sweeper', loadSweeperConfig],
] as const;

describe('regenerationBudget at cold start', () => {
  it.each(LOADERS)('the %s reads it, and leaves it unset (unlimited) by default', (_, load) => {
    expect(load(base).regenerationBudget).toBeUndefined();
    const env = { ...base, ISR_REGENERATION_BUDGET: '50' };
    expect(load(env).regenerationBudget).toBe(50);
  });

  it.each([
    ['0', /must be an integer >= 1/],
    ['-5', /must be an integer >= 1/],
    ['2.5', /must be an integer >= 1/],
    ['fifty', /must be a number, got "fifty"/],
  ])('refuses %s, naming the variable', (value, reason) => {
    for (const [, load] of LOADERS) {
      const run = () => load({ ...base, ISR_REGENERATION_BUDGET: value });
      expect(run).toThrow(ConfigError);
      expect(run).toThrow(reason);
      expect(run).toThrow(/ISR_REGENERATION_BUDGET/);
    }
  });

  it('builds the budget on the cache table only when it is set', () => {
    const clients = { dynamodb: new DynamoDBClient({ region: 'us-east-1' }) };
    expect(createBudgetDeps({ tableName: 'cache' }, clients)).toBeUndefined();
    expect(
      createBudgetDeps({ tableName: 'cache', regenerationBudget: 7 }, clients)?.perMinute,
    ).toBe(7);
    clients.dynamodb.destroy();
  });
});
