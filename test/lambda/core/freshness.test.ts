import { describe, expect, it } from '@jest/globals';
import { isFresh, isLeaseLive, secondsUntilStale } from '../../../lambda/core/freshness.js';

describe('freshness', () => {
  const generation = { generatedAt: 1000, revalidateSeconds: 60 };

  it('is fresh strictly before generated_at + revalidate_seconds', () => {
    expect(isFresh(generation, 1000)).toBe(true);
    expect(isFresh(generation, 1059)).toBe(true);
    expect(isFresh(generation, 1060)).toBe(false);
  });

  it('counts the seconds of freshness left, never below zero', () => {
    expect(secondsUntilStale(generation, 1000)).toBe(60);
    expect(secondsUntilStale(generation, 1059)).toBe(1);
    expect(secondsUntilStale(generation, 5000)).toBe(0);
  });

  it('holds a lease iff lease_expires_at > now', () => {
    expect(isLeaseLive({ expiresAt: 1000 }, 999)).toBe(true);
    expect(isLeaseLive({ expiresAt: 1000 }, 1000)).toBe(false);
  });
});
