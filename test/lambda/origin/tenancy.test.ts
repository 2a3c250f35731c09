import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { htmlPage } from '../../../lambda/adapters/renderer/module.js';
import { viewerRequestFunctionSource } from '../../../lib/edge/viewer-request-function.js';
import { TestClock } from '../../helpers/clock.js';
import { viewerRequest } from '../../helpers/edge.js';
import { createOriginHarness, type OriginHarness } from '../../helpers/origin-harness.js';
import { countingRenderer } from '../../helpers/renderers.js';

const counter = countingRenderer((request) =>
  htmlPage(`<p>page of ${request.cacheKey.tenant ?? '?'} at ${request.cacheKey.key}</p>`),
);
const edge = viewerRequestFunctionSource({
  tenantHeader: 'x-tenant',
  tenantsByHost: { 'acme.example.com': 'acme', 'globex.example.com': 'globex' },
});
let h: OriginHarness;

beforeAll(async () => {
  h = await createOriginHarness({
    renderer: counter.renderer,
    clock: new TestClock(),
    env: { ISR_TENANT_HEADER: 'x-tenant', ISR_TENANTS: 'acme,globex' },
  });
});
afterAll(() => h.destroy());

/** A viewer request through the edge function, then to the origin as CloudFront forwards it. */
async function viaEdge(host: string, path: string, forged?: string) {
  const through = viewerRequest(edge, {
    host,
    ...(forged === undefined ? {} : { 'x-tenant': forged }),
  });
  if ('status' in through) return { status: through.status, text: undefined, cache: undefined };
  return h.invoke(path, { headers: { 'x-tenant': through.headers['x-tenant'] ?? '' } });
}

describe('tenants cannot be forged', () => {
  it("a forged tenant header neither reads nor fills another tenant's cache", async () => {
    const globexFirst = await viaEdge('globex.example.com', '/home');
    expect(globexFirst).toMatchObject({ status: 200, cache: 'MISS' });
    expect(globexFirst.text).toContain('page of globex');

    // acme's viewer claims to be globex: it gets acme's page, rendered for acme, and cached as acme's
    const forged = await viaEdge('acme.example.com', '/home', 'globex');
    expect(forged).toMatchObject({ status: 200, cache: 'MISS' });
    expect(forged.text).toContain('page of acme');
    expect(forged.text).not.toBe(globexFirst.text);

    // globex's cache holds its own page still; acme's entry is acme's
    const globexAgain = await viaEdge('globex.example.com', '/home', 'acme');
    expect(globexAgain).toMatchObject({ cache: 'HIT', text: globexFirst.text });
    const acmeMeta = await h.cacheTable.getMeta(h.keyFor('/home', '', 'acme').pk, {
      consistent: true,
    });
    expect(acmeMeta?.pk).toMatch(/^TENANT#acme#CACHE#/);
  });

  it('an unknown host never reaches the origin', async () => {
    const before = counter.calls;
    expect(await viaEdge('evil.example', '/home', 'acme')).toMatchObject({ status: 421 });
    expect(counter.calls).toBe(before);
  });

  it('the origin refuses a tenant outside the allow-list, should anything bypass the edge', async () => {
    const reply = await h.invoke('/home', { headers: { 'x-tenant': 'initech' } });
    expect(reply.status).toBe(400);
    expect(JSON.parse(reply.text ?? '{}')).toMatchObject({ error: 'unknown-tenant' });
  });

  it('answers vary on the tenant header, so no shared cache mixes tenants', async () => {
    const reply = await viaEdge('acme.example.com', '/vary');
    expect(reply).toMatchObject({ status: 200 });
    expect((reply as { headers: Record<string, string> }).headers.vary).toBe('x-tenant');
  });
});
