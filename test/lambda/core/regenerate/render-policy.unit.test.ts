import { describe, expect, it } from '@jest/globals';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import {
  ErrorKind,
  failureOf,
  RenderRefusedError,
  RenderRetryableError,
} from '../../../../lambda/core/errors.js';
import type { RenderResult } from '../../../../lambda/core/page/model.js';
import { admitPage, statusDisposition } from '../../../../lambda/core/regenerate/render-policy.js';

const policy = { maxBodyBytes: 1024, defaultRevalidateSeconds: 60 };
const page = (extra: Partial<RenderResult> = {}): RenderResult => ({ ...htmlPage('p'), ...extra });
const refusalOf = (result: RenderResult) => {
  try {
    admitPage(result, policy);
  } catch (error) {
    return failureOf(error);
  }
  return undefined;
};

describe('statusDisposition', () => {
  it.each([
    [200, 'publish'],
    [204, 'publish'],
    [301, 'publish'],
    [308, 'publish'],
    [404, 'publish'],
    [410, 'publish'],
    [500, 'retry'],
    [503, 'retry'],
    [429, 'retry'],
    [408, 'retry'],
    [400, 'refuse'],
    [401, 'refuse'],
    [403, 'refuse'],
    [304, 'refuse'],
    [100, 'refuse'],
  ])('treats %i as %s', (status, disposition) => {
    expect(statusDisposition(status)).toBe(disposition);
  });
});

describe('admitPage', () => {
  it('retries what may pass and refuses what never will, by kind', () => {
    expect(() => admitPage(page({ status: 503 }), policy)).toThrow(RenderRetryableError);
    expect(refusalOf(page({ status: 403 }))).toMatchObject({
      kind: ErrorKind.Terminal,
      code: 'refused:status',
    });
  });

  it.each([
    ['private', 200],
    ['no-store', 200],
    ['public, no-store', 404],
    ['private, no-store', 302],
    ['Private', 301],
    ['no-cache', 200],
  ])('does not store a page marked %s whatever its status (%i)', (cacheControl, status) => {
    expect(refusalOf(page({ status, headers: { 'cache-control': cacheControl } }))).toMatchObject({
      kind: ErrorKind.Terminal,
      code: 'refused:uncacheable',
    });
  });

  it('does not mistake other directives for private, no-store or no-cache', () => {
    expect(
      refusalOf(
        page({ headers: { 'cache-control': 'must-revalidate, s-maxage=5, x-private-ish=1' } }),
      ),
    ).toBeUndefined();
  });

  it('refuses a body over the limit', () => {
    expect(() => admitPage(page({ body: new Uint8Array(1025) }), policy)).toThrow(
      RenderRefusedError,
    );
    expect(refusalOf(page({ body: new Uint8Array(1025) }))?.code).toBe('refused:too-large');
  });

  it('classes an answer not stored as pass, or static when immutable', () => {
    const notStored = (result: RenderResult) => {
      try {
        admitPage(result, policy);
      } catch (error) {
        return error as RenderRefusedError;
      }
      return undefined;
    };
    const json = page({ contentType: 'application/json' });
    expect(notStored(json)).toMatchObject({ reason: 'no-freshness', trafficClass: 'pass' });
    const asset = page({ headers: { 'cache-control': 'public, max-age=31536000, immutable' } });
    expect(notStored(asset)).toMatchObject({ reason: 'immutable', trafficClass: 'static' });
    expect(notStored(page({ body: new Uint8Array(1025) }))?.trafficClass).toBe('pass');
  });

  it('takes the freshness from the renderer, else s-maxage, else max-age, else the default', () => {
    const cc = (value: string) => page({ headers: { 'cache-control': value } });
    expect(
      admitPage(page({ revalidateSeconds: 7, headers: { 'cache-control': 's-maxage=9' } }), policy)
        .revalidateSeconds,
    ).toBe(7);
    expect(admitPage(cc('max-age=3, s-maxage=9'), policy).revalidateSeconds).toBe(9);
    expect(admitPage(cc('max-age=3'), policy).revalidateSeconds).toBe(3);
    expect(admitPage(cc('public, max-age=0'), policy).revalidateSeconds).toBe(60);
    expect(admitPage(page(), policy).revalidateSeconds).toBe(60);
    expect(admitPage(page({ revalidateSeconds: 0 }), policy).revalidateSeconds).toBe(1);
  });

  it('strips Set-Cookie from the page it admits and names the cookies, never their values', () => {
    const admitted = admitPage(page({ setCookies: ['session=s3cr3t; HttpOnly', 'ab=2'] }), policy);
    expect(admitted.setCookies).toBeUndefined();
    expect(admitted.strippedCookies).toEqual(['session', 'ab']);
    expect(JSON.stringify(admitted)).not.toContain('s3cr3t');
  });

  it('refuses a page that sets a cookie when the policy says so', () => {
    expect(refusalOf({ ...page({ setCookies: ['session=1'] }) })).toBeUndefined();
    const refusing = { ...policy, setCookie: 'refuse' as const };
    expect(() => admitPage(page({ setCookies: ['session=1'] }), refusing)).toThrow(
      RenderRefusedError,
    );
    expect(admitPage(page(), refusing).strippedCookies).toEqual([]);
  });
});
