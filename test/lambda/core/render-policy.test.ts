import { describe, expect, it } from '@jest/globals';
import { renderDisposition } from '../../../lambda/core/render-policy.js';

describe('renderDisposition', () => {
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
    [400, 'reject'],
    [401, 'reject'],
    [403, 'reject'],
    [304, 'reject'],
    [100, 'reject'],
  ])('treats %i as %s', (status, disposition) => {
    expect(renderDisposition(status)).toBe(disposition);
  });
});
