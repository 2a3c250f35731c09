/** How `npm start` guards `POST /_isr/revalidate`, behind the local CloudFront stand-in. */
import { afterEach, describe, expect, it } from '@jest/globals';
import { startHttpFront, type HttpFront, type OriginHandler } from '../../local/http-front.js';
import { localRevalidation } from '../../local/revalidate-route.js';

const fronts: HttpFront[] = [];
afterEach(async () => {
  await Promise.all(fronts.splice(0).map((front) => front.close()));
});

/** The origin's answer to a POST (`core/serve/serve.ts`), and a page to anything else. */
const origin: OriginHandler = (event) =>
  Promise.resolve(
    event.requestContext.http.method === 'POST'
      ? { statusCode: 405, body: 'only GET and HEAD are served' }
      : { statusCode: 200, body: 'page' },
  );

async function front(revalidateHandler: OriginHandler | undefined): Promise<HttpFront> {
  const started = await startHttpFront({
    handler: origin,
    revalidateHandler,
    port: 0,
    tenantHeader: undefined,
    functionTimeoutMs: 30_000,
    onError: () => undefined,
  });
  fronts.push(started);
  return started;
}

const post = (url: string) =>
  fetch(`${url}/_isr/revalidate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'idempotency-key': 'k1' },
    body: '{"paths":["/a"]}',
  });

describe('the local revalidate route (issue 19, item 20)', () => {
  it('is signed with a secret, open on loopback only', () => {
    expect(localRevalidation('s3cret', '0.0.0.0').mode).toBe('hmac');
    expect(localRevalidation(undefined, '127.0.0.1').mode).toBe('open');
    expect(localRevalidation(undefined, '::1').mode).toBe('open');
  });

  it('off on the LAN without a secret, a POST is told why and what to set, not "only GET and HEAD"', async () => {
    const off = localRevalidation(undefined, '0.0.0.0');
    if (off.mode !== 'disabled') throw new Error(`expected disabled, got ${off.mode}`);
    const { url } = await front(off.handler);
    const reply = await post(url);
    expect(reply.status).toBe(403);
    expect(await reply.json()).toEqual({
      error: 'revalidation-off',
      message:
        'revalidation is off: listening on 0.0.0.0, not loopback; set ISR_REVALIDATE_SECRET ' +
        'to serve it signed',
    });
    expect(off.describe(`${url}/_isr/revalidate`)).toBe(
      'off: listening on 0.0.0.0, not loopback; set ISR_REVALIDATE_SECRET to serve it signed',
    );
    expect((await fetch(`${url}/hello`)).status).toBe(200);
  });

  it('routes a status GET under the endpoint to the revalidate function, pages elsewhere to the origin', async () => {
    const seen: string[] = [];
    const { url } = await front((event) => {
      seen.push(`${event.requestContext.http.method} ${event.rawPath}`);
      return Promise.resolve({ statusCode: 404, body: '{"error":"not-found"}' });
    });
    const id = `rv_${'0'.repeat(32)}`;
    expect((await fetch(`${url}/_isr/revalidate/${id}`)).status).toBe(404);
    expect((await fetch(`${url}/_isr/revalidated`)).status).toBe(200);
    expect(seen).toEqual([`GET /_isr/revalidate/${id}`]);
  });

  it('negative control: without the route, the origin answers the POST with its 405', async () => {
    const { url } = await front(undefined);
    const reply = await post(url);
    expect(reply.status).toBe(405);
    expect(await reply.text()).toBe('only GET and HEAD are served');
  });
});
