import { SendMessageCommand, type SQSClient } from '@aws-sdk/client-sqs';
import type { DeadLetter, DeadLetterQueue } from '../../core/page/ports.js';

/** Message attributes a dead letter carries, for operators and redrive tooling. */
export const DeadLetterAttribute = {
  Code: 'isr-error-code',
  Message: 'isr-error-message',
  SourceMessageId: 'isr-source-message-id',
  ReceiveCount: 'isr-receive-count',
} as const;

export interface SqsDeadLetterQueueOptions {
  readonly client: SQSClient;
  readonly queueUrl: string;
  /**
   * Whether the DLQ is FIFO (the regeneration queue's); a standard one (the purge queue's) takes
   * no group or dedupe ID, so a letter sent twice arrives twice. @default true
   */
  readonly fifo?: boolean | undefined;
}

/**
 * Sends a message the worker gives up on to the DLQ itself, with its reason, then the worker
 * acknowledges the original. (SQS redrive would move it without a reason; the redrive policy
 * stays as the backstop for crashes.) The dedupe ID is the original message ID, so a resend
 * after a failed acknowledgement does not double it.
 */
export class SqsDeadLetterQueue implements DeadLetterQueue {
  readonly #client: SQSClient;
  readonly #queueUrl: string;
  readonly #fifo: boolean;

  constructor(options: SqsDeadLetterQueueOptions) {
    this.#client = options.client;
    this.#queueUrl = options.queueUrl;
    this.#fifo = options.fifo ?? true;
  }

  async send(letter: DeadLetter): Promise<void> {
    const text = (value: string) => ({ DataType: 'String', StringValue: value });
    await this.#client.send(
      new SendMessageCommand({
        QueueUrl: this.#queueUrl,
        MessageBody: letter.body === '' ? '(empty)' : letter.body,
        ...(this.#fifo
          ? {
              MessageGroupId: letter.groupId ?? 'dead-letters',
              MessageDeduplicationId: letter.messageId,
            }
          : {}),
        MessageAttributes: {
          [DeadLetterAttribute.Code]: text(letter.reason.code),
          [DeadLetterAttribute.Message]: text(letter.reason.message.slice(0, 1024)),
          [DeadLetterAttribute.SourceMessageId]: text(letter.messageId),
          [DeadLetterAttribute.ReceiveCount]: {
            DataType: 'Number',
            StringValue: String(letter.receiveCount),
          },
        },
      }),
    );
  }
}
