/** Limits of AWS and of the service that bound settings. */

/**
 * A function URL answers with at most 6 MB and the origin base64-encodes binary bodies (4/3),
 * so 4 MiB is the largest body that always fits a response.
 */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;
/** Time a render needs after it returns: body PutObject, the publish transaction, tagging. */
export const PUBLISH_MARGIN_MS = 5_000;
/** Lambda's longest function timeout. */
export const MAX_FUNCTION_TIMEOUT_MS = 900_000;
/** How long SQS remembers a FIFO deduplication ID; a dedupe window must stay below it. */
export const SQS_DEDUP_SECONDS = 300;
/** SQS delays a message (`DelaySeconds`) at most 15 minutes. */
export const MAX_SQS_DELAY_SECONDS = 900;
/** Most versions of a page META lists (each sk is ~50 bytes, read on every request). */
export const MAX_KEPT_VERSIONS = 20;
/** Longest freshness a page may ask for (the renderer's cap too). */
export const MAX_REVALIDATE_SECONDS = 365 * 24 * 3600;

/** A Secrets Manager secret's ARN (the upstream secret, the revalidation webhook's key). */
export const SECRET_ARN = /^arn:aws[a-z-]*:secretsmanager:[a-z0-9-]+:\d{12}:secret:.+$/;

/** CloudFront distribution ids are upper-case letters and digits (`E2QWRUHAPOMQZL`). */
export const DISTRIBUTION_ID = /^[A-Z0-9]{1,128}$/;

/** Loopback hosts, where plain http never leaves the machine. */
export function isLoopbackHost(hostname: string): boolean {
  return hostname === 'localhost' || hostname === '[::1]' || /^127(\.\d{1,3}){3}$/.test(hostname);
}
