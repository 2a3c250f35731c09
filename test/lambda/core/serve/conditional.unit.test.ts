import { describe, expect, it } from '@jest/globals';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import { servePage } from '../../../../lambda/core/serve/serve.js';
import { memoryService } from '../../../helpers/memory-service.js';
import { countingRenderer } from '../../../helpers/renderers.js';

/** A published page, and a GET of it with If-Modified-Since. */
async function published() {
  const { renderer } = countingRenderer(() => htmlPage('<p>a</p>', { revalidateSeconds: 600 }));
  const service = memoryService({ renderer });
  const get = (ifModifiedSince: string) =>
    servePage(service.originDeps, {
      method: 'GET',
      rawPath: '/a',
      rawQueryString: '',
      tenant: undefined,
      ifNoneMatch: undefined,
      ifModifiedSince,
    });
  const first = await get('');
  service.clock.advance(60);
  return { get, lastModified: first.headers['last-modified'] ?? '', now: service.clock.now() };
}

describe('If-Modified-Since (issue 19, item 14)', () => {
  it('answers 304 to each HTTP-date form naming the generation or later', async () => {
    const { get, lastModified } = await published();
    const at = new Date(Date.parse(lastModified));
    const [day, date, month, year, time] = lastModified.split(' ') as [string, ...string[]];
    const long = `${new Intl.DateTimeFormat('en', { weekday: 'long', timeZone: 'UTC' }).format(at)}`;
    const rfc850 = `${long}, ${date}-${month}-${(year ?? '').slice(2)} ${time} GMT`;
    const asctime = `${day.slice(0, 3)} ${month} ${String(at.getUTCDate()).padStart(2, ' ')} ${time} ${year}`;
    for (const form of [lastModified, rfc850, asctime]) {
      expect([form, (await get(form)).status]).toEqual([form, 304]);
    }
  });

  it('ignores what is not an HTTP-date, so the page is sent whole', async () => {
    const { get, lastModified } = await published();
    for (const text of [
      '2099',
      '3000-01-01',
      '2099-01-01T00:00:00Z',
      'Thu, 01 Jan 2099',
      lastModified.replace('GMT', '+0000'),
      `${lastModified}, ${lastModified}`,
      'Sun, 31 Feb 2099 00:00:00 GMT',
    ]) {
      expect([text, (await get(text)).status]).toEqual([text, 200]);
    }
  });

  it('ignores a date later than now: no Last-Modified it was sent can be one', async () => {
    const { get, now } = await published();
    const inAMinute = new Date(now + 60_000).toUTCString();
    expect((await get(inAMinute)).status).toBe(200);
    expect((await get('Fri, 01 Jan 2100 00:00:00 GMT')).status).toBe(200);
    // the negative control: the same form, now, is honoured
    expect((await get(new Date(now).toUTCString())).status).toBe(304);
  });
});
