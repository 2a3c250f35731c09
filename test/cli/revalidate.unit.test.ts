/**
 * The revalidation request the CLI sends: the body contract, the webhook HMAC and the SigV4
 * signature, each checked by recomputing it here independently (node:crypto, no SDK), with a
 * tampered request as the negative control.
 */
import { describe, expect, it } from '@jest/globals';
import {
  buildRevalidateRequest,
  buildStatusRequest,
  sendRevalidate,
} from '../../cli/commands/revalidate.js';
import { run } from '../../cli/run.js';
import { signatureRefusal } from '../../lambda/core/revalidate/webhook-signature.js';
import type { Target } from '../../cli/target.js';
import { TestClock } from '../helpers/clock.js';
import { sigV4Holds } from '../helpers/sigv4.js';

const URL_IAM = 'https://abc123.lambda-url.eu-west-1.on.aws/';
const now = new Date('2026-11-24T13:00:00Z');
const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG' };
const input = {
  paths: ['/blog/x'],
  tags: ['post:42'],
  tenant: 'acme',
  mode: 'expire',
  regenerate: true,
  idempotencyKey: 'key-1',
} as const;

describe('the revalidation request', () => {
  it('sends the body contract with the Idempotency-Key, and a UUID when no key is given', async () => {
    const request = await buildRevalidateRequest('http://127.0.0.1:3111/_isr/revalidate', input, {
      now,
    });
    expect(JSON.parse(request.body)).toEqual({
      paths: ['/blog/x'],
      tags: ['post:42'],
      tenant: 'acme',
      mode: 'expire',
      regenerate: true,
    });
    expect(request.headers['idempotency-key']).toBe('key-1');
    expect(request.headers.authorization).toBeUndefined();
    const unkeyed = await buildRevalidateRequest(URL_IAM, { paths: ['/a'], tags: [] }, { now });
    expect(unkeyed.headers['idempotency-key']).toMatch(/^[0-9a-f-]{36}$/);
    expect(JSON.parse(unkeyed.body)).toEqual({ paths: ['/a'] });
  });

  it('signs the webhook HMAC over the one signed string, which the endpoint verifies', async () => {
    const request = await buildRevalidateRequest(`${URL_IAM}?x=1`, input, {
      hmacSecret: 's3cret',
      now,
    });
    const timestamp = request.headers['x-isr-timestamp'] ?? '';
    expect(timestamp).toBe(String(now.getTime() / 1000));
    const received = {
      signature: request.headers['x-isr-signature'],
      timestamp,
      method: 'POST',
      target: `${new URL(URL_IAM).pathname}?x=1`,
      idempotencyKey: 'key-1',
      rawBody: request.body,
    };
    const verify = (changed: Partial<typeof received>) =>
      signatureRefusal({ ...received, ...changed }, 's3cret', Number(timestamp), 300);
    expect(verify({})).toBeUndefined();
    expect(verify({ rawBody: request.body.replace('42', '43') })).toBe('signature-mismatch');
    expect(verify({ idempotencyKey: 'key-2' })).toBe('signature-mismatch');
    expect(verify({ target: new URL(URL_IAM).pathname })).toBe('signature-mismatch');
  });

  it('signs with SigV4 for the lambda service, covering the body, the key and the HMAC headers', async () => {
    const request = await buildRevalidateRequest(URL_IAM, input, {
      hmacSecret: 's3cret',
      sigv4: { region: 'eu-west-1', credentials },
      now,
    });
    expect(request.headers.authorization).toMatch(
      /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/20261124\/eu-west-1\/lambda\/aws4_request, /,
    );
    expect(request.headers.authorization).toMatch(
      /SignedHeaders=[^,]*idempotency-key[^,]*x-isr-signature/,
    );
    expect(sigV4Holds(request, credentials.secretAccessKey)).toBe(true);
    // Negative controls: another body, another key or another secret no longer verify.
    expect(
      sigV4Holds(
        { ...request, body: request.body.replace('42', '43') },
        credentials.secretAccessKey,
      ),
    ).toBe(false);
    expect(
      sigV4Holds(
        { ...request, headers: { ...request.headers, 'idempotency-key': 'key-2' } },
        credentials.secretAccessKey,
      ),
    ).toBe(false);
    expect(sigV4Holds(request, 'not-the-secret')).toBe(false);
  });

  it('posts it without a Host header and reads the receipt and the replay flag', async () => {
    const request = await buildRevalidateRequest(URL_IAM, input, { now });
    let sent: RequestInit | undefined;
    const fetcher = ((_url: string, init: RequestInit) => {
      sent = init;
      return Promise.resolve(
        new Response('{"effect_id":"e1"}', {
          status: 202,
          headers: { 'idempotent-replayed': 'true' },
        }),
      );
    }) as unknown as typeof fetch;
    const result = await sendRevalidate(request, fetcher);
    expect(result).toEqual({
      status: 202,
      idempotencyKey: 'key-1',
      replayed: true,
      receipt: { effect_id: 'e1' },
    });
    expect(Object.keys(sent?.headers ?? {})).not.toContain('host');
    expect(sent?.body).toBe(request.body);
  });
});

describe('isr revalidate', () => {
  const target = (kind: Target['kind']): Target =>
    ({
      kind,
      name: 'FaceTheoryIsr',
      region: 'eu-west-1',
      revalidateUrl: URL_IAM,
      settings: {},
    }) as unknown as Target;

  async function revalidate(kind: Target['kind'], status: number, argv: string[] = []) {
    const out: string[] = [];
    const err: string[] = [];
    const requests: { url: string; init: RequestInit }[] = [];
    const code = await run(
      ['revalidate', '--path', '/blog/x', '--tag', 'post:42', '--key', 'k1', ...argv],
      {
        out: (text) => out.push(text),
        err: (text) => err.push(text),
        env: {},
        fetch: ((url: string, init: RequestInit) => {
          requests.push({ url, init });
          return Promise.resolve(new Response(JSON.stringify({ error: 'conflict' }), { status }));
        }) as unknown as typeof fetch,
        target: () => Promise.resolve(target(kind)),
      },
    );
    return { code, out: out.join('\n'), err: err.join('\n'), requests };
  }

  it('signs a deployed stack request with the caller credentials and exits 1 on a refusal, printing the answer', async () => {
    process.env.AWS_ACCESS_KEY_ID = credentials.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = credentials.secretAccessKey;
    try {
      const { code, out, requests } = await revalidate('stack', 409);
      expect(code).toBe(1);
      expect(out).toMatch(/HTTP 409/);
      expect(out).toMatch(/"error": "conflict"/);
      const headers = requests[0]?.init.headers as Record<string, string>;
      expect(headers.authorization).toMatch(/Credential=AKIDEXAMPLE\//);
      expect(headers['idempotency-key']).toBe('k1');
    } finally {
      delete process.env.AWS_ACCESS_KEY_ID;
      delete process.env.AWS_SECRET_ACCESS_KEY;
    }
  });

  it('sends a local request unsigned, exits 0 on a 202, and refuses a bad mode before sending', async () => {
    const ok = await revalidate('local', 202);
    expect(ok.code).toBe(0);
    expect((ok.requests[0]?.init.headers as Record<string, string>).authorization).toBeUndefined();
    const bad = await revalidate('local', 202, ['--mode', 'later']);
    expect(bad.code).toBe(2);
    expect(bad.requests).toHaveLength(0);
  });

  it('previews with --dry-run: the body says dry_run, and the answer is printed (issue 36)', async () => {
    const dry = await revalidate('local', 200, ['--dry-run']);
    expect(dry.code).toBe(0);
    expect(JSON.parse(dry.requests[0]?.init.body as string)).toMatchObject({ dry_run: true });
    const applied = await revalidate('local', 202);
    expect(JSON.parse(applied.requests[0]?.init.body as string)).not.toHaveProperty('dry_run');
  });
});

describe('isr revalidate status', () => {
  const effectId = `rv_${'ab'.repeat(16)}`;

  it('signs the GET over its own path: the endpoint verifies it, and not for another effect', async () => {
    const request = await buildStatusRequest(URL_IAM, effectId, { hmacSecret: 's3cret', now });
    expect(request).toMatchObject({ method: 'GET', url: `${URL_IAM}${effectId}`, body: '' });
    const received = {
      signature: request.headers['x-isr-signature'],
      timestamp: request.headers['x-isr-timestamp'],
      method: 'GET',
      target: `/${effectId}`,
      idempotencyKey: undefined,
      rawBody: '',
    };
    const at = now.getTime() / 1000;
    expect(signatureRefusal(received, 's3cret', at, 300)).toBeUndefined();
    expect(
      signatureRefusal({ ...received, target: `/rv_${'cd'.repeat(16)}` }, 's3cret', at, 300),
    ).toBe('signature-mismatch');
    const local = await buildStatusRequest('http://127.0.0.1:3111/_isr/revalidate', effectId, {
      now,
    });
    expect(local.url).toBe(`http://127.0.0.1:3111/_isr/revalidate/${effectId}`);
  });

  it('signs the GET with SigV4 on a stack', async () => {
    const request = await buildStatusRequest(URL_IAM, effectId, {
      sigv4: { region: 'eu-west-1', credentials },
      now,
    });
    expect(sigV4Holds(request, credentials.secretAccessKey)).toBe(true);
    expect(sigV4Holds({ ...request, url: `${URL_IAM}rv_other` }, credentials.secretAccessKey)).toBe(
      false,
    );
  });

  async function status(
    argv: string[],
    answer: { status: number; body: unknown },
    ...later: { status: number; body: unknown }[]
  ) {
    const out: string[] = [];
    const requests: { url: string; init: RequestInit }[] = [];
    const answers = [answer, ...later];
    const clock = new TestClock(undefined, { autoAdvance: true });
    const code = await run(['revalidate', 'status', ...argv], {
      out: (text) => out.push(text),
      err: (text) => out.push(text),
      env: {},
      clock,
      fetch: ((url: string, init: RequestInit) => {
        requests.push({ url, init });
        const next = answers.length > 1 ? answers.shift() : answers[0];
        return Promise.resolve(new Response(JSON.stringify(next?.body), next));
      }) as unknown as typeof fetch,
      target: () =>
        Promise.resolve({ kind: 'local', name: 'local', revalidateUrl: URL_IAM } as Target),
    });
    return { code, out: out.join('\n'), requests };
  }

  it('prints the progress and the status, exits 1 on a 404 and 2 on a malformed id', async () => {
    const done = await status([effectId], {
      status: 200,
      body: { effect_id: effectId, state: 'done', counts: { pages: 4, marked: 4 } },
    });
    expect(done.code).toBe(0);
    expect(done.out).toMatch(/done {2}\[#{20}\] 4\/4 pages marked/);
    expect(done.requests[0]).toMatchObject({
      url: `${URL_IAM}${effectId}`,
      init: { method: 'GET' },
    });
    const unknown = await status([effectId], { status: 404, body: { error: 'not-found' } });
    expect(unknown.code).toBe(1);
    const malformed = await status(['rv_nope'], { status: 200, body: {} });
    expect(malformed.code).toBe(2);
    expect(malformed.requests).toHaveLength(0);
  });

  it('--wait polls until done, a progress line each time, on the clock port', async () => {
    // As the endpoint answers: `pages` found so far, against what the 202 expected.
    const counts = (marked: number, exact = true) => ({
      pages: marked,
      marked,
      expected_pages: 10,
      expected_exact: exact,
    });
    const marking = (marked: number, exact = true) => ({
      status: 200,
      body: { state: 'marking', counts: counts(marked, exact) },
    });
    const done = { status: 200, body: { state: 'done', counts: counts(10) } };
    const waited = await status([effectId, '--wait'], marking(0), marking(5), done);
    expect(waited.code).toBe(0);
    expect(waited.requests).toHaveLength(3);
    expect(waited.out).toMatch(/marking {2}\[#{10}-{10}\] 5\/10 pages marked/);
    expect(waited.out).toMatch(/done {2}\[#{20}\] 10\/10/);
    const counted = await status([effectId, '--wait'], marking(5, false), done);
    expect(counted.out).toMatch(/5\/10\+ pages marked/); // a tag had more than were counted
    const once = await status([effectId], marking(0), done);
    expect(once.requests).toHaveLength(1);
  });
});
