/**
 * Traffic classes (issue 21 §5): what the origin adds to a pass-through, against a direct call to
 * the same upstream (a fixed 20 ms latency), measured interleaved in one process; and the table
 * and bucket calls a hit-for-pass key and a static answer cost, counted on the SDK clients.
 */
import { request } from 'node:http';
import { collecting, deployedOrigin } from '../test/helpers/streaming-origin.js';
import { loadOriginConfig } from '../lambda/shared/config.js';
import { localCloudFront } from '../local/edge.js';
import { startHttpFront } from '../local/http-front.js';
import { functionUrlEvent } from '../local/function-url.js';
import { lambdaContext } from '../local/worker-poller.js';
import { startHttpServer } from '../test/helpers/http-server.js';
import { newTally, tallyDynamoDb, tallyS3 } from './capacity.js';
import { scenario, type Backends } from './fixture.js';
import { interleave, ratios, table } from './stats.js';

/** The upstream's fixed latency: every answer waits this long. */
export const UPSTREAM_LATENCY_MS = 20;

type Timing = { p50: number; p99: number };

export interface TrafficResult {
  readonly iterations: number;
  /** Direct GET to the upstream; the origin's method pass (POST); a hit-for-pass GET. */
  readonly direct: Timing;
  readonly methodPass: Timing;
  readonly hitForPass: Timing;
  readonly methodPassRatio: Timing;
  readonly hitForPassRatio: Timing;
  /** SDK calls by command: a key whose upstream answers `private`, first answer and after. */
  readonly hitForPassCalls: { first: Record<string, number>; after: Record<string, number> };
  /** The same for an `immutable` answer at the origin (a path no static prefix routes). */
  readonly immutableCalls: { first: Record<string, number>; after: Record<string, number> };
  /** Static-prefix requests through the local front (the edge routes them to the upstream). */
  readonly staticCalls: Record<string, number>;
  /** Requests per counted run after the first answer. */
  readonly counted: number;
}

const PAGE = `<html><body>${'x'.repeat(2_000)}</body></html>`;

/** The upstream: 20 ms, then `private` under /private, `immutable` for assets, else plain HTML. */
const startUpstream = () =>
  startHttpServer((req, res) => {
    const path = req.url ?? '/';
    const immutable = path.startsWith('/_next/static/') || path.startsWith('/asset');
    const cacheControl = path.startsWith('/private')
      ? 'private'
      : immutable
        ? 'public, max-age=31536000, immutable'
        : undefined;
    req.resume();
    setTimeout(() => {
      res.writeHead(200, {
        'content-type': immutable ? 'application/javascript' : 'text/html; charset=utf-8',
        ...(cacheControl === undefined ? {} : { 'cache-control': cacheControl }),
      });
      res.end(immutable ? 'console.log(1)' : PAGE);
    }, UPSTREAM_LATENCY_MS);
  });

/** A GET with Node's default agent (as the pass-through adapter sends), body read to the end. */
const httpGet = (url: string): Promise<number> =>
  new Promise((resolve, reject) => {
    const outgoing = request(url, { method: 'GET' }, (incoming) => {
      incoming.on('data', () => undefined);
      incoming.on('end', () => resolve(incoming.statusCode ?? 0));
      incoming.on('error', reject);
    });
    outgoing.on('error', reject);
    outgoing.end();
  });

/** Calls made while `work` runs, by command. */
async function callsDuring(
  tally: { calls: Record<string, number> },
  work: () => Promise<void>,
): Promise<Record<string, number>> {
  const before = { ...tally.calls };
  await work();
  return Object.fromEntries(
    Object.entries(tally.calls)
      .map(([name, count]) => [name, count - (before[name] ?? 0)] as const)
      .filter(([, count]) => count > 0),
  );
}

export async function traffic(
  backends: Backends,
  iterations: number,
  counted = 50,
): Promise<TrafficResult> {
  const upstream = await startUpstream();
  const s = await scenario(backends);
  const tally = newTally();
  tallyDynamoDb(s.clients.dynamodb, tally);
  tallyS3(s.clients.s3, tally);
  const config = loadOriginConfig({
    ...s.env,
    RENDER_ORIGIN_URL: upstream.url,
    ISR_HIT_FOR_PASS_SECONDS: '3600',
  });
  const deployed = deployedOrigin(config, { clients: s.clients, clock: s.clock });
  const origin = collecting(deployed);
  const call = async (method: string, path: string, expect = 'PASS') => {
    const event = functionUrlEvent({ method, target: path, headers: { host: 'bench.local' } });
    const reply = await origin(event, lambdaContext(30_000));
    if (reply.headers?.['x-isr-cache'] !== expect) {
      throw new Error(`${method} ${path}: ${reply.statusCode} ${reply.headers?.['x-isr-cache']}`);
    }
  };
  // The distribution the construct synthesizes for these settings, as npm start runs it.
  const { cloudfront } = await localCloudFront({
    settings: {
      renderOriginUrl: upstream.url,
      staticPrefixes: ['/_next/static/'],
      allowedQueryParams: [],
      unknownQuery: 'pass',
    },
    handler: deployed,
    functionTimeoutMs: 30_000,
  });
  const front = await startHttpFront({
    handler: deployed,
    port: 0,
    tenantHeader: undefined,
    functionTimeoutMs: 30_000,
    onError: () => undefined,
    cloudfront,
  });
  try {
    await call('GET', '/private/latency'); // the first answer marks the key
    const timings = await interleave(
      'traffic (pass vs direct)',
      {
        direct: async () => void (await httpGet(`${upstream.url}/page`)),
        methodPass: () => call('POST', '/page'),
        hitForPass: () => call('GET', '/private/latency'),
      },
      iterations,
    );
    const repeat = (method: string, path: string) => async () => {
      for (let i = 0; i < counted; i++) await call(method, path);
    };
    const hitForPassFirst = await callsDuring(tally, () => call('GET', '/private/count'));
    const hitForPassAfter = await callsDuring(tally, repeat('GET', '/private/count'));
    const immutableFirst = await callsDuring(tally, () => call('GET', '/asset/count.js'));
    const immutableAfter = await callsDuring(tally, repeat('GET', '/asset/count.js'));
    const staticCalls = await callsDuring(tally, async () => {
      for (let i = 0; i < counted; i++) {
        const status = await httpGet(`${front.url}/_next/static/app-${i}.js`);
        if (status !== 200) throw new Error(`static asset answered ${status}`);
      }
    });
    return {
      iterations,
      ...timings,
      methodPassRatio: ratios(timings.methodPass, timings.direct),
      hitForPassRatio: ratios(timings.hitForPass, timings.direct),
      hitForPassCalls: { first: hitForPassFirst, after: hitForPassAfter },
      immutableCalls: { first: immutableFirst, after: immutableAfter },
      staticCalls,
      counted,
    };
  } finally {
    await front.close();
    await upstream.close();
    s.destroy();
  }
}

/** DynamoDB writes and S3 puts among `calls`. */
export const writesOf = (calls: Record<string, number>): number =>
  Object.entries(calls)
    .filter(([name]) =>
      /^dynamodb:(Put|Update|Delete|BatchWrite|TransactWrite)|^s3:(Put|Delete|Copy)/.test(name),
    )
    .reduce((sum, [, count]) => sum + count, 0);

/** `dynamodb:Query 1, ...`, or `none`. */
export const callsOf = (calls: Record<string, number>): string =>
  Object.entries(calls)
    .map(([name, count]) => `${name} ${count}`)
    .join(', ') || 'none';

/** The section's tables: latencies with their ratios, then the calls counted. */
export function printTraffic(r: TrafficResult): void {
  console.log(
    `\nTraffic: the origin's pass-through vs a direct GET to the upstream (${UPSTREAM_LATENCY_MS} ms fixed latency, ${r.iterations} each); calls over ${r.counted} requests`,
  );
  console.log(
    table([
      ['', 'p50 ms', 'p99 ms', 'ratio p50', 'ratio p99'],
      ['direct GET to the upstream', r.direct.p50, r.direct.p99, '', ''],
      [
        'origin, method pass (POST) (goal <= 1.1)',
        r.methodPass.p50,
        r.methodPass.p99,
        r.methodPassRatio.p50,
        r.methodPassRatio.p99,
      ],
      [
        'origin, hit-for-pass GET (one Query)',
        r.hitForPass.p50,
        r.hitForPass.p99,
        r.hitForPassRatio.p50,
        r.hitForPassRatio.p99,
      ],
    ]),
  );
  console.log(
    table([
      ['SDK calls', 'first answer', `next ${r.counted} answers`, 'writes after (goal 0)'],
      [
        'hit-for-pass key (private)',
        callsOf(r.hitForPassCalls.first),
        callsOf(r.hitForPassCalls.after),
        writesOf(r.hitForPassCalls.after),
      ],
      [
        'immutable answer at the origin',
        callsOf(r.immutableCalls.first),
        callsOf(r.immutableCalls.after),
        writesOf(r.immutableCalls.after),
      ],
      [
        'static prefix through the front (goal: none)',
        '',
        callsOf(r.staticCalls),
        writesOf(r.staticCalls),
      ],
    ]),
  );
}
