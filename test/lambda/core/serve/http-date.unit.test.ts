import { describe, expect, it } from '@jest/globals';
import { formatHttpDate, parseHttpDate } from '../../../../lambda/core/serve/http-date.js';

const NOW = Date.UTC(2027, 0, 15);
const NOV_6_1994 = Date.UTC(1994, 10, 6, 8, 49, 37);

describe('HTTP-dates (RFC 9110 §5.6.7)', () => {
  it('reads the three forms the RFC names', () => {
    expect(parseHttpDate('Sun, 06 Nov 1994 08:49:37 GMT', NOW)).toBe(NOV_6_1994);
    expect(parseHttpDate('Sunday, 06-Nov-94 08:49:37 GMT', NOW)).toBe(NOV_6_1994);
    expect(parseHttpDate('Sun Nov  6 08:49:37 1994', NOW)).toBe(NOV_6_1994);
    expect(parseHttpDate('Sun Nov 06 08:49:37 1994', NOW)).toBe(NOV_6_1994);
  });

  it('writes IMF-fixdate, which it reads back', () => {
    expect(formatHttpDate(NOV_6_1994 / 1000)).toBe('Sun, 06 Nov 1994 08:49:37 GMT');
    expect(parseHttpDate(formatHttpDate(1_800_000_000), NOW)).toBe(1_800_000_000_000);
  });

  it('reads an RFC 850 two-digit year as the year within 50 of now', () => {
    expect(parseHttpDate('Friday, 01-Jan-77 00:00:00 GMT', NOW)).toBe(Date.UTC(2077, 0, 1));
    expect(parseHttpDate('Sunday, 01-Jan-78 00:00:00 GMT', NOW)).toBe(Date.UTC(1978, 0, 1));
    expect(parseHttpDate('Monday, 01-Jan-01 00:00:00 GMT', NOW)).toBe(Date.UTC(2001, 0, 1));
  });

  it.each([
    '2099',
    '3000-01-01',
    '2027-01-15T00:00:00Z',
    '1800000000',
    'Sun, 06 Nov 1994 08:49:37 +0000',
    'Sun, 06 Nov 1994 08:49:37 UTC',
    'Sun, 6 Nov 1994 08:49:37 GMT',
    'sun, 06 nov 1994 08:49:37 gmt',
    'Sun, 06 Nov 94 08:49:37 GMT',
    'Sunday, 06-Nov-1994 08:49:37 GMT',
    'Sun, 31 Feb 1994 08:49:37 GMT',
    'Sun, 06 Nov 1994 24:00:00 GMT',
    'Sun, 06 Nov 1994 08:60:00 GMT',
    'Sun, 06 Nov 1994 08:49:37 GMT, Sun, 06 Nov 1994 08:49:37 GMT',
    '',
  ])('is not a date: %j', (text) => {
    expect(parseHttpDate(text, NOW)).toBeUndefined();
  });
});
