/**
 * A fan-out step as the worker handles it: the same queue as regeneration intents, told apart
 * by its `kind`. A malformed step is dead-lettered with its reason like any poison message; a
 * failure is retried (every write of a step repeats harmlessly, `markBatch`).
 */
import { Decision } from '../decision.js';
import { dispositionOfError } from './disposition.js';
import type { MessageReport, WorkerMessage } from './deps.js';
import { markBatch, type FanOutDeps, type FanOutStep } from '../revalidate/fan-out.js';
import { parseFanOut, type FanOutMessage } from '../revalidate/fan-out-message.js';

const DECISIONS: Record<FanOutStep['outcome'], Decision> = {
  marked: Decision.New,
  done: Decision.New,
  superseded: Decision.Superseded,
  duplicate: Decision.Duplicate,
};

/** One fan-out step off the queue, and what becomes of its message. */
export async function processFanOut(
  deps: FanOutDeps,
  message: WorkerMessage,
  maxReceiveCount: number,
): Promise<MessageReport> {
  const report = { idempotencyKey: message.messageId, cacheKeyHash: undefined };
  let step: FanOutMessage;
  try {
    step = parseFanOut(message.body);
  } catch (error) {
    return { ...report, ...dispositionOfError(error, message, maxReceiveCount) };
  }
  const detail = { fanOut: { effectId: step.effectId, mode: step.mode, tag: step.tag } };
  try {
    const done = await markBatch(deps, step);
    return {
      ...report,
      decision: DECISIONS[done.outcome],
      action: 'ack',
      detail: { fanOut: { ...detail.fanOut, outcome: done.outcome, marked: done.marked } },
    };
  } catch (error) {
    const disposition = dispositionOfError(error, message, maxReceiveCount);
    return { ...report, ...disposition, detail: { ...disposition.detail, ...detail } };
  }
}
