import { describe, expect, it } from '@jest/globals';
import { CloudFrontInvalidator } from '../../../lambda/adapters/cdn-invalidator/cloudfront.js';
import { StaticSecretSource } from '../../../lambda/adapters/secret-source/static.js';
import { createCdnInvalidator, createRevalidateDeps } from '../../../lambda/revalidate/build.js';
import { createAwsClients } from '../../../lambda/shared/aws-clients.js';
import { loadRevalidateConfig } from '../../../lambda/shared/config.js';
import { recordingCdn } from '../../helpers/revalidate.js';

const env = {
  FACETHEORY_CACHE_TABLE_NAME: 'cache',
  ISR_BODY_BUCKET: 'bodies',
  ISR_QUEUE_URL: 'http://localhost/q/queue.fifo',
};
const secretArn = 'arn:aws:secretsmanager:us-east-1:123456789012:secret:webhook-AbCdEf';
// Clients are only constructed here, never called.
const clients = createAwsClients({
  region: 'us-east-1',
  credentials: { accessKeyId: 'x', secretAccessKey: 'x' },
});

describe('createCdnInvalidator', () => {
  it('purges through CloudFront when a distribution is configured, else answers not-configured', async () => {
    const unset = loadRevalidateConfig(env);
    expect(await createCdnInvalidator(unset, { clients }).invalidateTags(['_/x'])).toEqual({
      status: 'not-configured',
    });
    const configured = loadRevalidateConfig({ ...env, ISR_CDN_DISTRIBUTION_ID: 'E2ABC' });
    expect(createCdnInvalidator(configured, { clients })).toBeInstanceOf(CloudFrontInvalidator);
  });

  it('uses an injected invalidator over any configuration (local mode, tests)', () => {
    const config = loadRevalidateConfig({ ...env, ISR_CDN_DISTRIBUTION_ID: 'E2ABC' });
    const cdn = recordingCdn();
    expect(createCdnInvalidator(config, { clients, cdn })).toBe(cdn);
  });

  it('refuses a malformed distribution id at cold start', () => {
    expect(() => loadRevalidateConfig({ ...env, ISR_CDN_DISTRIBUTION_ID: 'not an id' })).toThrow(
      /ISR_CDN_DISTRIBUTION_ID/,
    );
  });
});

describe('createRevalidateDeps: who may call', () => {
  it('trusts the IAM-authenticated URL when no key is configured', () => {
    expect(createRevalidateDeps(loadRevalidateConfig(env), { clients }).auth).toEqual({
      kind: 'iam',
    });
  });

  it('requires a signature when the key is configured by ARN or given as is', () => {
    const byArn = createRevalidateDeps(
      loadRevalidateConfig({ ...env, ISR_REVALIDATE_SECRET_ARN: secretArn }),
      { clients, revalidateOpen: true },
    );
    expect(byArn.auth).toMatchObject({ kind: 'hmac', skewSeconds: 300 });
    const given = createRevalidateDeps(loadRevalidateConfig(env), {
      clients,
      revalidateSecret: new StaticSecretSource('k'),
      revalidateOpen: true,
    });
    expect(given.auth.kind).toBe('hmac');
  });

  it('is open only when local mode asks for it', () => {
    const open = createRevalidateDeps(loadRevalidateConfig(env), { clients, revalidateOpen: true });
    expect(open.auth).toEqual({ kind: 'open' });
  });
});
