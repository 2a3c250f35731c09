import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { ExtensionSecretSource } from '../../../../lambda/adapters/secret-source/extension.js';
import { startHttpServer } from '../../../helpers/http-server.js';

const ARN = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:upstream-AbCdEf';
let extension: Awaited<ReturnType<typeof startHttpServer>>;
let status = 200;

/** A stand-in for the extension's localhost endpoint: it checks the token like the real one. */
beforeAll(async () => {
  extension = await startHttpServer((req, res) => {
    if (req.headers['x-aws-parameters-secrets-token'] !== 'session-token') {
      res.writeHead(401).end('missing token');
      return;
    }
    res.writeHead(status, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ ARN, SecretString: 'the-shared-secret' }));
  });
});
afterAll(() => extension.close());

const source = (options: { token?: string; now?: () => number } = {}) =>
  new ExtensionSecretSource({
    secretId: ARN,
    sessionToken: () => options.token ?? 'session-token',
    port: Number(new URL(extension.url).port),
    now: options.now,
  });

describe('ExtensionSecretSource', () => {
  it('asks the extension for the secret by ARN, with the session token', async () => {
    extension.seen.length = 0;
    expect(await source().value()).toBe('the-shared-secret');
    const url = new URL(extension.seen[0]?.url ?? '', 'http://x');
    expect(url.pathname).toBe('/secretsmanager/get');
    expect(url.searchParams.get('secretId')).toBe(ARN);
  });

  it('reuses the value for a minute, then asks again (rotation reaches it)', async () => {
    let now = 0;
    const secret = source({ now: () => now });
    extension.seen.length = 0;
    await secret.value();
    now = 59_000;
    await secret.value();
    expect(extension.seen).toHaveLength(1);
    now = 61_000;
    await secret.value();
    expect(extension.seen).toHaveLength(2);
  });

  it('fails, rather than sending an empty secret, when the extension refuses', async () => {
    await expect(source({ token: 'wrong' }).value()).rejects.toThrow(/answered 401/);
    status = 500;
    try {
      await expect(source().value()).rejects.toThrow(/answered 500/);
    } finally {
      status = 200;
    }
  });
});
