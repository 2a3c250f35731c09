import { describe, expect, it } from '@jest/globals';
import { AdapterConfigError, loadAdapterConfig, tagHeaderOf } from '../../next/config.js';

const LOCAL = 'http://127.0.0.1:3000/_isr/revalidate';
const FUNCTION_URL = 'https://abc123.lambda-url.eu-west-1.on.aws/';

const refusal = (env: Record<string, string>) => {
  try {
    loadAdapterConfig(env);
  } catch (error) {
    if (error instanceof AdapterConfigError) return error;
    throw error;
  }
  throw new Error('accepted');
};

describe('loadAdapterConfig', () => {
  it('calls npm start unsigned on loopback when no secret is set', () => {
    for (const url of [LOCAL, 'http://localhost:3000/_isr/revalidate', 'http://[::1]:3000/']) {
      expect(loadAdapterConfig({ ISR_REVALIDATE_URL: url }).auth).toEqual({ kind: 'open' });
    }
  });

  it('signs with HMAC whenever a secret is set', () => {
    for (const url of [LOCAL, FUNCTION_URL]) {
      const config = loadAdapterConfig({ ISR_REVALIDATE_URL: url, ISR_REVALIDATE_SECRET: 's' });
      expect(config.auth).toEqual({ kind: 'hmac', secret: 's' });
    }
  });

  it("signs with SigV4 elsewhere, in the region given, else the function URL's, else AWS_REGION", () => {
    const auth = (env: Record<string, string>) => loadAdapterConfig(env).auth;
    expect(auth({ ISR_REVALIDATE_URL: FUNCTION_URL, AWS_REGION: 'us-east-1' })).toEqual({
      kind: 'sigv4',
      region: 'eu-west-1',
    });
    expect(
      auth({ ISR_REVALIDATE_URL: FUNCTION_URL, ISR_REVALIDATE_REGION: 'ap-southeast-2' }),
    ).toEqual({ kind: 'sigv4', region: 'ap-southeast-2' });
    expect(
      auth({ ISR_REVALIDATE_URL: 'https://revalidate.example.com/', AWS_REGION: 'us-east-1' }),
    ).toEqual({ kind: 'sigv4', region: 'us-east-1' });
  });

  it('keeps the tenant of a multi-tenant service', () => {
    const config = loadAdapterConfig({ ISR_REVALIDATE_URL: LOCAL, ISR_REVALIDATE_TENANT: 'acme' });
    expect(config.tenant).toBe('acme');
    expect(loadAdapterConfig({ ISR_REVALIDATE_URL: LOCAL }).tenant).toBeUndefined();
  });

  it.each([
    [{}, 'ISR_REVALIDATE_URL', /is required/],
    [{ ISR_REVALIDATE_URL: 'not a url' }, 'ISR_REVALIDATE_URL', /is not a URL/],
    [{ ISR_REVALIDATE_URL: 'http://revalidate.example.com/' }, 'ISR_REVALIDATE_URL', /https/],
    [{ ISR_REVALIDATE_URL: 'https://revalidate.example.com/' }, 'ISR_REVALIDATE_REGION', /SigV4/],
    [
      { ISR_REVALIDATE_URL: FUNCTION_URL, ISR_REVALIDATE_REGION: 'mars' },
      'ISR_REVALIDATE_REGION',
      /not a region/,
    ],
    [
      { ISR_REVALIDATE_URL: LOCAL, ISR_REVALIDATE_TENANT: 'a/b' },
      'ISR_REVALIDATE_TENANT',
      /A-Z a-z/,
    ],
  ])('refuses %j, naming %s', (env, variable, message) => {
    const error = refusal(env);
    expect(error.variable).toBe(variable);
    expect(error.message).toMatch(new RegExp(`^facetheory-isr/next: ${variable} `));
    expect(error.message).toMatch(message);
  });
});

describe('tagHeaderOf', () => {
  it("is the service's default, cache-tag, unless set; a bad name is refused by name", () => {
    expect(tagHeaderOf({})).toBe('cache-tag');
    expect(tagHeaderOf({ ISR_UPSTREAM_TAG_HEADER: 'Surrogate-Key' })).toBe('surrogate-key');
    expect(() => tagHeaderOf({ ISR_UPSTREAM_TAG_HEADER: 'a b' })).toThrow(
      /ISR_UPSTREAM_TAG_HEADER is not a header name/,
    );
  });
});
