/**
 * Issue 34: a pass streams. Through the local CloudFront of the synthesized distribution and
 * the origin behind its RESPONSE_STREAM function URL (Lambda's runtime played by
 * `local/lambda-streaming.ts`), a page the upstream marks private reaches the viewer in chunks:
 * the viewer reads the first (a Suspense fallback) while the upstream still holds the rest on a
 * gate the test opens only then. No waits: if anything on the way buffered, the test would hang.
 * The negative control, the origin with its answer read whole before the prelude goes out (as
 * the removed buffered origin did), gives the viewer nothing before the gate opens.
 * A page the service stores still goes out whole on the stream, every byte as it was.
 */
import { request, type IncomingMessage } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { HttpPassThrough } from '../../lambda/adapters/pass-through/http.js';
import { HttpRenderer } from '../../lambda/adapters/renderer/http.js';
import { createObservability } from '../../lambda/shared/observability.js';
import { startHttpFront, type HttpFront } from '../../local/http-front.js';
import { startHttpServer } from '../helpers/http-server.js';
import { testCloudFront } from '../helpers/local-cloudfront.js';
import { memoryService } from '../helpers/memory-service.js';
import { bytesOf, rewritten, streamingOrigin } from '../helpers/streaming-origin.js';

type Site = Awaited<ReturnType<typeof startHttpServer>>;

const FALLBACK = '<div id="fallback">Loading…</div>';
/** Every byte value: a body a text or base64 step would change. */
const BYTES = Buffer.from(Array.from({ length: 256 }, (_, at) => at));
const REST = '<div id="streamed">done</div>';

/** One gate per upstream answer, opened by the test; `wrote` resolves once the fallback is out. */
function gated() {
  const gates: { open: () => void; opened: Promise<void>; wrote: Promise<void> }[] = [];
  let wrote: () => void = () => undefined;
  const next = () => {
    let open: () => void = () => undefined;
    const opened = new Promise<void>((resolve) => (open = resolve));
    const written = new Promise<void>((resolve) => (wrote = resolve));
    gates.push({ open, opened, wrote: written });
  };
  next();
  return {
    gates,
    /** The gate of the answer being written now, and a fresh one for the next. */
    take() {
      const gate = gates[gates.length - 1];
      const signal = wrote;
      next();
      return { gate, signal };
    },
  };
}

let site: Site;
let upstream: ReturnType<typeof gated>;
beforeAll(async () => {
  upstream = gated();
  site = await startHttpServer((req, res) => {
    if (req.url === '/bytes') {
      res.writeHead(200, { 'content-type': 'image/png', 'cache-control': 'public, s-maxage=60' });
      res.end(BYTES);
      return;
    }
    const { gate, signal } = upstream.take();
    res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'private, no-store' });
    res.write(FALLBACK);
    signal();
    void gate.opened.then(() => res.end(REST));
  });
});
afterAll(() => site.close());

/** The front over the deployed origin; `whole` reads each answer to its end before sending it. */
async function frontOver(whole: boolean): Promise<HttpFront> {
  const service = memoryService({
    renderer: new HttpRenderer({ originUrl: site.url, maxBodyBytes: 100_000 }),
    passThrough: new HttpPassThrough({ originUrl: site.url, maxBodyBytes: 100_000 }),
    keyPolicy: { allowedQueryParams: [] },
    hitForPassSeconds: 300,
  });
  const options = {
    deps: service.originDeps,
    tenantHeader: undefined,
    ...createObservability('origin'),
  };
  const origin = streamingOrigin(options);
  const handler = whole
    ? rewritten(origin, async (answer) => ({ ...answer, body: [await bytesOf(answer.body)] }))
    : origin;
  const cloudfront = await testCloudFront({ renderOriginUrl: site.url }, handler);
  return startHttpFront({
    handler,
    port: 0,
    tenantHeader: undefined,
    functionTimeoutMs: 30_000,
    onError: () => undefined,
    cloudfront,
  });
}

const open = (url: string) =>
  new Promise<IncomingMessage>((resolve, reject) => {
    const req = request(url, { agent: false }, resolve);
    req.on('error', reject);
    req.end();
  });

async function rest(res: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of res as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks).toString();
}

/** The first request renders (its answer delivered: fix 11); its gate opens at once. */
async function firstRequest(front: HttpFront, path: string): Promise<void> {
  const answer = open(`${front.url}${path}`);
  upstream.gates[upstream.gates.length - 1].open();
  const res = await answer;
  expect(res.headers['cache-status']).toContain('detail=uncacheable');
  expect(await rest(res)).toBe(FALLBACK + REST);
}

describe('a passed page streams to the viewer (issue 34)', () => {
  it('the fallback arrives before the upstream sends the rest', async () => {
    const front = await frontOver(false);
    try {
      await firstRequest(front, '/suspense-a');
      const gate = upstream.gates[upstream.gates.length - 1];
      const res = await open(`${front.url}/suspense-a`);
      expect(res.headers['cache-status']).toContain('detail=hit-for-pass');
      expect(res.headers['cache-control']).toContain('private');
      expect(res.headers['x-cache']).toMatch(/Miss from cloudfront/);
      const reader = (res as AsyncIterable<Buffer>)[Symbol.asyncIterator]();
      const first = (await reader.next()).value as Buffer;
      expect(first.toString()).toBe(FALLBACK);
      gate.open();
      const chunks = [first];
      for (let next = await reader.next(); next.done !== true; next = await reader.next())
        chunks.push(next.value);
      expect(Buffer.concat(chunks).toString()).toBe(FALLBACK + REST);
      // Two upstream calls for two viewers: the first's render, the second's pass.
      expect(site.seen.filter((seen) => seen.url === '/suspense-a')).toHaveLength(2);
    } finally {
      await front.close();
    }
  });

  it('a page it stores is written whole on the same stream, its bytes as they were', async () => {
    const front = await frontOver(false);
    try {
      const answers = [];
      for (let round = 0; round < 2; round += 1) {
        const res = await open(`${front.url}/bytes`);
        const chunks: Buffer[] = [];
        for await (const chunk of res as AsyncIterable<Buffer>) chunks.push(chunk);
        answers.push({
          cache: res.headers['x-cache'],
          isr: res.headers['x-isr-cache'],
          body: Buffer.concat(chunks),
        });
      }
      expect(answers.map((answer) => [answer.cache, answer.isr])).toEqual([
        ['Miss from cloudfront', 'MISS'],
        ['Hit from cloudfront', 'MISS'],
      ]);
      for (const answer of answers) expect(answer.body.equals(BYTES)).toBe(true);
    } finally {
      await front.close();
    }
  });

  it('negative control: an origin that reads the answer whole sends nothing before the upstream is done', async () => {
    const front = await frontOver(true);
    try {
      await firstRequest(front, '/suspense-b');
      const gate = upstream.gates[upstream.gates.length - 1];
      const order: string[] = [];
      const answer = open(`${front.url}/suspense-b`).then((res) => {
        order.push('viewer got its headers');
        return res;
      });
      await gate.wrote;
      order.push('upstream sent the fallback, gate opened');
      gate.open();
      const res = await answer;
      expect(await rest(res)).toBe(FALLBACK + REST);
      expect(order).toEqual(['upstream sent the fallback, gate opened', 'viewer got its headers']);
    } finally {
      await front.close();
    }
  });
});
