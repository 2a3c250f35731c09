/**
 * The Next.js adapter under test: its cacheHandler class over a given environment, with fake
 * time (sleeps recorded, never waited) and numbered keys, and a real HTTP server on loopback
 * standing in for the revalidate endpoint, answering in turn and recording every request.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createCacheHandler, type AdapterOptions } from '../../next/cache-handler.js';

export interface Received {
  readonly method: string;
  readonly target: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** An answer to give, or `drop` to close the connection without one (a network failure). */
export type Answer = { status: number; headers?: Record<string, string>; body?: string } | 'drop';

const open: { close(): Promise<void> }[] = [];

/** Closes every endpoint the test started (call it in afterEach). */
export async function closeEndpoints(): Promise<void> {
  await Promise.all(open.splice(0).map((server) => server.close()));
}

function answer(res: ServerResponse, req: IncomingMessage, reply: Answer): void {
  if (reply === 'drop') {
    req.socket.destroy();
    return;
  }
  res.writeHead(reply.status, { 'content-type': 'application/json', ...reply.headers });
  res.end(reply.body ?? '{}');
}

/** The endpoint: `answers` in turn, then a 202 receipt for every further request. */
export async function recordingEndpoint(answers: Answer[] = []) {
  const received: Received[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      received.push({
        method: req.method ?? '',
        target: req.url ?? '',
        headers: Object.fromEntries(
          Object.entries(req.headers).map(([name, value]) => [name, String(value)]),
        ),
        body: Buffer.concat(chunks).toString('utf8'),
      });
      const receipt = { effect_id: `rv_${received.length}`, status: 'accepted' };
      answer(res, req, answers.shift() ?? { status: 202, body: JSON.stringify(receipt) });
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  open.push({
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  });
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, received };
}

export const NOW = new Date('2026-11-24T13:00:00Z');

/** A handler as Next constructs it (with a viewer's cookie it must never forward). */
export function adapterWith(env: Record<string, string>, options: AdapterOptions = {}) {
  const sleeps: number[] = [];
  const logs: { level: string; fields: Record<string, unknown> }[] = [];
  let keys = 0;
  const Handler = createCacheHandler({
    env,
    now: () => NOW,
    random: () => 0.5,
    newKey: () => `k${++keys}`,
    sleep: (ms) => {
      sleeps.push(ms);
      return Promise.resolve();
    },
    log: (level, fields) => logs.push({ level, fields }),
    ...options,
  });
  return { handler: new Handler({ _requestHeaders: { cookie: 'session=secret' } }), sleeps, logs };
}
