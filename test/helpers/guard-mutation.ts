/**
 * Negative controls without a switch in production code: a client middleware that removes one
 * named condition fragment from every request, as if the guard had never been written. A test
 * that proves a guard runs its scenario once more with the guard removed and expects the
 * violation to appear.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

const ALWAYS_TRUE = '(attribute_exists(#pk) OR attribute_not_exists(#pk))';
const EXPRESSION_FIELDS = [
  'ConditionExpression',
  'UpdateExpression',
  'ProjectionExpression',
] as const;

interface ExpressionHolder {
  ConditionExpression?: string;
  UpdateExpression?: string;
  ProjectionExpression?: string;
  ExpressionAttributeNames?: Record<string, string>;
  ExpressionAttributeValues?: Record<string, unknown>;
}

let counter = 0;

/**
 * Removes `fragment` from the conditions `client` sends until the returned function is called;
 * with `only`, from those commands (e.g. `'UpdateItemCommand'`) and those kinds of transaction
 * item (e.g. `'Update'`) alone.
 */
export function removeGuard(
  client: DynamoDBClient,
  fragment: string,
  only?: readonly string[],
): () => void {
  const name = `remove-guard-${++counter}`;
  const applies = (kind: string) => only === undefined || only.includes(kind);
  client.middlewareStack.add(
    (next, context) => async (args) => {
      const input = args.input as ExpressionHolder & {
        TransactItems?: Record<string, ExpressionHolder | undefined>[];
      };
      if (applies(context.commandName ?? '')) stripGuard(input, fragment);
      for (const item of input.TransactItems ?? []) {
        for (const [kind, action] of Object.entries(item))
          if (action !== undefined && applies(kind)) stripGuard(action, fragment);
      }
      return next(args);
    },
    { step: 'initialize', name },
  );
  return () => {
    client.middlewareStack.remove(name);
  };
}

function stripGuard(holder: ExpressionHolder, fragment: string): void {
  if (!holder.ConditionExpression?.includes(fragment)) return;
  // A fragment already in parentheses is replaced with them: DynamoDB refuses `((...))`.
  holder.ConditionExpression = holder.ConditionExpression.replaceAll(
    `(${fragment})`,
    ALWAYS_TRUE,
  ).replaceAll(fragment, ALWAYS_TRUE);
  const used = EXPRESSION_FIELDS.map((field) => holder[field] ?? '').join(' ');
  holder.ExpressionAttributeNames = { ...holder.ExpressionAttributeNames, '#pk': 'pk' };
  holder.ExpressionAttributeNames = keepUsed(holder.ExpressionAttributeNames, used);
  holder.ExpressionAttributeValues = keepUsed(holder.ExpressionAttributeValues ?? {}, used);
  if (Object.keys(holder.ExpressionAttributeValues).length === 0) {
    delete holder.ExpressionAttributeValues;
  }
}

const keepUsed = <T>(map: Record<string, T>, expressions: string): Record<string, T> =>
  Object.fromEntries(
    Object.entries(map).filter(([token]) =>
      new RegExp(`${token}(?![A-Za-z0-9_])`).test(expressions),
    ),
  );
