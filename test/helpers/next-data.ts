/**
 * Servers for the data cache tests, on loopback: the fixture's data source (FIXTURE_DATA_URL,
 * `{ n }` counting its requests), and a revalidate endpoint that has never heard of a
 * revalidation (the tag-time check removed: a negative control).
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

async function listen(server: Server) {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { url, close };
}

/** The data source: every request answers the next `n`, so a kept value is a cached one. */
export async function startDataSource() {
  let requests = 0;
  const server = createServer((_req, res) => {
    requests += 1;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ n: requests }));
  });
  return { ...(await listen(server)), requests: () => requests };
}

/**
 * A revalidate endpoint whose tag-times read reports no revalidation ever, and which accepts
 * (and forgets) every revalidation: an adapter pointed at it trusts whatever it has cached.
 */
export async function startBlindEndpoint() {
  const server = createServer((req, res) => {
    req.resume();
    req.on('end', () => {
      res.writeHead(req.url?.endsWith('/tag-times') === true ? 200 : 202, {
        'content-type': 'application/json',
      });
      res.end(
        JSON.stringify({ revalidated_at_ms: {}, cache_ms: 0, skew_margin_ms: 0, kept_ms: 6e8 }),
      );
    });
  });
  return listen(server);
}
