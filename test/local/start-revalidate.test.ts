import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { signatureOf } from '../../lambda/core/revalidate/webhook-signature.js';
import { npmStart, stopStarted, until, type Started } from './npm-start.js';

const root = mkdtempSync(join(tmpdir(), 'isr-e2e-rv-'));
const SECRET = 'local-webhook-key';

afterAll(async () => {
  await stopStarted(() => true);
  rmSync(root, { recursive: true, force: true });
});

const revalidate = (url: string, body: string, headers: Record<string, string> = {}) =>
  fetch(`${url}/_isr/revalidate`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body,
  });

describe('npm start: POST /_isr/revalidate', () => {
  let open: Started, signed: Started;
  beforeAll(async () => {
    [open, signed] = await Promise.all([
      npmStart({ shared: true, dataDir: join(root, 'open') }),
      npmStart({
        shared: true,
        dataDir: join(root, 'signed'),
        env: { ISR_REVALIDATE_SECRET: SECRET },
      }),
    ]);
  }, 120_000);

  it('without ISR_REVALIDATE_SECRET: open on loopback, says so, and prints the purge', async () => {
    expect(open.output()).toContain(
      `revalidate: POST ${open.url}/_isr/revalidate (open on loopback, no signature`,
    );
    expect((await fetch(`${open.url}/news`)).headers.get('x-isr-cache')).toBe('MISS');
    const reply = await revalidate(open.url, '{"paths":["/news"]}', { 'idempotency-key': 'e2e-1' });
    expect(reply.status).toBe(202);
    await until(open.output, (text) => /cdn purge local-1: #_\/key:[0-9a-f]{40}/.test(text));
    expect((await fetch(`${open.url}/news`)).headers.get('x-isr-cache')).toBe('STALE');
  });

  it('with regenerate: true, defers the purge and prints it once the new generation is published', async () => {
    const reply = await revalidate(open.url, '{"paths":["/news"],"regenerate":true}', {
      'idempotency-key': 'e2e-3',
    });
    expect(reply.status).toBe(202);
    const receipt = (await reply.json()) as { cdn: unknown };
    // npm start's deadline is 30 s (deployed: 300 s); the soft purge comes first.
    expect(receipt.cdn).toMatchObject({ status: 'deferred', deadline_seconds: 30 });
    await until(open.output, (text) => /cdn purge local-2: #_\/key:[0-9a-f]{40}/.test(text));
    // Purged only once published: the edge's next fetch gets the new page.
    expect((await fetch(`${open.url}/news`)).headers.get('x-isr-cache')).toBe('HIT');
  });

  it('with ISR_REVALIDATE_SECRET: says a signature is required, and requires it', async () => {
    expect(signed.output()).toContain('x-isr-signature required');
    const body = '{"tags":["demo"]}';
    const unsigned = await revalidate(signed.url, body, { 'idempotency-key': 'e2e-2' });
    expect(unsigned.status).toBe(401);
    const timestamp = String(Math.floor(Date.now() / 1000));
    const reply = await revalidate(signed.url, body, {
      'idempotency-key': 'e2e-2',
      'x-isr-timestamp': timestamp,
      'x-isr-signature': signatureOf(SECRET, {
        timestamp,
        method: 'POST',
        target: '/_isr/revalidate',
        idempotencyKey: 'e2e-2',
        rawBody: body,
      }),
    });
    expect(reply.status).toBe(202);
  });
});
