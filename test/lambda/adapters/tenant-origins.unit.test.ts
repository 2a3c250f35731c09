/**
 * Issue 34, point 3 in multi-tenant mode: a tenant's render or pass tells the upstream that
 * tenant's host (`tenantOrigins`, by default each tenant's first host in `tenantsByHost`), never
 * another tenant's and never a viewer's forwarded headers (the negative controls send them).
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { HttpPassThrough } from '../../../lambda/adapters/pass-through/http.js';
import { HttpRenderer } from '../../../lambda/adapters/renderer/http.js';
import { cacheKeyFor } from '../../../lambda/core/page/cache-key.js';
import { publicOriginsOf } from '../../../lambda/core/tenant-origins.js';
import { loadSettings } from '../../../lambda/shared/config.js';
import { IsrServiceConfigError, resolveSettings } from '../../../lib/isr-settings.js';
import { startHttpServer } from '../../helpers/http-server.js';

type Server = Awaited<ReturnType<typeof startHttpServer>>;
let upstream: Server | undefined;
afterEach(async () => {
  await upstream?.close();
  upstream = undefined;
});

/** An app that redirects to a URL built from the host it was told, as middleware does. */
async function hostBuildingApp() {
  upstream = await startHttpServer((req, res) => {
    const host = req.headers['x-forwarded-host'] ?? req.headers.host;
    const proto = req.headers['x-forwarded-proto'] ?? 'http';
    res.writeHead(307, { location: `${String(proto)}://${String(host)}/isr` }).end();
  });
  return upstream;
}

const ORIGINS = publicOriginsOf({
  acme: 'https://acme.example.com',
  globex: 'http://globex.example:8080',
});
const key = (tenant: string) =>
  cacheKeyFor({}, { tenant, rawPath: '/go' }, { allowedQueryParams: [] });
const signal = new AbortController().signal;
const forwardedOf = (server: Server, at: number) => ({
  host: server.seen[at]?.headers['x-forwarded-host'],
  proto: server.seen[at]?.headers['x-forwarded-proto'],
});

describe("a tenant's render names its own host", () => {
  const warnings: unknown[] = [];
  const renderer = (server: Server) =>
    new HttpRenderer({
      originUrl: server.url,
      maxBodyBytes: 1000,
      tenantHeader: 'x-tenant',
      tenantOrigins: ORIGINS,
      log: { warn: (message, extra) => warnings.push({ message, ...extra }) },
    });

  it("each tenant's render carries its host and scheme, and its redirect names them", async () => {
    const server = await hostBuildingApp();
    const render = renderer(server);
    const acme = await render.render({ cacheKey: key('acme'), signal });
    const globex = await render.render({ cacheKey: key('globex'), signal });
    expect(forwardedOf(server, 0)).toEqual({ host: 'acme.example.com', proto: 'https' });
    expect(forwardedOf(server, 1)).toEqual({ host: 'globex.example:8080', proto: 'http' });
    expect(acme.location).toBe('https://acme.example.com/isr');
    expect(globex.location).toBe('http://globex.example:8080/isr');
  });

  it('negative control: a tenant without an origin gets no host (nor another’s), warned once', async () => {
    const server = await hostBuildingApp();
    const render = renderer(server);
    await render.render({ cacheKey: key('initech'), signal });
    await render.render({ cacheKey: key('initech'), signal });
    expect(forwardedOf(server, 0)).toEqual({ host: undefined, proto: undefined });
    expect(forwardedOf(server, 1)).toEqual({ host: undefined, proto: undefined });
    expect(warnings).toEqual([
      expect.objectContaining({ decision: 'no-forwarded-host', tenant: 'initech' }),
    ]);
  });
});

describe("a tenant's pass names the validated tenant's host, never a viewer's", () => {
  const forged = (tenant: string): [string, string][] => [
    ['x-forwarded-host', 'evil.example'],
    ['x-forwarded-proto', 'http'],
    // As `servePass` sets it: the validated tenant, whatever the viewer sent.
    ['x-tenant', tenant],
  ];
  const pass = (server: Server) =>
    new HttpPassThrough({
      originUrl: server.url,
      maxBodyBytes: 1000,
      tenantOrigins: { header: 'X-Tenant', origins: ORIGINS ?? new Map() },
    });
  const forward = (through: HttpPassThrough, tenant: string) =>
    through.forward({
      method: 'GET',
      path: '/go',
      query: '',
      headers: forged(tenant),
      body: undefined,
    });

  it("the tenant's origin replaces the forged headers", async () => {
    const server = await hostBuildingApp();
    await forward(pass(server), 'acme');
    await forward(pass(server), 'globex');
    expect(forwardedOf(server, 0)).toEqual({ host: 'acme.example.com', proto: 'https' });
    expect(forwardedOf(server, 1)).toEqual({ host: 'globex.example:8080', proto: 'http' });
  });

  it('negative control: a tenant without an origin (or none) sends no forwarded host at all', async () => {
    const server = await hostBuildingApp();
    await forward(pass(server), 'initech');
    await forward(pass(server), '');
    expect(forwardedOf(server, 0)).toEqual({ host: undefined, proto: undefined });
    expect(forwardedOf(server, 1)).toEqual({ host: undefined, proto: undefined });
  });
});

const REQUIRED = {
  FACETHEORY_CACHE_TABLE_NAME: 'isr-cache',
  ISR_BODY_BUCKET: 'isr-bodies',
  ISR_QUEUE_URL: 'http://127.0.0.1:1/q',
  ISR_TENANT_HEADER: 'x-tenant',
};

describe('tenantOrigins at cold start', () => {
  it('accepts tenant -> origin', () => {
    const env = { ...REQUIRED, ISR_TENANT_ORIGINS: '{"acme":"https://acme.example.com"}' };
    expect(loadSettings('origin', env).tenantOrigins).toEqual({
      acme: 'https://acme.example.com',
    });
  });
  it.each([
    ['a list', '["https://acme.example.com"]'],
    ['a tenant name out of bounds', '{"-acme":"https://acme.example.com"}'],
    ['an origin with a path', '{"acme":"https://acme.example.com/app"}'],
    ['an origin of another scheme', '{"acme":"ftp://acme.example.com"}'],
    ['an origin with credentials', '{"acme":"https://u:p@acme.example.com"}'],
    ['not a string', '{"acme":1}'],
  ])('refuses %s', (_, value) => {
    expect(() => loadSettings('origin', { ...REQUIRED, ISR_TENANT_ORIGINS: value })).toThrow(
      /ISR_TENANT_ORIGINS/,
    );
  });
  it('refuses it without multi-tenant mode', () => {
    const env = { ...REQUIRED, ISR_TENANT_HEADER: undefined, ISR_TENANT_ORIGINS: '{}' };
    expect(() => loadSettings('origin', env)).toThrow(/ISR_TENANT_ORIGINS/);
  });
});

describe('tenantOrigins at synth', () => {
  const tenantsByHost = {
    'acme.example.com': 'acme',
    'www.acme.example.com': 'acme',
    'globex.example': 'globex',
  };

  it("derives each tenant's first host in tenantsByHost, over https", () => {
    const { environment } = resolveSettings({ tenantHeader: 'x-tenant', tenantsByHost });
    expect(JSON.parse(environment.ISR_TENANT_ORIGINS ?? 'null')).toEqual({
      acme: 'https://acme.example.com',
      globex: 'https://globex.example',
    });
  });

  it('takes the prop instead when given', () => {
    const tenantOrigins = { acme: 'https://www.acme.example.com' };
    const { environment } = resolveSettings({
      tenantHeader: 'x-tenant',
      tenantsByHost,
      tenantOrigins,
    });
    expect(JSON.parse(environment.ISR_TENANT_ORIGINS ?? 'null')).toEqual(tenantOrigins);
  });

  it('refuses a bad prop', () => {
    const tenantOrigins = { acme: 'https://acme.example.com/app' };
    expect(() =>
      resolveSettings({ tenantHeader: 'x-tenant', tenantsByHost, tenantOrigins }),
    ).toThrow(IsrServiceConfigError);
  });
});
