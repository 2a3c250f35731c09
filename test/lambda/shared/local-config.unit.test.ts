import { describe, expect, it } from '@jest/globals';
import { ConfigError } from '../../../lambda/core/errors.js';
import { loadLocalConfig, localDefaults } from '../../../lambda/shared/config.js';

describe("npm start's own settings", () => {
  it('listen on loopback port 3000, keep data in .local and cache at the edge by default', () => {
    expect(loadLocalConfig({})).toEqual({
      port: 3000,
      host: '127.0.0.1',
      dataDir: '.local',
      revalidateSecret: undefined,
      maxReceiveCount: 5,
      edgeCache: true,
    });
    expect(loadLocalConfig({ ISR_LOCAL_EDGE_CACHE: '0' }).edgeCache).toBe(false);
  });

  it('name the variable that is wrong', () => {
    const refusal = (env: Record<string, string>) => {
      try {
        loadLocalConfig(env);
      } catch (error) {
        return error instanceof ConfigError ? error.message : `not a ConfigError: ${String(error)}`;
      }
      return 'accepted';
    };
    expect(refusal({ PORT: 'eighty' })).toContain('PORT must be a number, got "eighty"');
    expect(refusal({ PORT: '70000' })).toContain('PORT must be an integer 1..65535, got 70000');
    expect(refusal({ ISR_LOCAL_BIND_ADDRESS: 'localhost' })).toContain(
      'ISR_LOCAL_BIND_ADDRESS must be an IP address, got "localhost"',
    );
    expect(loadLocalConfig({ ISR_LOCAL_BIND_ADDRESS: '::1' }).host).toBe('::1');
  });

  it('take the revalidation secret exactly as given, blank as none', () => {
    expect(loadLocalConfig({ ISR_REVALIDATE_SECRET: ' s3cret ' }).revalidateSecret).toBe(
      ' s3cret ',
    );
    expect(loadLocalConfig({ ISR_REVALIDATE_SECRET: '' }).revalidateSecret).toBeUndefined();
  });

  it("set npm start's defaults for what the environment leaves unset", () => {
    expect(localDefaults({})).toEqual({
      FACETHEORY_CACHE_TABLE_NAME: 'isr-cache',
      ISR_BODY_BUCKET: 'isr-bodies',
      ISR_DEPLOY_ID: 'local',
      ISR_REVALIDATE_SECONDS: '10',
      ISR_DEDUPE_WINDOW_SECONDS: '5',
      // A deadline purge of `regenerate: true` within half a minute, not five.
      ISR_PURGE_DEADLINE_SECONDS: '30',
    });
    expect(localDefaults({ ISR_REVALIDATE_SECONDS: '30' })).not.toHaveProperty(
      'ISR_REVALIDATE_SECONDS',
    );
  });
});
