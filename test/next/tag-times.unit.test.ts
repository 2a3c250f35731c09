import { afterEach, describe, expect, it } from '@jest/globals';
import { signatureRefusal } from '../../lambda/core/revalidate/webhook-signature.js';
import { DEFAULT_RETRY } from '../../next/client.js';
import { loadAdapterConfig } from '../../next/config.js';
import { serviceTagTimesRead, TagTimes, type ServiceTagTimes } from '../../next/tag-times.js';
import { closeEndpoints, NOW, recordingEndpoint } from '../helpers/next-adapter.js';
import { serviceTagOf } from '../../next/tags.js';

const KEPT_MS = 7 * 86_400_000;

/**
 * TagTimes over a fake service: `times` is the service's record, every read is recorded (its
 * tags, and the time it started); time moves only when the test says.
 */
function setup(options: { cacheMs?: number; reuseMs?: number; fail?: boolean } = {}) {
  let now = 1_000_000;
  const times = new Map<string, number>();
  const reads: { tags: string[]; at: number }[] = [];
  const errors: unknown[] = [];
  const tagTimes = new TagTimes({
    now: () => now,
    read: (tags) => {
      reads.push({ tags: [...tags], at: now });
      if (options.fail === true) return Promise.reject(new Error('503'));
      const answer: ServiceTagTimes = {
        revalidated_at_ms: Object.fromEntries(
          tags.flatMap((t) => (times.has(t) ? [[t, times.get(t)]] : [])),
        ),
        cache_ms: options.cacheMs ?? 250,
        skew_margin_ms: 2_000,
        kept_ms: KEPT_MS,
      };
      return Promise.resolve(answer);
    },
    onReadError: (error) => errors.push(error),
    ...(options.reuseMs === undefined ? {} : { reuseMs: options.reuseMs }),
  });
  return {
    tagTimes,
    times,
    reads,
    errors,
    now: () => now,
    advance: (ms: number) => (now += ms),
  };
}

describe('TagTimes', () => {
  it('asks the service once for every tag checked in one turn of the event loop', async () => {
    const t = setup();
    const made = t.now() - 10;
    const answers = await Promise.all([
      t.tagTimes.isCurrent(['posts', '_N_T_/isr'], made),
      t.tagTimes.isCurrent(['posts', 'Authors'], made),
    ]);
    expect(answers).toEqual([true, true]);
    // As the service keys them: lower-cased.
    expect(t.reads).toEqual([{ tags: ['posts', '_n_t_/isr', 'authors'], at: t.now() }]);
  });

  it('reuses a read for 250 ms from when it started, then reads again', async () => {
    const t = setup();
    const made = t.now() - 10;
    await t.tagTimes.isCurrent(['posts'], made);
    t.advance(249);
    await t.tagTimes.isCurrent(['posts'], made);
    expect(t.reads).toHaveLength(1);
    t.advance(1);
    await t.tagTimes.isCurrent(['posts'], made);
    expect(t.reads).toHaveLength(2);
  });

  it('reuses a read no longer than the service says, and never past 250 ms', async () => {
    const brief = setup({ cacheMs: 0 });
    await brief.tagTimes.isCurrent(['posts'], brief.now());
    await brief.tagTimes.isCurrent(['posts'], brief.now());
    expect(brief.reads).toHaveLength(2);
    const long = setup({ cacheMs: 5_000 });
    await long.tagTimes.isCurrent(['posts'], long.now());
    long.advance(250);
    await long.tagTimes.isCurrent(['posts'], long.now());
    expect(long.reads).toHaveLength(2);
  });

  it("treats an entry made up to the service's time plus its skew margin as stale", async () => {
    const t = setup();
    t.times.set('posts', t.now());
    expect(await t.tagTimes.isCurrent(['posts'], t.now() - 1)).toBe(false);
    expect(await t.tagTimes.isCurrent(['posts'], t.now() + 2_000)).toBe(false);
    expect(await t.tagTimes.isCurrent(['posts'], t.now() + 2_001)).toBe(true);
    expect(await t.tagTimes.isCurrent(['other'], t.now() - 1)).toBe(true);
  });

  it("knows this instance's own revalidation at once, before the service does", async () => {
    const t = setup();
    const made = t.now() - 10;
    expect(await t.tagTimes.isCurrent(['Posts'], made)).toBe(true);
    t.tagTimes.recordLocal(['posts'], t.now());
    expect(await t.tagTimes.isCurrent(['Posts'], made)).toBe(false);
    expect(await t.tagTimes.isCurrent(['Posts'], t.now() + 1)).toBe(true);
  });

  it('after a render the service asked for starts, trusts no read that started before it', async () => {
    const t = setup();
    const made = t.now() - 10;
    await t.tagTimes.isCurrent(['posts'], made);
    t.times.set('posts', t.now() + 5); // revalidated right after that read
    t.advance(10);
    expect(await t.tagTimes.isCurrent(['posts'], made)).toBe(true); // the reused read
    t.tagTimes.requireFreshReads();
    expect(await t.tagTimes.isCurrent(['posts'], made)).toBe(false);
    expect(t.reads).toHaveLength(2);
  });

  it('control: a read reused longer than the 202 waits trusts a revalidated entry', async () => {
    const t = setup({ reuseMs: 1_000 });
    const made = t.now() - 10;
    await t.tagTimes.isCurrent(['posts'], made);
    t.times.set('posts', t.now() + 5);
    t.advance(300); // past the service's 250 ms wait: a request after its 202
    expect(await t.tagTimes.isCurrent(['posts'], made)).toBe(true);
  });

  it('says no when the service cannot be read (fail closed), and says why', async () => {
    const t = setup({ fail: true });
    expect(await t.tagTimes.isCurrent(['posts'], t.now())).toBe(false);
    expect(t.errors).toHaveLength(1);
  });

  it('says no for an entry older than the service keeps tag times', async () => {
    const t = setup();
    expect(await t.tagTimes.isCurrent(['posts'], t.now() - 60_000)).toBe(true);
    expect(await t.tagTimes.isCurrent(['posts'], t.now() - KEPT_MS)).toBe(false);
  });

  it('reads at most 100 tags a request, in parallel', async () => {
    const t = setup();
    const tags = Array.from({ length: 150 }, (_, i) => `tag-${i}`);
    expect(await t.tagTimes.isCurrent(tags, t.now())).toBe(true);
    expect(t.reads.map((read) => read.tags.length)).toEqual([100, 50]);
  });

  it("asks with the service's form of a tag the CDN cannot carry", async () => {
    const t = setup();
    await t.tagTimes.isCurrent(['my tag'], t.now());
    expect(t.reads[0]?.tags).toEqual([serviceTagOf('my tag')]);
  });

  it('asks nothing while building: only its own revalidations count', async () => {
    const reads: unknown[] = [];
    const offline = new TagTimes({
      now: () => 5_000,
      offline: true,
      read: (tags) => (reads.push(tags), Promise.reject(new Error('no service'))),
    });
    expect(await offline.isCurrent(['posts'], 4_000)).toBe(true);
    offline.recordLocal(['posts'], 4_500);
    expect(await offline.isCurrent(['posts'], 4_000)).toBe(false);
    expect(reads).toEqual([]);
  });
});

describe('serviceTagTimesRead: the signed read of the service', () => {
  afterEach(() => closeEndpoints());

  const clientOf = (env: Record<string, string>) => {
    const config = loadAdapterConfig(env);
    return {
      config,
      fetch: globalThis.fetch,
      sleep: () => Promise.resolve(),
      random: () => 0.5,
      now: () => NOW,
      sign: undefined,
      log: () => undefined,
      retry: DEFAULT_RETRY,
    };
  };
  const ANSWER = {
    revalidated_at_ms: { posts: 5 },
    cache_ms: 250,
    skew_margin_ms: 2_000,
    kept_ms: 1,
  };

  it('POSTs the tags (and the tenant) under the endpoint, HMAC-signed with no Idempotency-Key', async () => {
    const endpoint = await recordingEndpoint([{ status: 200, body: JSON.stringify(ANSWER) }]);
    const read = serviceTagTimesRead(
      clientOf({
        ISR_REVALIDATE_URL: `${endpoint.url}/_isr/revalidate/`,
        ISR_REVALIDATE_SECRET: 'whsec',
        ISR_REVALIDATE_TENANT: 'acme',
      }),
    );
    expect(await read(['posts', '_n_t_/isr'])).toEqual(ANSWER);
    const [request] = endpoint.received;
    expect(request?.target).toBe('/_isr/revalidate/tag-times');
    expect(JSON.parse(request?.body ?? '')).toEqual({
      tags: ['posts', '_n_t_/isr'],
      tenant: 'acme',
    });
    expect(request?.headers['idempotency-key']).toBeUndefined();
    const seen = {
      signature: request?.headers['x-isr-signature'],
      timestamp: request?.headers['x-isr-timestamp'],
      method: request?.method ?? '',
      target: request?.target ?? '',
      idempotencyKey: undefined,
      rawBody: request?.body ?? '',
    };
    expect(signatureRefusal(seen, 'whsec', NOW.getTime() / 1000, 300)).toBeUndefined();
  });

  it.each([
    ['a refusal', { status: 401, body: '{"error":"unauthorized"}' }],
    ['a 503', { status: 503, body: '{}' }],
    ['an answer without times', { status: 200, body: '{"cache_ms":250}' }],
    [
      'a time that is not a number',
      { status: 200, body: JSON.stringify({ ...ANSWER, revalidated_at_ms: { a: 'x' } }) },
    ],
  ])('fails on %s (its entries are then treated as stale)', async (_, answer) => {
    const endpoint = await recordingEndpoint([answer]);
    const read = serviceTagTimesRead(
      clientOf({ ISR_REVALIDATE_URL: `${endpoint.url}/_isr/revalidate` }),
    );
    await expect(read(['posts'])).rejects.toThrow();
  });
});
