/**
 * How `npm start` guards `POST /_isr/revalidate`: a signature with ISR_REVALIDATE_SECRET set (the
 * value itself, local only); else open, but only while the server listens on loopback. Off (on the
 * LAN without a secret), the route still answers, saying why and what to set: handed to the origin
 * instead, a POST got the origin's "only GET and HEAD are served", which hid the cause.
 */
import { StaticSecretSource } from '../lambda/adapters/secret-source/static.js';
import { isLoopbackHost } from '../lambda/core/settings/index.js';
import type { OriginHandler } from './http-front.js';

export type LocalRevalidation =
  | {
      readonly mode: 'hmac';
      readonly secret: StaticSecretSource;
      readonly describe: (url: string) => string;
    }
  | {
      readonly mode: 'open';
      readonly secret: undefined;
      readonly describe: (url: string) => string;
    }
  | {
      readonly mode: 'disabled';
      readonly secret: undefined;
      readonly describe: (url: string) => string;
      /** Answers every request to the route: 403, with the reason. */
      readonly handler: OriginHandler;
    };

export function localRevalidation(value: string | undefined, host: string): LocalRevalidation {
  if (value !== undefined) {
    return {
      mode: 'hmac',
      secret: new StaticSecretSource(value),
      describe: (url) => `POST ${url} (x-isr-signature required: ISR_REVALIDATE_SECRET)`,
    };
  }
  if (isLoopbackHost(host) || host === '::1') {
    return {
      mode: 'open',
      secret: undefined,
      describe: (url) =>
        `POST ${url} (open on loopback, no signature; set ISR_REVALIDATE_SECRET to require one)`,
    };
  }
  const why = `off: listening on ${host}, not loopback; set ISR_REVALIDATE_SECRET to serve it signed`;
  return {
    mode: 'disabled',
    secret: undefined,
    describe: () => why,
    handler: () =>
      Promise.resolve({
        statusCode: 403,
        headers: { 'content-type': 'application/json', 'cache-control': 'no-store' },
        body: JSON.stringify({ error: 'revalidation-off', message: `revalidation is ${why}` }),
      }),
  };
}
