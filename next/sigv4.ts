/**
 * SigV4 for the revalidate function's AWS_IAM URL (service `lambda`), with the default AWS
 * credential chain (environment, SSO/profile, web identity, ECS container, EC2 instance role):
 * AWS's own signer and provider, because canonicalisation and credential refresh are easy to get
 * subtly wrong by hand. Both are imported on first use only, so an HMAC or loopback setup never
 * loads them, and hidden from bundlers: Next bundles the adapter into edge middleware, where the
 * credential chain's `node:` imports fail the build.
 */
import { createHash, createHmac, type Hash, type Hmac } from 'node:crypto';
import type { SignatureV4 } from '@smithy/signature-v4';
import type { AwsCredentialIdentity, AwsCredentialIdentityProvider } from '@smithy/types';

type SourceData = string | ArrayBuffer | ArrayBufferView;

const bytesOf = (data: SourceData): Buffer | string =>
  typeof data === 'string'
    ? data
    : ArrayBuffer.isView(data)
      ? Buffer.from(data.buffer, data.byteOffset, data.byteLength)
      : Buffer.from(data);

/** SHA-256 and HMAC-SHA256 from node:crypto, in the shape the signer asks for. */
class NodeSha256 {
  readonly #secret: SourceData | undefined;
  #hash: Hash | Hmac;

  constructor(secret?: SourceData) {
    this.#secret = secret;
    this.#hash = this.#fresh();
  }

  #fresh(): Hash | Hmac {
    return this.#secret === undefined
      ? createHash('sha256')
      : createHmac('sha256', bytesOf(this.#secret));
  }

  update(data: SourceData): void {
    this.#hash.update(bytesOf(data));
  }

  digest(): Promise<Uint8Array> {
    return Promise.resolve(new Uint8Array(this.#hash.digest()));
  }

  reset(): void {
    this.#hash = this.#fresh();
  }
}

export interface HttpRequestToSign {
  readonly method: string;
  readonly url: URL;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** Signs a request: the headers to send (Authorization, X-Amz-Date, and the token if any). */
export type RequestSigner = (
  request: HttpRequestToSign,
  now: Date,
) => Promise<Record<string, string>>;

/** Where credentials come from: the default chain unless a test gives its own. */
export type CredentialSource = AwsCredentialIdentity | AwsCredentialIdentityProvider;

async function defaultCredentials(): Promise<AwsCredentialIdentityProvider> {
  const { defaultProvider } = await import(
    /* webpackIgnore: true */ /* turbopackIgnore: true */ '@aws-sdk/credential-provider-node'
  );
  return defaultProvider();
}

/** A signer for `region`; the credential chain is resolved once and refreshed by the provider. */
export function sigV4Signer(region: string, credentials?: CredentialSource): RequestSigner {
  let signer: Promise<SignatureV4> | undefined;
  const load = async () => {
    const signatureV4 = await import(
      /* webpackIgnore: true */ /* turbopackIgnore: true */ '@smithy/signature-v4'
    );
    return new signatureV4.SignatureV4({
      service: 'lambda',
      region,
      credentials: credentials ?? (await defaultCredentials()),
      sha256: NodeSha256,
    });
  };
  return async (request, now) => {
    // A failed load (no credentials yet) is tried again by the next call, not cached.
    signer ??= load().catch((error: unknown) => {
      signer = undefined;
      throw error;
    });
    const signed = await (
      await signer
    ).sign(
      {
        method: request.method,
        protocol: request.url.protocol,
        hostname: request.url.hostname,
        ...(request.url.port === '' ? {} : { port: Number(request.url.port) }),
        path: request.url.pathname,
        query: Object.fromEntries(request.url.searchParams),
        headers: { ...request.headers, host: request.url.host },
        body: request.body,
      },
      { signingDate: now },
    );
    return signed.headers;
  };
}
