import {
  ConditionalCheckFailedException,
  TransactionConflictException,
} from '@aws-sdk/client-dynamodb';
import { TransactionConflictError } from '../../../core/errors.js';

/**
 * The one way a conditional write reports that its condition did not hold: its output when it
 * was written, undefined on ConditionalCheckFailed (a guard said no: an answer, not a failure).
 * Anything else is thrown as is. Writes that must say who holds the row instead (a lease, a
 * claim) translate the failure into their domain error themselves.
 */
export async function conditionalWrite<T>(write: Promise<T>): Promise<T | undefined> {
  try {
    return await write;
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) return undefined;
    throw error;
  }
}

/**
 * A single-item write that met another writer's ongoing transaction on its item: DynamoDB refuses
 * it with TransactionConflictException
 * (https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling),
 * which the SDK does not retry. Said as TransactionConflictError (`what` names the item), which
 * `retryConflicts` tries again; anything else is thrown as is.
 */
export async function conflictAware<T>(write: Promise<T>, what: string): Promise<T> {
  try {
    return await write;
  } catch (error) {
    if (!(error instanceof TransactionConflictException)) throw error;
    throw new TransactionConflictError(`${what} is in another writer's transaction`, {
      cause: error,
    });
  }
}
