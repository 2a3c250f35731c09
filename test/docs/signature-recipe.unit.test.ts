/**
 * The HMAC recipe as the README and docs/REVALIDATION.md print it, run by sh with the real
 * openssl and a stand-in `curl` that records its arguments: what it would send must pass the
 * endpoint's own verification, for a deployed function URL and for `npm start`'s route.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from '@jest/globals';
import {
  requestTargetOf,
  signatureRefusal,
} from '../../lambda/core/revalidate/webhook-signature.js';
import { toRevalidateRequest } from '../../lambda/revalidate/handler.js';
import { functionUrlEvent } from '../../local/function-url.js';

const ROOT = new URL('../../', import.meta.url);
const SECRET = 'whsec_recipe';
const folder = mkdtempSync(join(tmpdir(), 'isr-recipe-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** The fenced sh block of a markdown file that sends `x-isr-signature`. */
function recipeOf(file: string): string {
  const text = readFileSync(new URL(file, ROOT), 'utf8');
  const block = [...text.matchAll(/```sh\n([\s\S]*?)```/g)]
    .map((match) => match[1] ?? '')
    .find((code) => code.includes('x-isr-signature'));
  if (block === undefined) throw new Error(`${file} has no signed recipe`);
  return block;
}

/**
 * Runs the recipe for `url` (its first line sets npm start's URL and an example secret: the
 * URL and the secret are swapped for the test's); `curl` writes its arguments, NUL-separated,
 * instead of sending them.
 */
function runRecipe(recipe: string, url: string): string[] {
  const out = join(folder, 'curl-args');
  const forUrl = recipe
    .replace(/^REVALIDATE_URL=\S+/m, `REVALIDATE_URL='${url}'`)
    .replace(/ SECRET=\S+/, ` SECRET='${SECRET}'`);
  const script = `curl() { printf '%s\\0' "$@" > "$CURL_ARGS"; }\n${forUrl}`;
  execFileSync('sh', ['-c', script], {
    env: {
      PATH: process.env.PATH,
      SECRET,
      REVALIDATE_URL: url,
      EVENT_ID: '42',
      CURL_ARGS: out,
    },
  });
  return readFileSync(out, 'utf8').split('\0').slice(0, -1);
}

/** The request those curl arguments make, as the revalidate function receives it. */
function requestOf(args: string[]) {
  const headers: Record<string, string> = {};
  let body = '';
  let url = '';
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] ?? '';
    const value = args[i + 1] ?? '';
    if (arg === '-H') {
      const at = value.indexOf(':');
      headers[value.slice(0, at).trim().toLowerCase()] = value.slice(at + 1).trim();
      i++;
    } else if (arg === '--data-binary') {
      body = value;
      i++;
    } else if (arg === '-X') {
      i++;
    } else if (arg !== '-i') url = arg;
  }
  const event = functionUrlEvent({ method: 'POST', target: requestTargetOf(url), headers });
  return toRevalidateRequest({ ...event, body });
}

describe.each(['README.md', 'docs/REVALIDATION.md'])('the signed recipe of %s', (file) => {
  const recipe = recipeOf(file);

  it.each([
    'https://abc123.lambda-url.eu-west-1.on.aws/',
    'https://abc123.lambda-url.eu-west-1.on.aws',
    'http://localhost:3000/_isr/revalidate',
  ])('sends a request to %s that the endpoint accepts', (url) => {
    expect(recipe).toMatch(/^REVALIDATE_URL=http:\/\/localhost:3000\/_isr\/revalidate SECRET=/m);
    const request = requestOf(runRecipe(recipe, url));
    expect(request.headers['idempotency-key']).toBe('cms-event-42');
    expect(JSON.parse(request.rawBody)).toEqual({ tags: ['post:42'] });
    const received = {
      signature: request.headers['x-isr-signature'],
      timestamp: request.headers['x-isr-timestamp'],
      method: request.method,
      target: request.target,
      idempotencyKey: request.headers['idempotency-key'],
      rawBody: request.rawBody,
    };
    const now = Number(received.timestamp);
    expect(signatureRefusal(received, SECRET, now, 300)).toBeUndefined();
    // Negative controls: the endpoint refuses the same headers on another path or key.
    expect(signatureRefusal({ ...received, target: '/other' }, SECRET, now, 300)).toBe(
      'signature-mismatch',
    );
    expect(signatureRefusal({ ...received, idempotencyKey: 'k2' }, SECRET, now, 300)).toBe(
      'signature-mismatch',
    );
  });
});
