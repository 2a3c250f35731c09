/**
 * The one signed string of every HMAC-signed request to the service (issue 19 item 6): the
 * revalidate endpoint verifies it, the CLI, the Next.js adapter and the documented sh/openssl
 * recipe compute it, and a status request of a revalidation reuses it. Pure: no AWS SDK.
 *
 * `x-isr-signature: sha256=<hex of HMAC-SHA256(secret, signed string)>`, where the signed string
 * is these six lines joined by "\n" (no trailing newline):
 *
 *     isr-v1
 *     <x-isr-timestamp: epoch seconds>
 *     <METHOD>
 *     <request target: the path as sent, with "?query" when there is one>
 *     <Idempotency-Key, or nothing>
 *     <raw body, byte for byte>
 *
 * Lines, because a sender in sh writes them with one printf; the raw body last, because it is
 * the only field that may hold a newline, so the five before it cannot be shifted into it (and a
 * field that holds a newline is refused). `isr-v1` names the format: a signature of the old
 * `<timestamp>.<body>` string never verifies, and a next format can be told apart.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';

export const SIGNATURE_HEADER = 'x-isr-signature';
export const TIMESTAMP_HEADER = 'x-isr-timestamp';
/** The first line of the signed string: the format's version. */
export const SIGNED_STRING_VERSION = 'isr-v1';

/** Why a request's signature is refused (the 401's `reason`). */
export const SignatureRefusal = {
  MissingSignature: 'missing-signature',
  MissingTimestamp: 'missing-timestamp',
  MalformedSignature: 'malformed-signature',
  MalformedTimestamp: 'malformed-timestamp',
  MalformedRequest: 'malformed-signed-field',
  TimestampOutOfRange: 'timestamp-out-of-range',
  Mismatch: 'signature-mismatch',
} as const;
export type SignatureRefusal = (typeof SignatureRefusal)[keyof typeof SignatureRefusal];

/** What a signature covers: everything that decides what the request does. */
export interface SignedParts {
  /** Epoch seconds, as sent in `x-isr-timestamp`. */
  readonly timestamp: string;
  readonly method: string;
  /** The request target as sent: `/_isr/revalidate`, or `/path?query`. */
  readonly target: string;
  /** The Idempotency-Key header; undefined or '' for a request without one (a status GET). */
  readonly idempotencyKey: string | undefined;
  readonly rawBody: string;
}

const SIGNATURE = /^sha256=([0-9a-f]{64})$/i;
const TIMESTAMP = /^\d{1,12}$/;
const LINE_BREAK = /[\r\n]/;

/** A field before the body holding a line break could be confused with the next one. */
const ambiguous = (parts: SignedParts): boolean =>
  [parts.method, parts.target, parts.idempotencyKey ?? ''].some((field) => LINE_BREAK.test(field));

/** The signed string of a request. @throws RangeError when a field before the body has a line break */
export function signedStringOf(parts: SignedParts): string {
  if (ambiguous(parts)) throw new RangeError('a signed field other than the body has a line break');
  return [
    SIGNED_STRING_VERSION,
    parts.timestamp,
    parts.method.toUpperCase(),
    parts.target,
    parts.idempotencyKey ?? '',
    parts.rawBody,
  ].join('\n');
}

const hmacOf = (secret: string, parts: SignedParts): Buffer =>
  createHmac('sha256', secret).update(signedStringOf(parts), 'utf8').digest();

/** The `x-isr-signature` value a sender computes. */
export function signatureOf(secret: string, parts: SignedParts): string {
  return `sha256=${hmacOf(secret, parts).toString('hex')}`;
}

/** The request target a URL is sent with (what the receiver sees as path and query). */
export function requestTargetOf(url: string | URL): string {
  const parsed = typeof url === 'string' ? new URL(url) : url;
  return `${parsed.pathname}${parsed.search}`;
}

/** The two headers of a signed request, for the clients (CLI, Next.js adapter). */
export function signedHeadersOf(
  secret: string,
  request: Omit<SignedParts, 'timestamp'> & { readonly nowSeconds: number },
): { [TIMESTAMP_HEADER]: string; [SIGNATURE_HEADER]: string } {
  const timestamp = String(Math.floor(request.nowSeconds));
  return {
    [TIMESTAMP_HEADER]: timestamp,
    [SIGNATURE_HEADER]: signatureOf(secret, { ...request, timestamp }),
  };
}

/** A received request: its signature headers and what they must cover. */
export interface SignedRequest extends Omit<SignedParts, 'timestamp'> {
  readonly signature: string | undefined;
  readonly timestamp: string | undefined;
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
  const parts = { ...request, timestamp };
  if (ambiguous(parts)) return SignatureRefusal.MalformedRequest;
  const expected = hmacOf(secret, parts);
  const received = Buffer.from(hex, 'hex');
  // Both are 32 bytes (the pattern fixes the length), as timingSafeEqual requires.
  return received.length === expected.length && timingSafeEqual(received, expected)
    ? undefined
    : SignatureRefusal.Mismatch;
}
