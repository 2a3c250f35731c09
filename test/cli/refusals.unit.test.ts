/**
 * Every answer the revalidate endpoint can refuse a CLI call with, and no answer at all, says
 * what to do next (issue 35, item 6): run through `run()` as a person types the command, with
 * the endpoint's answer as it sends it (status, JSON body, Retry-After).
 */
import { describe, expect, it } from '@jest/globals';
import { run } from '../../cli/run.js';
import type { Target } from '../../cli/target.js';
import { TestClock } from '../helpers/clock.js';

const URL_LOCAL = 'http://localhost:3000/_isr/revalidate';
const EFFECT = `rv_${'ab'.repeat(16)}`;

interface Answer {
  readonly status: number;
  readonly body: unknown;
  readonly headers?: Record<string, string>;
}

/** `isr <argv>` against a target whose endpoint answers `answer` (or, `unreachable`, nothing). */
async function isr(
  argv: string[],
  answer: Answer | 'unreachable',
  options: { kind?: Target['kind']; env?: Record<string, string>; json?: boolean } = {},
) {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run([...argv, ...(options.json ? ['--json'] : [])], {
    out: (text) => out.push(text),
    err: (text) => err.push(text),
    env: options.env ?? {},
    clock: new TestClock(undefined, { autoAdvance: true }),
    fetch: () =>
      answer === 'unreachable'
        ? Promise.reject(
            new TypeError('fetch failed', {
              cause: Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:3000'), {
                code: 'ECONNREFUSED',
              }),
            }),
          )
        : Promise.resolve(
            new Response(JSON.stringify(answer.body), {
              status: answer.status,
              headers: answer.headers,
            }),
          ),
    target: () =>
      Promise.resolve({
        kind: options.kind ?? 'local',
        name: options.kind === 'stack' ? 'MySite' : '/srv/isr/.local',
        region: 'eu-west-1',
        revalidateUrl: URL_LOCAL,
        settings: {},
      } as unknown as Target),
  });
  return { code, out: out.join('\n'), err: err.join('\n') };
}

/** A stack call is SigV4-signed with the caller's credentials: these, from the environment. */
async function withCredentials<T>(call: () => Promise<T>): Promise<T> {
  process.env.AWS_ACCESS_KEY_ID = 'AKIDEXAMPLE';
  process.env.AWS_SECRET_ACCESS_KEY = 'wJalrXUtnFEMI/K7MDENG';
  try {
    return await call();
  } finally {
    delete process.env.AWS_ACCESS_KEY_ID;
    delete process.env.AWS_SECRET_ACCESS_KEY;
  }
}

const revalidate = ['revalidate', '--path', '/hello', '--key', 'k1'];
const status = ['revalidate', 'status', EFFECT];
/** The `next:` line under the error. */
const nextOf = (err: string) => /\n {2}next: (.*)$/m.exec(err)?.[1] ?? '';

describe("the CLI's refusals say what to do next", () => {
  it('401 missing-signature on npm start: set ISR_REVALIDATE_SECRET in this shell to the server value', async () => {
    const { code, err } = await isr(revalidate, {
      status: 401,
      body: { error: 'unauthorized', reason: 'missing-signature' },
    });
    expect(code).toBe(1);
    expect(err).toMatch(/^isr revalidate: revalidation refused: HTTP 401 \(missing-signature\)/);
    expect(nextOf(err)).toBe(
      'the endpoint requires a signature: set ISR_REVALIDATE_SECRET in this shell to the value npm start was started with (its ISR_REVALIDATE_SECRET)',
    );
  });

  it("401 signature-mismatch on a stack: this shell's secret is not the stack's", async () => {
    const { err } = await withCredentials(() =>
      isr(
        revalidate,
        { status: 401, body: { error: 'unauthorized', reason: 'signature-mismatch' } },
        { kind: 'stack', env: { ISR_REVALIDATE_SECRET: 'wrong' } },
      ),
    );
    expect(nextOf(err)).toMatch(
      /^ISR_REVALIDATE_SECRET in this shell is not the secret .*revalidateWebhookSecret$/,
    );
  });

  it('401 timestamp-out-of-range: the clock is off', async () => {
    const { err } = await isr(revalidate, {
      status: 401,
      body: { error: 'unauthorized', reason: 'timestamp-out-of-range' },
    });
    expect(nextOf(err)).toMatch(/clock is more than 300 s from the service's/);
  });

  it('403 from npm start on the LAN without a secret: restart it with one, set it here too', async () => {
    const { code, err } = await isr(revalidate, {
      status: 403,
      body: { error: 'revalidation-off', message: 'revalidation is off: …' },
    });
    expect(code).toBe(1);
    expect(nextOf(err)).toMatch(/^npm start listens beyond loopback without a secret: restart/);
  });

  it('403 from a function URL (AWS_IAM): grant lambda:InvokeFunctionUrl', async () => {
    const { err } = await withCredentials(() =>
      isr(revalidate, { status: 403, body: { Message: 'Forbidden' } }, { kind: 'stack' }),
    );
    expect(nextOf(err)).toMatch(/grant it lambda:InvokeFunctionUrl \(IsrService.grantRevalidate/);
  });

  it('404 of a status: check the effect id; 404 of a POST: the URL is wrong', async () => {
    const unknown = await isr(status, { status: 404, body: { error: 'not-found' } });
    expect(unknown.code).toBe(1);
    expect(nextOf(unknown.err)).toBe(
      `no revalidation has effect id ${EFFECT}: check the id its 202 printed (a status is kept 7 days)`,
    );
    const wrongUrl = await isr(revalidate, { status: 404, body: { message: 'Not Found' } });
    expect(nextOf(wrongUrl.err)).toMatch(/^nothing answers revalidations at that URL: restart/);
  });

  it('409 key reused with another body: a new key; 409 in-progress: the same key after Retry-After', async () => {
    const reused = await isr(revalidate, {
      status: 409,
      body: { error: 'idempotency-key-reused', diff: [] },
    });
    expect(reused.code).toBe(1);
    expect(nextOf(reused.err)).toMatch(/used before with another request .* without --key/);
    const running = await isr(revalidate, {
      status: 409,
      body: { error: 'in-progress' },
      headers: { 'retry-after': '7' },
    });
    expect(nextOf(running.err)).toBe(
      'a call with this key is still being applied: run the same command again with --key k1 in 7 s (one key is applied at most once)',
    );
  });

  it('429: the function is at its concurrency limit, retry with the same key', async () => {
    const { code, err } = await isr(revalidate, {
      status: 429,
      body: { Message: 'Rate exceeded' },
    });
    expect(code).toBe(1);
    expect(nextOf(err)).toMatch(/^the revalidate function is at its concurrency limit .* --key k1/);
  });

  it('503: nothing kept, retry with the same key after Retry-After', async () => {
    const { err } = await isr(revalidate, {
      status: 503,
      body: { error: 'unavailable' },
      headers: { 'retry-after': '2' },
    });
    expect(nextOf(err)).toBe(
      'the service could not apply it now and kept nothing: run the same command again with --key k1 in 2 s (one key is applied at most once)',
    );
  });

  it('unreachable: exit 3, is npm start still running?', async () => {
    const { code, err } = await isr(revalidate, 'unreachable');
    expect(code).toBe(3);
    expect(err).toMatch(/^isr revalidate: cannot reach http:\/\/localhost:3000\/_isr\/revalidate/);
    expect(nextOf(err)).toMatch(/\(ECONNREFUSED\): is npm start still running\?/);
  });

  it('--json carries the next step as `next`; a 202 has none (negative control)', async () => {
    const refused = await isr(revalidate, { status: 429, body: {} }, { json: true });
    expect(JSON.parse(refused.err)).toMatchObject({
      error: 'OperationError',
      next: expect.stringMatching(/concurrency limit/) as unknown,
    });
    const accepted = await isr(revalidate, { status: 202, body: { effect_id: EFFECT } });
    expect(accepted.code).toBe(0);
    expect(accepted.err).toBe('');
  });
});
