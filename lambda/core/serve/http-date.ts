/**
 * HTTP-dates (RFC 9110 §5.6.7), written and read in one place. Only the three forms the RFC
 * names count: IMF-fixdate (`Sun, 06 Nov 1994 08:49:37 GMT`), the obsolete RFC 850 form
 * (`Sunday, 06-Nov-94 08:49:37 GMT`) and asctime (`Sun Nov  6 08:49:37 1994`). Anything else
 * (`2099`, `3000-01-01`, what `Date.parse` would guess at) is not a date to a validator.
 */

const DAYS = 'Mon|Tue|Wed|Thu|Fri|Sat|Sun';
const LONG_DAYS = 'Monday|Tuesday|Wednesday|Thursday|Friday|Saturday|Sunday';
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const MONTH = MONTHS.join('|');
const TIME = '(\\d{2}):(\\d{2}):(\\d{2})';

/** day, month, year, hour, minute, second as captured by each form. */
const IMF_FIXDATE = new RegExp(`^(?:${DAYS}), (\\d{2}) (${MONTH}) (\\d{4}) ${TIME} GMT$`);
const RFC850_DATE = new RegExp(`^(?:${LONG_DAYS}), (\\d{2})-(${MONTH})-(\\d{2}) ${TIME} GMT$`);
/** month, day, hour, minute, second, year. */
const ASCTIME_DATE = new RegExp(`^(?:${DAYS}) (${MONTH}) ([ \\d]\\d) ${TIME} (\\d{4})$`);

/** An HTTP-date as IMF-fixdate, the only form a sender may generate. */
export const formatHttpDate = (epochSeconds: number): string =>
  new Date(epochSeconds * 1000).toUTCString();

/**
 * The time an HTTP-date names, in epoch milliseconds, or undefined when the text is not one of
 * the three forms or names no real time (31 Feb, 24:00). RFC 850's two-digit year is read as the
 * year within 50 of `nowMs`'s, as the RFC asks.
 */
export function parseHttpDate(text: string, nowMs: number): number | undefined {
  const value = text.trim();
  const imf = IMF_FIXDATE.exec(value);
  if (imf !== null) return timeOf(imf[3], imf[2], imf[1], imf.slice(4, 7));
  const rfc850 = RFC850_DATE.exec(value);
  if (rfc850 !== null) {
    const year = String(fullYear(Number(rfc850[3]), new Date(nowMs).getUTCFullYear()));
    return timeOf(year, rfc850[2], rfc850[1], rfc850.slice(4, 7));
  }
  const asctime = ASCTIME_DATE.exec(value);
  if (asctime !== null) return timeOf(asctime[6], asctime[1], asctime[2], asctime.slice(3, 6));
  return undefined;
}

/** The year ending in `twoDigits` that lies within 50 years of `currentYear` (RFC 9110 §5.6.7). */
function fullYear(twoDigits: number, currentYear: number): number {
  const year = currentYear - (currentYear % 100) + twoDigits;
  if (year > currentYear + 50) return year - 100;
  return year <= currentYear - 50 ? year + 100 : year;
}

/** The time of the parts, when they name a real one (a leap second reads as the next second). */
function timeOf(
  yearText: string | undefined,
  monthText: string | undefined,
  dayText: string | undefined,
  clock: readonly (string | undefined)[],
): number | undefined {
  const [year, day] = [Number(yearText), Number(dayText?.trim())];
  const month = MONTHS.indexOf(monthText ?? '');
  const [hour, minute, second] = clock.map(Number) as [number, number, number];
  if (hour > 23 || minute > 59 || second > 60) return undefined;
  const date = new Date(Date.UTC(year, month, day));
  date.setUTCFullYear(year);
  if (date.getUTCMonth() !== month || date.getUTCDate() !== day) return undefined;
  return date.getTime() + ((hour * 60 + minute) * 60 + second) * 1000;
}
