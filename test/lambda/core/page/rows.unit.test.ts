/** Row keys: a body key names its page and lease, and reads back to them. */
import { describe, expect, it } from '@jest/globals';
import { bodyKeyOf, bodyOwnerOf, partitionKey } from '../../../../lambda/core/page/rows.js';

describe('bodyOwnerOf', () => {
  it('derives the page, tenant and lease token from a body key, with or without a tenant', () => {
    const key = { tenant: 'acme', hash: 'h1' } as Parameters<typeof bodyKeyOf>[0];
    expect(bodyOwnerOf(bodyKeyOf(key, 't1'), 'pages/')).toEqual({
      pk: partitionKey('acme', 'h1'),
      tenant: 'acme',
      token: 't1',
    });
    expect(bodyOwnerOf('pages/_/h2/t2', 'pages/')).toEqual({
      pk: 'CACHE#h2',
      tenant: undefined,
      token: 't2',
    });
  });

  it('refuses keys that are not body keys', () => {
    for (const key of ['other/_/h/t', 'pages/_/h', 'pages/_/h/t/x', 'pages/a#b/h/t', 'pages/_//t'])
      expect(bodyOwnerOf(key, 'pages/')).toBeUndefined();
  });
});
