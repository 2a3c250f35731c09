/**
 * A queue message's body checked against its schema, for every queue the service reads (the
 * regeneration queue's intents and fan-out steps, the purge queue's purges): a body that is not
 * JSON, or not the shape, is poison with its reason, never retried.
 */
import * as v from 'valibot';
import { InvalidMessageError } from './errors.js';

/** @throws InvalidMessageError saying which field is wrong (terminal: to the DLQ with it) */
export function parseMessageBody<Schema extends v.GenericSchema>(
  schema: Schema,
  body: string,
  what: string,
): v.InferOutput<Schema> {
  let json: unknown;
  try {
    json = JSON.parse(body);
  } catch (error) {
    throw new InvalidMessageError('message body is not JSON', { cause: error });
  }
  const parsed = v.safeParse(schema, json);
  if (!parsed.success) {
    const issues = parsed.issues
      .map((issue) => `${v.getDotPath(issue) ?? '(body)'}: ${issue.message}`)
      .join('; ');
    throw new InvalidMessageError(`message body is not ${what}: ${issues}`);
  }
  return parsed.output;
}
