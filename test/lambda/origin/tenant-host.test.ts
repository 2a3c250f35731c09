/**
 * Issue 34, point 3, through the origin function as deployed (its own renderer and pass-through
 * from its settings, on the local backends): in multi-tenant mode a miss's render and a pass tell
 * the upstream the tenant's host from ISR_TENANT_ORIGINS; a viewer's forged X-Forwarded-Host
 * and another tenant's never reach it (negative controls).
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { TestClock } from '../../helpers/clock.js';
import { startHttpServer } from '../../helpers/http-server.js';
import { createOriginHarness, type OriginHarness } from '../../helpers/origin-harness.js';

let upstream: Awaited<ReturnType<typeof startHttpServer>>;
let origin: OriginHarness;

beforeAll(async () => {
  upstream = await startHttpServer((req, res) => {
    const told = `${String(req.headers['x-forwarded-proto'])}://${String(req.headers['x-forwarded-host'])}`;
    res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 's-maxage=60' });
    res.end(`<p>${req.method} ${req.url} ${told}</p>`);
  });
  origin = await createOriginHarness({
    renderer: undefined,
    clock: new TestClock(),
    env: {
      RENDER_ORIGIN_URL: upstream.url,
      ISR_TENANT_HEADER: 'X-Tenant',
      ISR_TENANT_ORIGINS: JSON.stringify({
        acme: 'https://acme.example.com',
        globex: 'https://globex.example',
      }),
    },
  });
});
afterAll(async () => {
  origin.destroy();
  await upstream.close();
});

const viewer = (tenant: string) => ({
  'x-tenant': tenant,
  'x-forwarded-host': 'evil.example',
  'x-forwarded-proto': 'http',
});

describe("multi-tenant: the upstream is told the tenant's host", () => {
  it("a miss's render names its tenant's origin, each tenant its own", async () => {
    const acme = await origin.invoke('/home', { headers: viewer('acme') });
    const globex = await origin.invoke('/home', { headers: viewer('globex') });
    expect(acme.text).toContain('GET /home https://acme.example.com');
    expect(globex.text).toContain('GET /home https://globex.example');
  });

  it('a pass names the validated tenant’s origin, not the forged one', async () => {
    const reply = await origin.invoke('/form', { method: 'POST', headers: viewer('globex') });
    expect(reply.text).toContain('POST /form https://globex.example');
  });

  it('negative control: a tenant without an origin is told no host, nor the forged one', async () => {
    const render = await origin.invoke('/home', { headers: viewer('initech') });
    const pass = await origin.invoke('/form', { method: 'POST', headers: viewer('initech') });
    expect(render.text).toContain('GET /home undefined://undefined');
    expect(pass.text).toContain('POST /form undefined://undefined');
    expect(`${render.text}${pass.text}`).not.toContain('evil.example');
  });
});
