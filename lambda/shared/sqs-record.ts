import type { SQSRecord } from 'aws-lambda';

/**
 * What every queue consumer (worker, purger) takes from an SQS record: its id, its body, and how
 * often it was received (1 when SQS did not say), which decides a poison message's first receive.
 */
export const queuedMessageOf = (record: SQSRecord) => ({
  messageId: record.messageId,
  body: record.body,
  receiveCount: Number(record.attributes.ApproximateReceiveCount) || 1,
});
