import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { HttpRenderer } from '../../../lambda/adapters/renderer/http.js';
import { MAX_CACHE_KEY_LENGTH } from '../../../lambda/core/page/cache-key.js';
import { TestClock } from '../../helpers/clock.js';
import { startHttpServer } from '../../helpers/http-server.js';
import { createOriginHarness, type OriginHarness } from '../../helpers/origin-harness.js';

/**
 * An upstream that reflects request details into the page, as many SSR apps do (absolute URLs
 * built from Host or X-Forwarded-Host, greetings from cookies): the classic cache-poisoning setup.
 */
let upstream: Awaited<ReturnType<typeof startHttpServer>>;
let single: OriginHarness;
let multi: OriginHarness;
let renders = 0;

beforeAll(async () => {
  upstream = await startHttpServer((req, res) => {
    renders += 1;
    const reflected = [
      'host',
      'x-forwarded-host',
      'x-forwarded-proto',
      'cookie',
      'accept-language',
      'x-tenant',
    ]
      .map((name) => `${name}=${String(req.headers[name] ?? '')}`)
      .join(';');
    res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 's-maxage=60' });
    res.end(`<p>${req.url}</p><p>${reflected}</p>`);
  });
  const renderer = (tenantHeader?: string) =>
    new HttpRenderer({ originUrl: upstream.url, tenantHeader, maxBodyBytes: 1024 * 1024 });
  single = await createOriginHarness({ renderer: renderer(), clock: new TestClock() });
  multi = await createOriginHarness({
    renderer: renderer('x-tenant'),
    clock: new TestClock(),
    env: { ISR_TENANT_HEADER: 'X-Tenant' },
  });
});
afterAll(async () => {
  single.destroy();
  multi.destroy();
  await upstream.close();
});

const HOSTILE_HEADERS = {
  host: 'evil.example',
  'x-forwarded-host': 'evil.example',
  'x-forwarded-proto': 'gopher',
  forwarded: 'host=evil.example',
  'x-original-url': '/admin',
  'x-rewrite-url': '/admin',
  cookie: 'session=victim',
  'accept-language': 'xx-EVIL',
  'x-http-method-override': 'DELETE',
  'x-tenant': 'evil-tenant',
};

describe('origin request safety: hostile inputs', () => {
  it.each([
    ['traversal', '/a/../secret', 400, 'traversal'],
    ['encoded traversal', '/a/%2e%2e/secret', 400, 'encoded-dot'],
    ['double encoding', '/a/%252e%252e/secret', 400, 'double-encoding'],
    ['encoded slash', '/a%2fb', 400, 'encoded-separator'],
    ['backslash', '/a%5c..%5csecret', 400, 'backslash'],
    ['NUL', '/a%00.html', 400, 'control-character'],
    ['CRLF injection', '/a%0d%0aSet-Cookie:%20x=1', 400, 'control-character'],
    ['fullwidth dots', '/%EF%BC%8E%EF%BC%8E/secret', 400, 'traversal'],
    ['malformed escape', '/a%zz', 400, 'malformed-encoding'],
    ['overlong UTF-8', '/%C0%AE%C0%AE/secret', 400, 'malformed-encoding'],
    ['overlong path', `/${'a'.repeat(MAX_CACHE_KEY_LENGTH + 1)}`, 400, 'too-long'],
  ])('refuses %s with a 400 and its reason', async (_label, target, status, reason) => {
    const before = renders;
    const reply = await single.invoke(target);
    expect(reply.status).toBe(status);
    expect(reply.headers['cache-control']).toBe('no-store');
    expect(JSON.parse(reply.text ?? '{}')).toMatchObject({ error: reason });
    expect(renders).toBe(before);
  });

  it.each([
    ['unicode composition', '/caf%C3%A9', '/cafe%CC%81'],
    ['query order', '/list?page=2&lang=en', '/list?lang=en&page=2'],
    ['unknown query params', '/list2?page=2', '/list2?utm_source=x&page=2&fbclid=1'],
    ['duplicate slashes and a trailing slash', '/docs/intro', '//docs//intro/'],
  ])('gives equivalent requests one cache entry: %s', async (_label, first, second) => {
    const a = await single.invoke(first);
    const b = await single.invoke(second);
    expect(a.cache).toBe('MISS');
    expect(b.cache).toBe('HIT');
    expect(b.text).toBe(a.text);
  });
});

describe('origin request safety: cache poisoning', () => {
  it('renders a miss from the cache key alone, whatever the request headers say', async () => {
    const poisoned = await single.invoke('/poison-miss', { headers: HOSTILE_HEADERS });
    const clean = await single.invoke('/poison-miss');
    expect(poisoned.cache).toBe('MISS');
    expect(clean.cache).toBe('HIT');
    expect(clean.text).toBe(poisoned.text);
    expect(poisoned.text).not.toMatch(/evil|victim|gopher|admin/i);
    expect(poisoned.text).toContain(`host=${new URL(upstream.url).host}`);
  });

  it.each(Object.entries(HOSTILE_HEADERS))(
    'renders a miss the same whatever %s says, and the upstream never sees it',
    async (name, value) => {
      const path = `/poison-${name}`;
      const before = upstream.seen.length;
      const poisoned = await single.invoke(path, { headers: { [name]: value } });
      expect(poisoned.cache).toBe('MISS'); // the header reached a render, not a cached page
      expect(upstream.seen.length).toBe(before + 1);
      const seen = upstream.seen.at(-1)?.headers ?? {};
      expect(Object.values(seen).join('\n')).not.toContain(value);
      expect(poisoned.text).not.toContain(value);
      const clean = await single.invoke(path);
      expect(clean.cache).toBe('HIT');
      expect(clean.text).toBe(poisoned.text);
    },
  );
});

describe('origin tenancy', () => {
  it('fails closed without the tenant header in multi-tenant mode', async () => {
    const reply = await multi.invoke('/home');
    expect(reply.status).toBe(400);
    expect(JSON.parse(reply.text ?? '{}')).toMatchObject({ error: 'missing-tenant' });
  });

  it('refuses a malformed tenant', async () => {
    const reply = await multi.invoke('/home', { headers: { 'x-tenant': 'acme#CACHE#x' } });
    expect(JSON.parse(reply.text ?? '{}')).toMatchObject({ error: 'invalid-tenant' });
  });

  it('keeps tenants apart and tells the upstream which tenant it renders for', async () => {
    const acme = await multi.invoke('/home', { headers: { 'x-tenant': 'acme' } });
    const globex = await multi.invoke('/home', { headers: { 'x-tenant': 'globex' } });
    expect(acme.cache).toBe('MISS');
    expect(globex.cache).toBe('MISS');
    expect(acme.text).toContain('x-tenant=acme');
    expect(globex.text).toContain('x-tenant=globex');
    expect((await multi.invoke('/home', { headers: { 'x-tenant': 'acme' } })).text).toBe(acme.text);
    expect(await multi.cacheTable.getMeta(multi.keyFor('/home', '', 'acme').pk)).toBeDefined();
  });

  it('ignores the tenant header in single-tenant mode', async () => {
    const a = await single.invoke('/tenantless', { headers: { 'x-tenant': 'acme' } });
    const b = await single.invoke('/tenantless', { headers: { 'x-tenant': 'globex' } });
    expect(b.cache).toBe('HIT');
    expect(b.text).toBe(a.text);
    expect(a.text).toContain('x-tenant=</p>');
  });
});
