/**
 * The adapter inside edge middleware: Next bundles the cacheHandler there and constructs it on
 * every middleware request, in a sandbox whose `process` members all throw. Simulated here by
 * what the sandbox defines (the `EdgeRuntime` global, `NEXT_RUNTIME=edge`).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { createCacheHandler } from '../../next/cache-handler.js';
import { AdapterConfigError } from '../../next/config.js';
import { createHash, hasNodeBuiltins, setTimeout } from '../../next/node-builtins.js';

const edge = globalThis as { EdgeRuntime?: string };
afterEach(() => {
  delete edge.EdgeRuntime;
  delete process.env.NEXT_RUNTIME;
});

describe('next/node-builtins.ts', () => {
  it("runs Node's own built-ins on Node", async () => {
    expect(hasNodeBuiltins()).toBe(true);
    expect(createHash('sha256').update('x').digest('hex')).toMatch(/^2d711642/);
    await expect(setTimeout(0, 'slept')).resolves.toBe('slept');
  });

  it.each([
    ['the EdgeRuntime global', () => (edge.EdgeRuntime = 'edge-runtime')],
    ['NEXT_RUNTIME=edge', () => (process.env.NEXT_RUNTIME = 'edge')],
  ])('knows the edge runtime by %s, and says so when a built-in is called', (_, enter) => {
    enter();
    expect(hasNodeBuiltins()).toBe(false);
    expect(() => createHash('sha256')).toThrow(
      'facetheory-isr/next: node:crypto is not available in this runtime (the edge runtime?)',
    );
  });
});

describe('the cacheHandler in edge middleware', () => {
  const env = {}; // no ISR_REVALIDATE_URL: middleware never revalidates

  it('constructs and misses without the revalidate settings, and checks no Next version', async () => {
    edge.EdgeRuntime = 'edge-runtime';
    const Handler = createCacheHandler({ env });
    const handler = new Handler({});
    expect(await handler.get('k')).toBeNull();
  });

  it('negative control: on Node the same construction fails, naming the variable', () => {
    const Handler = createCacheHandler({ env });
    expect(() => new Handler({})).toThrow(AdapterConfigError);
  });
});
