import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';

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
