/**
 * HMAC signatures for webhook senders that cannot sign SigV4 (CMS webhooks):
 * `x-isr-signature: sha256=<hex>` is HMAC-SHA256(secret, `${timestamp}.${rawBody}`), with
 * `x-isr-timestamp` in epoch seconds. The timestamp is signed and bounded, so a captured request
 * cannot be replayed outside the skew window; the compare takes the same time for any mismatch.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-isr-signature';
export const TIMESTAMP_HEADER = 'x-isr-timestamp';

/** Why a request's signature is refused (the 401's `reason`). */
export const SignatureRefusal = {
  MissingSignature: 'missing-signature',
  MissingTimestamp: 'missing-timestamp',
  MalformedSignature: 'malformed-signature',
  MalformedTimestamp: 'malformed-timestamp',
  TimestampOutOfRange: 'timestamp-out-of-range',
  Mismatch: 'signature-mismatch',
} as const;
export type SignatureRefusal = (typeof SignatureRefusal)[keyof typeof SignatureRefusal];

const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;
const TIMESTAMP = /^\d{1,12}$/;

/** The header value a sender computes: what the README's recipe and the tests use. */
export function signatureOf(secret: string, timestamp: string, rawBody: string): string {
  return `sha256=${createHmac('sha256', secret).update(`${timestamp}.${rawBody}`, 'utf8').digest('hex')}`;
}

export interface SignedRequest {
  readonly signature: string | undefined;
  readonly timestamp: string | undefined;
  readonly rawBody: string;
}

/**
 * Checks a request's signature. @returns undefined when it holds, else the refusal.
 * `nowSeconds` is the receiver's clock; `skewSeconds` bounds the difference either way.
 */
export function signatureRefusal(
  request: SignedRequest,
  secret: string,
  nowSeconds: number,
  skewSeconds: number,
): SignatureRefusal | undefined {
  if (request.signature === undefined || request.signature === '') {
    return SignatureRefusal.MissingSignature;
  }
  if (request.timestamp === undefined || request.timestamp === '') {
    return SignatureRefusal.MissingTimestamp;
  }
  const hex = SIGNATURE.exec(request.signature.trim())?.[1];
  if (hex === undefined) return SignatureRefusal.MalformedSignature;
  const timestamp = request.timestamp.trim();
  if (!TIMESTAMP.test(timestamp)) return SignatureRefusal.MalformedTimestamp;
  if (Math.abs(nowSeconds - Number(timestamp)) > skewSeconds) {
    return SignatureRefusal.TimestampOutOfRange;
  }
  const expected = createHmac('sha256', secret)
    .update(`${timestamp}.${request.rawBody}`, 'utf8')
    .digest();
  const received = Buffer.from(hex, 'hex');
  // Both are 32 bytes (the pattern fixes the length), as timingSafeEqual requires.
  return received.length === expected.length && timingSafeEqual(received, expected)
    ? undefined
    : SignatureRefusal.Mismatch;
}
