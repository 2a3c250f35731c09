/**
 * `isr dlq list | redrive | delete`. Redrive sends a letter back to the regeneration queue
 * itself (same body and MessageGroupId, a new deduplication id, since SQS would drop a resend
 * under the old one for 5 minutes) and then deletes it from the DLQ: this works for letters the
 * worker dead-lettered itself, which SQS's own redrive (for letters it moved) does not know.
 * Send before delete: a crash between leaves the letter on both queues, and the worker is
 * idempotent; the other order could lose it.
 */
import { randomUUID } from 'node:crypto';
import {
  ChangeMessageVisibilityCommand,
  DeleteMessageCommand,
  ReceiveMessageCommand,
  SendMessageCommand,
  type Message,
} from '@aws-sdk/client-sqs';
import { DeadLetterAttribute } from '../../lambda/adapters/dead-letter-queue/sqs.js';
import { OperationError } from '../errors.js';
import type { Target } from '../target.js';

export interface DeadLetterView {
  readonly messageId: string;
  readonly groupId: string | undefined;
  /** Set by the worker when it dead-lettered the intent; absent for letters SQS moved. */
  readonly code: string | undefined;
  readonly message: string | undefined;
  readonly sourceMessageId: string | undefined;
  readonly receiveCount: string | undefined;
  readonly sentAt: string | undefined;
  readonly body: string;
}

export interface DlqDeps {
  readonly target: Pick<Target, 'clients' | 'queueUrl' | 'dlqUrl'>;
  /** How long a listed letter stays hidden while the rest are read. @default 30 */
  readonly visibilitySeconds?: number | undefined;
}

/**
 * The letters in the DLQ, left there (visible again at once). A FIFO queue hands out no more of
 * a message group while some of it is in flight, so at most 10 letters per group are shown.
 */
export async function listDeadLetters(deps: DlqDeps): Promise<DeadLetterView[]> {
  const letters = await receiveAll(deps);
  await makeVisible(deps, letters);
  return letters.map(viewOf);
}

export interface RedriveResult {
  readonly redriven: readonly { readonly messageId: string; readonly newMessageId: string }[];
}

/** Redrives the letter `messageId`, or every letter when it is undefined. */
export async function redriveDeadLetters(
  deps: DlqDeps,
  messageId: string | undefined,
): Promise<RedriveResult> {
  const letters = await receiveAll(deps);
  const chosen = letters.filter((l) => messageId === undefined || l.MessageId === messageId);
  await makeVisible(
    deps,
    letters.filter((letter) => !chosen.includes(letter)),
  );
  if (messageId !== undefined && chosen.length === 0) throw notFound(messageId);
  const { sqs } = deps.target.clients;
  const redriven: RedriveResult['redriven'][number][] = [];
  for (const letter of chosen) {
    const sent = await sqs.send(
      new SendMessageCommand({
        QueueUrl: deps.target.queueUrl,
        MessageBody: letter.Body ?? '',
        MessageGroupId: letter.Attributes?.MessageGroupId ?? 'redriven',
        MessageDeduplicationId: randomUUID(),
      }),
    );
    await sqs.send(
      new DeleteMessageCommand({
        QueueUrl: deps.target.dlqUrl,
        ReceiptHandle: letter.ReceiptHandle,
      }),
    );
    redriven.push({ messageId: letter.MessageId ?? '', newMessageId: sent.MessageId ?? '' });
  }
  return { redriven };
}

/** Deletes one letter for good (a poison message nobody will fix). */
export async function deleteDeadLetter(
  deps: DlqDeps,
  messageId: string,
): Promise<{ readonly deleted: string }> {
  const letters = await receiveAll(deps);
  const letter = letters.find((l) => l.MessageId === messageId);
  await makeVisible(
    deps,
    letters.filter((l) => l !== letter),
  );
  if (letter === undefined) throw notFound(messageId);
  await deps.target.clients.sqs.send(
    new DeleteMessageCommand({ QueueUrl: deps.target.dlqUrl, ReceiptHandle: letter.ReceiptHandle }),
  );
  return { deleted: messageId };
}

const notFound = (messageId: string) =>
  new OperationError(`no letter ${messageId} in the DLQ (isr dlq list shows them)`);

/** Receives until the queue has nothing more visible; each letter is hidden while held. */
async function receiveAll(deps: DlqDeps): Promise<Message[]> {
  const letters: Message[] = [];
  for (;;) {
    const { Messages } = await deps.target.clients.sqs.send(
      new ReceiveMessageCommand({
        QueueUrl: deps.target.dlqUrl,
        MaxNumberOfMessages: 10,
        WaitTimeSeconds: 0,
        VisibilityTimeout: deps.visibilitySeconds ?? 30,
        MessageAttributeNames: ['All'],
        MessageSystemAttributeNames: ['All'],
        // local-aws-sqs reports system attributes only when asked by this (legacy) name.
        AttributeNames: ['All'],
      }),
    );
    const fresh = (Messages ?? []).filter(
      (m) => !letters.some((seen) => seen.MessageId === m.MessageId),
    );
    if (fresh.length === 0) return letters;
    letters.push(...fresh);
  }
}

/** Lets the letters not acted on be received again at once. */
async function makeVisible(deps: DlqDeps, letters: readonly Message[]): Promise<void> {
  await Promise.all(
    letters.map((letter) =>
      deps.target.clients.sqs.send(
        new ChangeMessageVisibilityCommand({
          QueueUrl: deps.target.dlqUrl,
          ReceiptHandle: letter.ReceiptHandle,
          VisibilityTimeout: 0,
        }),
      ),
    ),
  );
}

function viewOf(letter: Message): DeadLetterView {
  const attribute = (name: string) => letter.MessageAttributes?.[name]?.StringValue;
  const sent = letter.Attributes?.SentTimestamp;
  return {
    messageId: letter.MessageId ?? '',
    groupId: letter.Attributes?.MessageGroupId,
    code: attribute(DeadLetterAttribute.Code),
    message: attribute(DeadLetterAttribute.Message),
    sourceMessageId: attribute(DeadLetterAttribute.SourceMessageId),
    receiveCount: attribute(DeadLetterAttribute.ReceiveCount),
    sentAt: sent === undefined ? undefined : new Date(Number(sent)).toISOString(),
    body: letter.Body ?? '',
  };
}
