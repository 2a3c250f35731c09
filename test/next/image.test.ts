/**
 * Issue 22: Next.js's image optimizer behind the `nextjs` preset's key rule (`/_next/image`
 * keyed on `url`, `w`, `q` and the normalised Accept), against the real fixture app and its
 * `sharp`. Each row counts the renders the origin asked Next for.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { startNextApp, type NextApp } from '../helpers/next-app.js';
import { startNextFront, type NextFront } from '../helpers/next-front.js';
import { ask } from '../helpers/next-http.js';

/** A cold `next build` of the fixture takes ~15 s here; CI machines may be slower. */
const BUILD_TIMEOUT_MS = 300_000;
const AVIF = 'image/avif,image/webp,image/apng,image/*,*/*;q=0.8';
const WEBP = 'image/webp,*/*';
const image = (query: string) => `/_next/image?${query}`;

let app: NextApp;
let preset: NextFront;
let withoutRule: NextFront;

beforeAll(async () => {
  app = await startNextApp();
  preset = await startNextFront(app.url, { ISR_PRESET: 'nextjs' });
  withoutRule = await startNextFront(app.url, { ISR_PRESET: 'nextjs', ISR_KEY_RULES: '[]' });
}, BUILD_TIMEOUT_MS);

afterAll(async () => {
  await preset?.front.close();
  await withoutRule?.front.close();
  await app?.stop();
});

/** HIT when the local CloudFront (or the origin's table) answered from a copy, else the origin's. */
const cacheOf = (answer: { headers: Headers }) =>
  answer.headers.get('x-cache')?.startsWith('Hit from') === true
    ? 'HIT'
    : answer.headers.get('x-isr-cache');

describe('/_next/image behind the nextjs preset', () => {
  it('two Accepts are two keys; the same Accept with other params is one render', async () => {
    const url = `${preset.front.url}${image('url=%2Fphoto.png&w=256&q=75')}`;
    const webp = await ask(url, { headers: { accept: WEBP, cookie: 'session=ann' } });
    const webpAgain = await ask(`${url}&utm=x&_=1`, { headers: { accept: `${WEBP};q=0.9` } });
    const other = await ask(url, { headers: { accept: 'image/png' } });
    expect(webp.status).toBe(200);
    expect(webp.headers.get('content-type')).toBe('image/webp');
    expect(other.headers.get('content-type')).toBe('image/png');
    expect([webp, webpAgain, other].map(cacheOf)).toEqual(['MISS', 'HIT', 'MISS']);
    expect(webpAgain.body.equals(webp.body)).toBe(true);
    expect(webp.headers.get('vary')?.split(', ')).toContain('accept');
    expect(preset.renders).toEqual([
      '/_next/image?q=75&url=%2Fphoto.png&w=256#accept=image%2Fwebp%2C*%2F*',
      '/_next/image?q=75&url=%2Fphoto.png&w=256#accept=*%2F*',
    ]);
  });

  it('an AVIF-accepting viewer has its own key, rendered with the normalised Accept', async () => {
    const before = preset.renders.length;
    const url = `${preset.front.url}${image('w=256&q=75&url=%2Fphoto.png')}`;
    const first = await ask(url, { headers: { accept: AVIF } });
    const second = await ask(url, { headers: { accept: 'image/avif' } });
    expect([first, second].map(cacheOf)).toEqual(['MISS', 'HIT']);
    // The fixture leaves `images.formats` at Next's default (WebP only): Next answers WebP.
    expect(first.headers.get('content-type')).toBe('image/webp');
    expect(preset.renders.slice(before)).toEqual([
      '/_next/image?q=75&url=%2Fphoto.png&w=256#accept=image%2Favif%2Cimage%2Fwebp%2C*%2F*',
    ]);
  });

  it.each([
    ['w=0', 'url=%2Fphoto.png&w=0&q=75'],
    ['w not a number', 'url=%2Fphoto.png&w=abc&q=75'],
    ['q over 100', 'url=%2Fphoto.png&w=256&q=101'],
    ['no url', 'w=256&q=75'],
    ['a relative url', 'url=photo.png&w=256&q=75'],
    ['a ".." segment', 'url=%2Fa%2F..%2Fphoto.png&w=256&q=75'],
  ])('%s: 400 at the edge, before the origin reads anything', async (_name, query) => {
    const calls = preset.originCalls();
    const answer = await ask(`${preset.front.url}${image(query)}`);
    expect(answer.status).toBe(400);
    expect(JSON.parse(answer.text)).toMatchObject({ error: 'query-out-of-bounds' });
    expect(preset.originCalls()).toBe(calls);
  });

  it('control: without the key rule, a bad w reaches Next (its own 400) and nothing is keyed', async () => {
    const answer = await ask(`${withoutRule.front.url}${image('url=%2Fphoto.png&w=0&q=75')}`);
    expect(answer.status).toBe(400);
    expect(answer.text).not.toContain('query-out-of-bounds');
    const good = await ask(`${withoutRule.front.url}${image('url=%2Fphoto.png&w=256&q=75')}`);
    expect(cacheOf(good)).not.toBe('HIT');
    expect(withoutRule.renders).toEqual([]);
  });

  it('an absolute url passes to Next (its remotePatterns decide), never keyed', async () => {
    const before = preset.renders.length;
    const remote = encodeURIComponent('https://images.example/photo.png');
    const answer = await ask(`${preset.front.url}${image(`url=${remote}&w=256&q=75`)}`);
    expect(answer.status).toBe(400); // the fixture allows no remote host: Next refuses it
    expect(answer.text).not.toContain('query-out-of-bounds');
    expect(preset.renders.length).toBe(before);
  });
});
