/**
 * `isr revalidate`: a POST to the revalidation endpoint (issue 14) with an Idempotency-Key.
 * A deployed endpoint is a function URL with AWS_IAM auth, so the request is signed with SigV4
 * (service `lambda`) using the caller's credentials; with ISR_REVALIDATE_SECRET set it also
 * carries the webhook HMAC over the service's one signed string (`lambda/core/webhook-signature.ts`).
 */
import { randomUUID } from 'node:crypto';
import { Hash } from '@smithy/core/serde';
import { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, Provider } from '@smithy/types';
import {
  requestTargetOf,
  signedHeadersOf,
} from '../../lambda/core/revalidate/webhook-signature.js';

export interface RevalidateInput {
  readonly paths: readonly string[];
  readonly tags: readonly string[];
  readonly tenant?: string | undefined;
  readonly mode?: 'stale' | 'expire' | undefined;
  readonly regenerate?: boolean | undefined;
  /** @default a new UUID: a retry of the same call must pass the key it printed */
  readonly idempotencyKey?: string | undefined;
}

export interface SignedRequest {
  readonly method: 'POST' | 'GET';
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

export interface RequestSigning {
  /** The webhook secret (ISR_REVALIDATE_SECRET). */
  readonly hmacSecret?: string | undefined;
  /** SigV4 for an AWS_IAM function URL. */
  readonly sigv4?:
    | {
        readonly region: string;
        readonly credentials: AwsCredentialIdentity | Provider<AwsCredentialIdentity>;
      }
    | undefined;
  readonly now: Date;
}

/** The request body as the endpoint reads it; absent fields are left out. */
export function revalidateBody(input: RevalidateInput): string {
  return JSON.stringify({
    ...(input.paths.length > 0 ? { paths: input.paths } : {}),
    ...(input.tags.length > 0 ? { tags: input.tags } : {}),
    ...(input.tenant === undefined ? {} : { tenant: input.tenant }),
    ...(input.mode === undefined ? {} : { mode: input.mode }),
    ...(input.regenerate === undefined ? {} : { regenerate: input.regenerate }),
  });
}

/** The request, HMAC headers first so the SigV4 signature covers them too. */
export async function buildRevalidateRequest(
  url: string,
  input: RevalidateInput,
  signing: RequestSigning,
): Promise<SignedRequest> {
  const body = revalidateBody(input);
  const target = new URL(url);
  const headers: Record<string, string> = {
    host: target.host,
    'content-type': 'application/json',
    'idempotency-key': input.idempotencyKey ?? randomUUID(),
  };
  if (signing.hmacSecret !== undefined) {
    Object.assign(
      headers,
      signedHeadersOf(signing.hmacSecret, {
        method: 'POST',
        target: requestTargetOf(target),
        idempotencyKey: headers['idempotency-key'],
        rawBody: body,
        nowSeconds: signing.now.getTime() / 1000,
      }),
    );
  }
  return signed({ method: 'POST', url, headers, body }, signing);
}

/**
 * The status GET of a revalidation: `<revalidate URL>/<effect id>`, signed like the POST (the
 * HMAC over GET, that path, no key and no body), so it reads that one effect's status.
 */
export async function buildStatusRequest(
  url: string,
  effectId: string,
  signing: RequestSigning,
): Promise<SignedRequest> {
  const base = new URL(url);
  const target = new URL(`${base.pathname.replace(/\/$/, '')}/${effectId}${base.search}`, base);
  const headers: Record<string, string> = { host: target.host };
  if (signing.hmacSecret !== undefined) {
    Object.assign(
      headers,
      signedHeadersOf(signing.hmacSecret, {
        method: 'GET',
        target: requestTargetOf(target),
        idempotencyKey: undefined,
        rawBody: '',
        nowSeconds: signing.now.getTime() / 1000,
      }),
    );
  }
  return signed({ method: 'GET', url: target.toString(), headers, body: '' }, signing);
}

/** The request as is, or with its SigV4 signature for an AWS_IAM function URL. */
async function signed(request: SignedRequest, signing: RequestSigning): Promise<SignedRequest> {
  if (signing.sigv4 === undefined) return request;
  const { method, url, headers, body } = request;
  const target = new URL(url);
  const signer = new SignatureV4({
    service: 'lambda',
    region: signing.sigv4.region,
    credentials: signing.sigv4.credentials,
    sha256: Hash.bind(null, 'sha256'),
  });
  const signature = await signer.sign(
    {
      method,
      protocol: target.protocol,
      hostname: target.hostname,
      ...(target.port === '' ? {} : { port: Number(target.port) }),
      path: target.pathname,
      query: Object.fromEntries(target.searchParams),
      headers,
      ...(body === '' ? {} : { body }),
    },
    { signingDate: signing.now },
  );
  return { method, url, headers: signature.headers, body };
}

export interface RevalidateResult {
  readonly status: number;
  readonly idempotencyKey: string;
  readonly replayed: boolean;
  /** Seconds a 409 `in-progress`, a 429 or a 503 asks to wait before the same call again. */
  readonly retryAfter?: string | undefined;
  /** The endpoint's JSON answer (the receipt on a 202), or its text when not JSON. */
  readonly receipt: unknown;
}

/** Sends the request; any HTTP answer is a result (the caller decides what a non-2xx means). */
export async function sendRevalidate(
  request: SignedRequest,
  fetcher: typeof fetch = fetch,
): Promise<RevalidateResult> {
  // fetch sets Host itself (and refuses one given)
  const headers = Object.fromEntries(
    Object.entries(request.headers).filter(([name]) => name.toLowerCase() !== 'host'),
  );
  const response = await fetcher(request.url, {
    method: request.method,
    headers,
    ...(request.method === 'GET' ? {} : { body: request.body }),
  });
  const text = await response.text();
  let receipt: unknown = text;
  try {
    receipt = JSON.parse(text);
  } catch {
    // not JSON: kept as text
  }
  return {
    status: response.status,
    idempotencyKey: request.headers['idempotency-key'] ?? '',
    replayed: response.headers.get('idempotent-replayed') === 'true',
    retryAfter: response.headers.get('retry-after') ?? undefined,
    receipt,
  };
}
