import { HeadObjectCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { HttpRenderer } from '../../../lambda/adapters/renderer/http.js';
import { TestClock } from '../../helpers/clock.js';
import { startHttpServer } from '../../helpers/http-server.js';
import { createOriginHarness, type OriginHarness } from '../../helpers/origin-harness.js';

/** An upstream that answers with the headers a real site sends, and cookies on some pages. */
let upstream: Awaited<ReturnType<typeof startHttpServer>>;
let h: OriginHarness;
let refusing: OriginHarness;
const clock = new TestClock();
const CSP = "default-src 'self'; script-src 'self' https://cdn.example";
const HSTS = 'max-age=63072000; includeSubDomains; preload';
const LINK = '</app.css>; rel=preload; as=style';

beforeAll(async () => {
  upstream = await startHttpServer((req, res) => {
    const headers: Record<string, string | string[]> = {
      'content-type': 'text/html; charset=utf-8',
      'cache-control': 's-maxage=10',
      'content-security-policy': CSP,
      'strict-transport-security': HSTS,
      link: LINK,
      'x-robots-tag': 'noarchive',
      'keep-alive': 'timeout=5',
      'x-powered-by': 'Express',
    };
    if (req.url?.startsWith('/cookie'))
      headers['set-cookie'] = ['session=viewer-1-secret; HttpOnly', 'ab=b'];
    res.writeHead(200, headers).end(`<p>${req.url}</p>`);
  });
  const renderer = new HttpRenderer({ originUrl: upstream.url, maxBodyBytes: 1024 * 1024 });
  h = await createOriginHarness({ renderer, clock });
  refusing = await createOriginHarness({ renderer, clock, env: { ISR_SET_COOKIE: 'refuse' } });
});
afterAll(async () => {
  h.destroy();
  refusing.destroy();
  await upstream.close();
});

describe('pages reach the viewer as the upstream meant them', () => {
  it("an upstream's CSP, HSTS and Link headers reach the viewer on MISS, HIT and STALE", async () => {
    const miss = await h.invoke('/secure');
    const hit = await h.invoke('/secure');
    clock.advance(11);
    const stale = await h.invoke('/secure');
    expect([miss.cache, hit.cache, stale.cache]).toEqual(['MISS', 'HIT', 'STALE']);
    for (const reply of [miss, hit, stale]) {
      expect(reply.headers).toMatchObject({
        'content-security-policy': CSP,
        'strict-transport-security': HSTS,
        link: LINK,
        'x-robots-tag': 'noarchive',
      });
    }
  });

  it('a hop-by-hop header never does; any other header not on the deny-list does', async () => {
    const miss = await h.invoke('/hop');
    const hit = await h.invoke('/hop');
    for (const reply of [miss, hit]) {
      expect(reply.headers['keep-alive']).toBeUndefined();
      // Every header the app sends is kept by default (issue 34, point 5), its own among them.
      expect(reply.headers['x-powered-by']).toBeDefined();
    }
  });

  it('a Set-Cookie page is cached without its cookie, and no viewer ever gets it back', async () => {
    const miss = await h.invoke('/cookie-page');
    const hit = await h.invoke('/cookie-page');
    expect(hit.cache).toBe('HIT');
    for (const reply of [miss, hit]) {
      expect(reply.headers['set-cookie']).toBeUndefined();
      // A streamed answer's cookies travel in the prelude's own list, apart from its headers.
      expect(reply.cookies).toEqual([]);
      expect(JSON.stringify(reply.headers)).not.toContain('viewer-1-secret');
    }
    const meta = await h.cacheTable.getMeta(h.keyFor('/cookie-page').pk, { consistent: true });
    expect(JSON.stringify(meta)).not.toContain('viewer-1-secret');
  });

  it('a Set-Cookie page is refused (502) when the service is told to refuse such pages', async () => {
    const reply = await refusing.invoke('/cookie-refused');
    expect(reply.status).toBe(502);
    expect(JSON.parse(reply.text ?? '{}')).toMatchObject({ error: 'refused:set-cookie' });
    expect(
      await refusing.cacheTable.getMeta(refusing.keyFor('/cookie-refused').pk, {
        consistent: true,
      }),
    ).toBeUndefined();
  });

  it('a body written here carries the FaceTheory metadata keys', async () => {
    await h.invoke('/ft-out');
    const meta = await h.cacheTable.getMeta(h.keyFor('/ft-out').pk, { consistent: true });
    const head = await h.clients.s3.send(
      new HeadObjectCommand({ Bucket: h.config.bucket, Key: meta?.s3Key ?? '' }),
    );
    expect(head.Metadata).toEqual({
      'facetheory-status': '200',
      'facetheory-content-type': 'text/html; charset=utf-8',
      'facetheory-content-security-policy': CSP,
    });
  });

  it('a row and body written the way FaceTheory writes them are served with its status, type and CSP', async () => {
    const key = h.keyFor('/written-by-facetheory');
    await h.bodies.putBody({
      s3Key: `pages/_/${key.hash}/facetheory`,
      body: new TextEncoder().encode('<h1>Not found</h1>'),
      contentType: 'binary/octet-stream',
      metadata: {
        status: 404,
        contentType: 'text/html',
        contentSecurityPolicy: "default-src 'none'",
      },
    });
    // A Recipe A META: FaceTheory's attributes only, no status_code or content_type.
    const lease = await h.cacheTable.acquireLease({
      pk: key.pk,
      now: clock.seconds,
      durationSeconds: 30,
    });
    await h.cacheTable.publishGeneration({
      observed: undefined,
      lease,
      now: clock.seconds,
      meta: {
        pk: key.pk,
        s3Key: `pages/_/${key.hash}/facetheory`,
        generatedAt: clock.seconds,
        revalidateSeconds: 60,
        etag: '"ft"',
      },
    });
    const reply = await h.invoke('/written-by-facetheory');
    expect(reply).toMatchObject({ status: 404, cache: 'HIT', text: '<h1>Not found</h1>' });
    expect(reply.headers).toMatchObject({
      'content-type': 'text/html',
      'content-security-policy': "default-src 'none'",
    });
  });
});
