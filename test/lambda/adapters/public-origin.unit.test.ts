/**
 * Issue 34, point 3: the upstream is told the host viewers use, by the service alone. Renders
 * and passes send `publicOrigin` in X-Forwarded-Host/-Proto; a viewer's own forwarded headers
 * never go on as sent (the negative control sends them); a `Location` naming the upstream's
 * address, in any scheme, reaches viewers relative, on renders and passes.
 */
import { afterEach, describe, expect, it } from '@jest/globals';
import { HttpPassThrough } from '../../../lambda/adapters/pass-through/http.js';
import { HttpRenderer } from '../../../lambda/adapters/renderer/http.js';
import { publicOriginOf } from '../../../lambda/core/forwarding.js';
import { cacheKeyFor } from '../../../lambda/core/page/cache-key.js';
import { loadSettings } from '../../../lambda/shared/config.js';
import { startHttpServer } from '../../helpers/http-server.js';

type Server = Awaited<ReturnType<typeof startHttpServer>>;
let upstream: Server | undefined;
afterEach(async () => {
  await upstream?.close();
  upstream = undefined;
});

/** An app that redirects to a URL it builds from the host it was told (as middleware does). */
async function hostBuildingApp() {
  upstream = await startHttpServer((req, res) => {
    const host = req.headers['x-forwarded-host'] ?? req.headers.host;
    const proto = req.headers['x-forwarded-proto'] ?? 'http';
    if (req.url === '/self') {
      // A proxy-aware app that says https of its own (http) address.
      res.writeHead(307, { location: `https://${req.headers.host}/isr` }).end();
      return;
    }
    res.writeHead(307, { location: `${String(proto)}://${String(host)}/isr` }).end();
  });
  return upstream;
}

const PUBLIC = publicOriginOf('https://www.example.com');
const key = (tenant?: string) =>
  cacheKeyFor(
    tenant === undefined ? undefined : {},
    { tenant, rawPath: '/go' },
    { allowedQueryParams: [] },
  );
const signal = new AbortController().signal;

describe('renders tell the upstream the public host', () => {
  it('sends publicOrigin in X-Forwarded-Host and X-Forwarded-Proto; the redirect names it', async () => {
    const server = await hostBuildingApp();
    const renderer = new HttpRenderer({
      originUrl: server.url,
      maxBodyBytes: 1000,
      publicOrigin: PUBLIC,
    });
    const page = await renderer.render({ cacheKey: key(), signal });
    expect(server.seen[0]?.headers).toMatchObject({
      'x-forwarded-host': 'www.example.com',
      'x-forwarded-proto': 'https',
    });
    expect(page.location).toBe('https://www.example.com/isr');
  });

  it("negative control: without it, the app's redirect names the upstream, and is made relative", async () => {
    const server = await hostBuildingApp();
    const renderer = new HttpRenderer({ originUrl: server.url, maxBodyBytes: 1000 });
    const page = await renderer.render({ cacheKey: key(), signal });
    expect(server.seen[0]?.headers['x-forwarded-host']).toBeUndefined();
    expect(page.location).toBe('/isr');
  });

  it('a tenant’s render names no host (one origin is not every tenant’s)', async () => {
    const server = await hostBuildingApp();
    const renderer = new HttpRenderer({
      originUrl: server.url,
      maxBodyBytes: 1000,
      tenantHeader: 'x-tenant',
      publicOrigin: PUBLIC,
    });
    await renderer.render({ cacheKey: key('acme'), signal });
    expect(server.seen[0]?.headers['x-forwarded-host']).toBeUndefined();
  });

  it("the upstream's address in another scheme is made relative too", async () => {
    const server = await hostBuildingApp();
    const renderer = new HttpRenderer({ originUrl: server.url, maxBodyBytes: 1000 });
    const selfKey = cacheKeyFor(undefined, { rawPath: '/self' }, { allowedQueryParams: [] });
    expect((await renderer.render({ cacheKey: selfKey, signal })).location).toBe('/isr');
  });
});

describe('passes never send a viewer’s forwarded headers on', () => {
  const forged: [string, string][] = [
    ['x-forwarded-host', 'evil.example'],
    ['x-forwarded-proto', 'http'],
  ];
  const forward = (pass: HttpPassThrough, path = '/go') =>
    pass.forward({ method: 'GET', path, query: '', headers: forged, body: undefined });
  const locationOf = (answer: Awaited<ReturnType<HttpPassThrough['forward']>>) =>
    answer.headers.find(([name]) => name === 'location')?.[1];

  it('publicOrigin replaces them', async () => {
    const server = await hostBuildingApp();
    const pass = new HttpPassThrough({
      originUrl: server.url,
      maxBodyBytes: 1000,
      publicOrigin: PUBLIC,
    });
    const answer = await forward(pass);
    expect(server.seen[0]?.headers).toMatchObject({
      'x-forwarded-host': 'www.example.com',
      'x-forwarded-proto': 'https',
    });
    expect(locationOf(answer)).toBe('https://www.example.com/isr');
  });

  it("without it, the edge's X-Forwarded-Host goes on (its function wrote it) and no proto", async () => {
    const server = await hostBuildingApp();
    const pass = new HttpPassThrough({ originUrl: server.url, maxBodyBytes: 1000 });
    await forward(pass);
    expect(server.seen[0]?.headers['x-forwarded-host']).toBe('evil.example');
    expect(server.seen[0]?.headers['x-forwarded-proto']).toBeUndefined();
  });

  it("a Location naming the upstream's address reaches the viewer relative", async () => {
    const server = await hostBuildingApp();
    const pass = new HttpPassThrough({ originUrl: server.url, maxBodyBytes: 1000 });
    expect(locationOf(await forward(pass, '/self'))).toBe('/isr');
  });
});

const REQUIRED = {
  FACETHEORY_CACHE_TABLE_NAME: 'isr-cache',
  ISR_BODY_BUCKET: 'isr-bodies',
  ISR_QUEUE_URL: 'http://127.0.0.1:1/q',
};

describe('publicOrigin', () => {
  it.each(['https://www.example.com', 'http://localhost:3000'])('accepts %s', (origin) => {
    expect(() => loadSettings('origin', { ...REQUIRED, ISR_PUBLIC_ORIGIN: origin })).not.toThrow();
  });
  it.each(['https://www.example.com/app', 'ftp://x.example', 'https://u:p@x.example', 'x'])(
    'refuses %s',
    (origin) => {
      expect(() => loadSettings('origin', { ...REQUIRED, ISR_PUBLIC_ORIGIN: origin })).toThrow(
        /ISR_PUBLIC_ORIGIN|publicOrigin/,
      );
    },
  );
});
