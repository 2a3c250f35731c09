import { DynamoRegenerationBudget } from '../adapters/regeneration-budget/dynamodb.js';
import type { BudgetDeps } from '../core/page/budget.js';
import type { AwsClients } from './aws-clients.js';

/** The regeneration budget on the cache table, when one is set (unset: unlimited). */
export function createBudgetDeps(
  config: { readonly tableName: string; readonly regenerationBudget?: number | undefined },
  clients: Pick<AwsClients, 'dynamodb'>,
): BudgetDeps | undefined {
  const perMinute = config.regenerationBudget;
  if (perMinute === undefined) return undefined;
  const budget = new DynamoRegenerationBudget({
    client: clients.dynamodb,
    tableName: config.tableName,
  });
  return { budget, perMinute };
}
