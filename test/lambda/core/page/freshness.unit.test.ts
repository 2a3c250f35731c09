import { describe, expect, it } from '@jest/globals';
import { isAnswered, isFresh, secondsUntilStale } from '../../../../lambda/core/page/freshness.js';

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
});

describe('isAnswered: the skip rule', () => {
  const meta = { s3Key: 'k1', generatedAt: 1000, revalidateSeconds: 60 };

  it('nothing answers without a published generation', () => {
    expect(isAnswered(undefined, 1000, { kind: 'intent' })).toBe(false);
    expect(isAnswered(undefined, 1000, { kind: 'page' })).toBe(false);
  });

  it('an intent is answered by a fresh generation', () => {
    expect(isAnswered(meta, 1059, { kind: 'intent' })).toBe(true);
    expect(isAnswered(meta, 1060, { kind: 'intent' })).toBe(false);
  });

  it('an intent is answered by a stale generation newer than the one it saw', () => {
    expect(isAnswered(meta, 2000, { kind: 'intent', observedGeneratedAt: 999 })).toBe(true);
    expect(isAnswered(meta, 2000, { kind: 'intent', observedGeneratedAt: 1000 })).toBe(false);
  });

  it('a waiting viewer is answered by any generation but the broken one', () => {
    expect(isAnswered(meta, 5000, { kind: 'page' })).toBe(true);
    expect(isAnswered(meta, 1000, { kind: 'page', brokenBodyKey: 'k1' })).toBe(false);
    expect(isAnswered(meta, 1000, { kind: 'page', brokenBodyKey: 'k0' })).toBe(true);
  });
});
