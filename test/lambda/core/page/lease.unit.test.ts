/** The lease rules on the caller's clock, and how takes, seizes and releases read them. */
import { describe, expect, it } from '@jest/globals';
import { InMemoryCacheTable } from '../../../../lambda/adapters/cache-table/memory.js';
import { normaliseCacheKey } from '../../../../lambda/core/page/cache-key.js';
import {
  abandonedBodyOf,
  canStartRender,
  isBodyLeased,
  isLeaseLive,
  LOCK_TTL_BUFFER_SECONDS,
  lockTtlOf,
  releaseLease,
  seizeLease,
  tryTakeLease,
} from '../../../../lambda/core/page/lease.js';
import { bodyKeyOf } from '../../../../lambda/core/page/rows.js';

describe('lease rules on the caller clock', () => {
  it('holds a lease iff lease_expires_at > now', () => {
    expect(isLeaseLive({ expiresAt: 1000 }, 999)).toBe(true);
    expect(isLeaseLive({ expiresAt: 1000 }, 1000)).toBe(false);
  });

  it('starts a render only with more lease left than the clock-skew margin', () => {
    expect(canStartRender({ expiresAt: 1000 }, 994, 5)).toBe(true);
    expect(canStartRender({ expiresAt: 1000 }, 995, 5)).toBe(false);
  });
});

describe('taking, seizing and releasing a lease', () => {
  const input = { pk: 'CACHE#lease', now: 1_000, durationSeconds: 30, owner: 'a' };

  it('takes a free lease, and says who holds a live one', async () => {
    const table = new InMemoryCacheTable();
    const first = await tryTakeLease(table, input);
    expect('lease' in first && first.lease.expiresAt).toBe(1_030);
    expect(await tryTakeLease(table, { ...input, owner: 'b' })).toEqual({
      heldBy: { token: expect.any(String) as unknown as string, expiresAt: 1_030, owner: 'a' },
    });
    // Once it ran out on the caller's clock, it is free again.
    const later = await tryTakeLease(table, { ...input, now: 1_030, owner: 'b' });
    expect('lease' in later && later.lease.takenOver?.owner).toBe('a');
  });

  it('seizes a live lease for an operator; the holder cannot release it any more', async () => {
    const table = new InMemoryCacheTable();
    const taken = await tryTakeLease(table, input);
    const seized = await seizeLease(table, { ...input, owner: 'rollback:ops' });
    expect(seized.takenOver?.owner).toBe('a');
    expect('lease' in taken && (await releaseLease(table, taken.lease))).toBe(false);
    expect(await releaseLease(table, seized)).toBe(true);
  });

  it('releases best-effort: a failing release is logged and answered false', async () => {
    const warnings: string[] = [];
    const failing = { releaseLease: () => Promise.reject(new Error('throttled')) };
    const lease = { pk: 'CACHE#x', token: 't', expiresAt: 1 };
    const log = { sink: { warn: (message: string) => warnings.push(message) }, what: 'slot' };
    expect(await releaseLease(failing, lease, log)).toBe(false);
    expect(warnings).toEqual(['slot release failed; it expires on its own']);
  });
});

describe('what a LOCK row says of bodies', () => {
  const cacheKey = normaliseCacheKey({ rawPath: '/p' }, { allowedQueryParams: [] });

  it('names the body a taken-over holder may have left, and none when nobody was there', () => {
    const lease = { pk: cacheKey.pk, token: 'mine', expiresAt: 2 };
    const holder = { token: 'crashed', expiresAt: 1, owner: undefined };
    expect(abandonedBodyOf(cacheKey, { ...lease, takenOver: holder })).toBe(
      bodyKeyOf(cacheKey, 'crashed'),
    );
    expect(abandonedBodyOf(cacheKey, lease)).toBeUndefined();
  });

  it('keeps a body leased only while a live LOCK carries its token', () => {
    expect(isBodyLeased({ token: 't', expiresAt: 100 }, 't', 99)).toBe(true);
    expect(isBodyLeased({ token: 't', expiresAt: 100 }, 't', 100)).toBe(false);
    expect(isBodyLeased({ token: 'other', expiresAt: 100 }, 't', 99)).toBe(false);
    expect(isBodyLeased(undefined, 't', 99)).toBe(false);
  });

  it('keeps a LOCK row a week past its expiry before TTL may collect it', () => {
    expect(LOCK_TTL_BUFFER_SECONDS).toBe(7 * 86_400);
    expect(lockTtlOf(1_000)).toBe(1_000 + 7 * 86_400);
    expect(lockTtlOf(1_000, 10)).toBe(1_010);
  });
});
