/**
 * SQS as the model's queue: the real `SqsRegenerationQueue` adapter over a client whose sends
 * never leave the process. Each send waits at the sender's gate and counts as a write (a crash
 * can strike right after it); FIFO deduplication is kept (a deduplication id sent in the last
 * 5 minutes of model time collapses). Fan-out steps wait in `fanOuts` until the runner delivers
 * them (`fan-out.ts`); regeneration intents join the run's `queued`, delivered once faults stop.
 */
import {
  SQSClient,
  type SendMessageBatchCommandInput,
  type SendMessageCommandInput,
} from '@aws-sdk/client-sqs';
import { SqsRegenerationQueue } from '../../lambda/adapters/regeneration-queue/sqs.js';
import { parseIntent, type RegenerationIntent } from '../../lambda/core/page/intent.js';
import { isFanOutBody } from '../../lambda/core/revalidate/fan-out-message.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/backends/local-aws.js';
import type { Interleaver } from './interleaver.js';
import type { ActorFaults, World } from './world.js';

/** How long SQS FIFO remembers a deduplication id (seconds). */
const DEDUPLICATION_SECONDS = 300;

/** A step as it waits on the queue: its body and who sent it. */
export interface QueuedStep {
  readonly body: string;
  readonly sender: string;
}

export class FakeSqs {
  /** Every fan-out step sent, in order: the n-th is delivered as the plan's n-th delivery says. */
  readonly fanOuts: QueuedStep[] = [];
  /** Deduplication id -> model time it was last accepted. */
  readonly #seen = new Map<string, number>();
  readonly #clients: SQSClient[] = [];
  #ids = 0;

  constructor(
    readonly world: World,
    readonly interleaver: Interleaver,
    /** The run's regeneration intents, delivered once faults stop. */
    readonly intents: RegenerationIntent[],
  ) {}

  /** The production queue adapter for `actor`, over the fake client. */
  queueFor(actor: string, faults: ActorFaults = { skew: 0 }): SqsRegenerationQueue {
    return new SqsRegenerationQueue({
      client: this.clientFor(actor, faults),
      queueUrl: 'https://sqs.model/isr.fifo',
    });
  }

  /** An SQS client for `actor` whose sends land in this queue. */
  clientFor(actor: string, faults: ActorFaults): SQSClient {
    const client = new SQSClient({
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
      maxAttempts: 1,
    });
    client.middlewareStack.add(
      (_next, context) => async (args) => {
        const command = `sqs:${context.commandName ?? '?'}`;
        await this.interleaver.gate(actor, command);
        const output = this.#accept(actor, command, args.input);
        if (this.world.wrote(actor, faults, command)) await this.interleaver.die(actor);
        return { output: { ...output, $metadata: {} }, response: {} };
      },
      { step: 'initialize', name: 'model-sqs' },
    );
    this.#clients.push(client);
    return client;
  }

  /** Tears down every client made, with the run. */
  destroy(): void {
    for (const client of this.#clients.splice(0)) client.destroy();
  }

  #accept(actor: string, command: string, input: object): object {
    if (command === 'sqs:SendMessageCommand') {
      const send = input as SendMessageCommandInput;
      this.#add(actor, send.MessageBody ?? '', send.MessageDeduplicationId ?? '');
      return { MessageId: `model-msg-${++this.#ids}` };
    }
    if (command === 'sqs:SendMessageBatchCommand') {
      const entries = (input as SendMessageBatchCommandInput).Entries ?? [];
      for (const entry of entries)
        this.#add(actor, entry.MessageBody ?? '', entry.MessageDeduplicationId ?? '');
      return {
        Successful: entries.map((entry) => ({
          Id: entry.Id,
          MessageId: `model-msg-${++this.#ids}`,
        })),
        Failed: [],
      };
    }
    throw new Error(`the model's SQS does not answer ${command}`);
  }

  #add(actor: string, body: string, deduplicationId: string): void {
    const seenAt = this.#seen.get(deduplicationId);
    const collapsed = seenAt !== undefined && this.world.trueTime - seenAt < DEDUPLICATION_SECONDS;
    this.world.log.push({ kind: 'sent', actor, body: readableBody(body), collapsed });
    if (collapsed) return;
    this.#seen.set(deduplicationId, this.world.trueTime);
    if (isFanOutBody(body)) this.fanOuts.push({ body, sender: actor });
    else this.intents.push(parseIntent(body));
  }
}

/**
 * A message body as the log keeps it: a fan-out step's cursor (the tag index's last key,
 * base64) decoded, so the run's random names in it are normalised like any other.
 */
export function readableBody(body: string): string {
  if (!isFanOutBody(body)) return body;
  const step = JSON.parse(body) as { cursor?: string };
  const cursor = Buffer.from(step.cursor ?? '', 'base64url').toString('utf8');
  return JSON.stringify({ ...step, cursor });
}
