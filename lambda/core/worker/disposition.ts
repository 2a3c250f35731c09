/**
 * What becomes of a message: acknowledged, retried later (SQS redelivers it), or dead-lettered
 * with its reason, from how its call under the message ID ended or from the error that ended it.
 */
import { DEFAULT_FAILURE_POLICY, type FailurePolicy } from '../backoff.js';
import { Decision, type Disposition } from '../decision.js';
import { ErrorKind, failureOf, RETRIES_EXHAUSTED } from '../errors.js';
import { Settlement, type RunOnce } from '../idempotency.js';
import { reasonOf, type WorkerOutcome } from './settle-intent.js';

/** What the message becomes, however its call under the message ID ended. */
export function dispositionOfRun(
  deps: { readonly failurePolicy?: FailurePolicy | undefined },
  run: RunOnce<WorkerOutcome>,
): Disposition {
  switch (run.status) {
    case 'replayed': {
      const detail = { recorded: run.outcome.decision, s3Key: run.outcome.s3Key };
      return { decision: Decision.Duplicate, action: 'ack', detail };
    }
    case 'conflict': {
      const reason = {
        code: 'idempotency-conflict',
        message: 'this message ID was already used for a different request; nothing was applied',
      };
      return { decision: Decision.Conflict, action: 'dead-letter', reason };
    }
    case 'in-progress':
      return { decision: Decision.InProgress, action: 'retry', error: run.error };
    case 'new': {
      const policy = deps.failurePolicy ?? DEFAULT_FAILURE_POLICY;
      const failures = run.outcome.failures;
      const disposition = dispositionOf(run.outcome);
      return failures !== undefined && failures >= policy.brokenAfter
        ? { ...disposition, detail: { ...disposition.detail, broken: true } }
        : disposition;
    }
  }
}

/** What a call that ran now means for the message. */
function dispositionOf(outcome: WorkerOutcome): Disposition {
  if (outcome.settlement === Settlement.Failed) {
    return {
      decision: outcome.decision,
      action: 'dead-letter',
      reason: outcome.error ?? { code: 'failed', message: 'the regeneration failed for good' },
      detail: { failures: outcome.failures },
    };
  }
  if (outcome.decision === Decision.RenderFailed) {
    return {
      decision: Decision.RenderFailed,
      action: 'ack',
      detail: { error: outcome.error, failures: outcome.failures },
    };
  }
  const detail = { s3Key: outcome.s3Key, generatedAt: outcome.generatedAt };
  return { decision: outcome.decision, action: 'ack', detail };
}

/**
 * The error's kind decides: terminal -> the DLQ now, with its own code; ignorable -> logged and
 * acknowledged; retryable -> retried until the receive budget is spent, then the DLQ.
 */
export function dispositionOfError(
  error: unknown,
  message: { readonly receiveCount: number },
  maxReceiveCount: number,
): Disposition {
  const failure = failureOf(error);
  switch (failure.kind) {
    case ErrorKind.Terminal:
      return { decision: Decision.Poison, action: 'dead-letter', reason: reasonOf(failure) };
    case ErrorKind.Ignorable:
      return { decision: Decision.Ignored, action: 'ack', detail: { error: failure } };
    default:
      if (message.receiveCount < maxReceiveCount) {
        return { decision: Decision.Retry, action: 'retry', error };
      }
      return {
        decision: Decision.Retry,
        action: 'dead-letter',
        reason: {
          code: RETRIES_EXHAUSTED,
          message: `gave up after ${message.receiveCount} receives: ${failure.message}`,
        },
      };
  }
}
