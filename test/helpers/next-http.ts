/**
 * Requests to the fixture Next.js app (or to the service in front of it) as a browser would make
 * them, and what the fixture prints to tell one render from another.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** One answer, read whole: redirects are not followed, so Location stays visible. */
export interface Answer {
  readonly status: number;
  readonly headers: Headers;
  readonly body: Buffer;
  readonly text: string;
  /** Every Set-Cookie line, unjoined. */
  readonly cookies: readonly string[];
}

export interface AnswerRequest {
  readonly method?: string;
  readonly headers?: Readonly<Record<string, string>>;
  readonly body?: string | FormData;
}

/** Sends one request to `url` without following redirects, and reads the whole answer. */
export async function ask(url: string, request: AnswerRequest = {}): Promise<Answer> {
  const response = await fetch(url, { ...request, redirect: 'manual' });
  const body = Buffer.from(await response.arrayBuffer());
  return {
    status: response.status,
    headers: response.headers,
    body,
    text: body.toString('utf8'),
    cookies: response.headers.getSetCookie(),
  };
}

/** The fixture's render stamp: a fresh id per render (HTML attribute or RSC JSON prop). */
export function renderId(answer: Answer): string | undefined {
  return (
    /data-render-id="([0-9a-f-]{36})"/.exec(answer.text)?.[1] ??
    /"data-render-id":"([0-9a-f-]{36})"/.exec(answer.text)?.[1]
  );
}

/** `name=value` of the Set-Cookie line for `name`, ready for a Cookie header. */
export function cookiePair(answer: Answer, name: string): string | undefined {
  const line = answer.cookies.find((cookie) => cookie.startsWith(`${name}=`));
  return line?.split(';')[0];
}

/** The Server Action ids of a page's forms, by form id (the `$ACTION_ID_<id>` hidden input). */
export function formActionIds(html: string): ReadonlyMap<string, string> {
  const ids = new Map<string, string>();
  for (const match of html.matchAll(
    /<form id="([^"]+)"[^>]*>\s*<input[^>]*name="\$ACTION_ID_([0-9a-f]+)"/g,
  )) {
    if (match[1] !== undefined && match[2] !== undefined) ids.set(match[1], match[2]);
  }
  return ids;
}

/** URLs under /_next/static that a page's HTML refers to. */
export function staticAssetPaths(html: string): string[] {
  return [...new Set(html.match(/\/_next\/static\/[\w./-]+/g) ?? [])];
}

/**
 * Asks again until `done` holds: for work Next finishes after it answered (a background
 * regeneration). Bounded; it waits for an event, never asserts how long it took.
 */
export async function eventually(
  request: () => Promise<Answer>,
  done: (answer: Answer) => boolean,
  attempts = 200,
): Promise<Answer> {
  for (let attempt = 1; ; attempt++) {
    const answer = await request();
    if (done(answer)) return answer;
    if (attempt >= attempts) throw new Error(`still not done after ${attempts} requests`);
    await sleep(25);
  }
}

/** An answer read as it streams: what came until `marker` was seen, then the rest on demand. */
export interface StreamedAnswer {
  readonly status: number;
  readonly headers: Headers;
  /** The text received up to the chunk holding the marker (all of it if it never came). */
  readonly head: string;
  /** Reads the rest to the end; resolves with the whole text. */
  rest(): Promise<string>;
}

/**
 * Reads `url` chunk by chunk until `marker` has arrived, leaving the rest unread: shows what a
 * server sent before it was told to go on (the streaming page's gate), never how long it took.
 */
export async function askUntil(
  url: string,
  marker: string,
  headers: Readonly<Record<string, string>> = {},
): Promise<StreamedAnswer> {
  const response = await fetch(url, { redirect: 'manual', headers });
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  let text = '';
  let ended = false;
  while (!text.includes(marker)) {
    const { done, value } = await reader.read();
    if (done) {
      ended = true;
      break;
    }
    text += decoder.decode(value, { stream: true });
  }
  const head = text;
  return {
    status: response.status,
    headers: response.headers,
    head,
    async rest() {
      for (let chunk = ended ? undefined : await reader.read(); chunk && !chunk.done;) {
        text += decoder.decode(chunk.value, { stream: true });
        chunk = await reader.read();
      }
      return text + decoder.decode();
    },
  };
}
