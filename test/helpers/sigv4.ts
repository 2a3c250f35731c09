import { createHash, createHmac } from 'node:crypto';

/** A request as sent: what a SigV4 verifier sees. */
export interface SentRequest {
  readonly method: string;
  readonly url: string;
  readonly headers: Readonly<Record<string, string>>;
  readonly body: string;
}

const sha256 = (text: string) => createHash('sha256').update(text).digest('hex');
const hmac = (key: string | Buffer, text: string) =>
  createHmac('sha256', key).update(text).digest();
const encode = (text: string) =>
  encodeURIComponent(text).replace(
    /[!'()*]/g,
    (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`,
  );

/**
 * SigV4 as the AWS docs define it, recomputed here with node:crypto and no SDK from the request
 * as sent: true when its Authorization header holds for `secret`.
 */
export function sigV4Holds(request: SentRequest, secret: string): boolean {
  const lower = Object.fromEntries(
    Object.entries(request.headers).map(([k, v]) => [k.toLowerCase(), v.trim()]),
  );
  const match =
    /Credential=[^/]+\/(\d{8})\/([^/]+)\/([^/]+)\/aws4_request, SignedHeaders=([^,]+), Signature=([0-9a-f]+)/.exec(
      lower.authorization ?? '',
    );
  if (match === null) return false;
  const [, date, region, service, signedHeaders, signature] = match as unknown as string[];
  const url = new URL(request.url);
  const query = [...url.searchParams]
    .map(([name, value]) => `${encode(name)}=${encode(value)}`)
    .sort()
    .join('&');
  const names = signedHeaders.split(';');
  const canonical = [
    request.method,
    url.pathname,
    query,
    ...names.map((name) => `${name}:${name === 'host' ? url.host : lower[name]}`),
    '',
    signedHeaders,
    sha256(request.body),
  ].join('\n');
  const toSign = [
    'AWS4-HMAC-SHA256',
    lower['x-amz-date'] ?? '',
    `${date}/${region}/${service}/aws4_request`,
    sha256(canonical),
  ].join('\n');
  const key = hmac(hmac(hmac(hmac(`AWS4${secret}`, date), region), service), 'aws4_request');
  return createHmac('sha256', key).update(toSign).digest('hex') === signature;
}
