/**
 * Flood: N distinct random paths (a crawler, or someone looping over random URLs) thrown at the
 * origin, many at a time, while a well-formed visitor keeps reading ten published pages. Counts
 * what the flood costs (renders, rows, bytes stored, how it was answered) and what the visitor
 * sees meanwhile, against the visitor's latency with no flood, measured in the same process.
 *
 * The upstream answers 404 for the random paths (as a real site does) after a render delay, and
 * 200 for the site's pages. Three configurations: no bounds (the cap off, no allow-list: the
 * baseline), the shipped defaults (MISS admission cap 25), and a render allow-list (`/site/*`).
 */
import { ScanCommand, type AttributeValue, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import { htmlPage, ModuleRenderer } from '../lambda/adapters/renderer/module.js';
import { createOriginDeps } from '../lambda/origin/build.js';
import { collecting, streamingOrigin } from '../test/helpers/streaming-origin.js';
import { loadOriginConfig } from '../lambda/shared/config.js';
import { createObservability } from '../lambda/shared/observability.js';
import { lambdaContext } from '../local/worker-poller.js';
import { getEvent, scenario, type Backends } from './fixture.js';
import { percentile, progress, round } from './stats.js';

export type FloodConfiguration = 'no-bounds' | 'defaults' | 'allow-list';

export interface FloodResult {
  readonly configuration: FloodConfiguration;
  readonly paths: number;
  readonly concurrency: number;
  readonly floodMs: number;
  /** How the flood was answered, by status. */
  readonly floodStatuses: Record<string, number>;
  readonly renders: number;
  readonly peakConcurrentRenders: number;
  /** Rows in the table after the flood, by kind (META, VER, LOCK, ...). */
  readonly rows: Record<string, number>;
  readonly bodies: number;
  readonly bytesStored: number;
  /** The visitor's reads during the flood, and with no flood. */
  readonly visitor: {
    readonly requests: number;
    readonly non200: number;
    readonly p50: number;
    readonly p99: number;
    readonly quietP50: number;
    readonly quietP99: number;
    readonly p50Ratio: number;
    readonly p99Ratio: number;
  };
}

const SITE_PAGES = 10;
const RENDER_MS = 50;

export async function flood(
  backends: Backends,
  configuration: FloodConfiguration,
  paths: number,
  concurrency: number,
): Promise<FloodResult> {
  const s = await scenario(backends);
  let renders = 0;
  let rendering = 0;
  let peak = 0;
  const renderer = new ModuleRenderer(async (request) => {
    renders += 1;
    peak = Math.max(peak, ++rendering);
    try {
      await new Promise((resolve) => setTimeout(resolve, RENDER_MS));
      const known = request.cacheKey.path.startsWith('/site/');
      return known
        ? htmlPage(`<h1>${request.cacheKey.path}</h1>${'x'.repeat(2_000)}`, {
            revalidateSeconds: 3_600,
          })
        : htmlPage('<h1>Not found</h1>', { status: 404, revalidateSeconds: 60 });
    } finally {
      rendering -= 1;
    }
  });
  const env = {
    ...s.env,
    ISR_MISS_RENDER_LIMIT: configuration === 'no-bounds' ? '0' : '25',
    ...(configuration === 'allow-list' ? { ISR_RENDER_PATHS: '/site/*' } : {}),
  };
  try {
    const deps = createOriginDeps(
      loadOriginConfig(env),
      { clients: s.clients, clock: s.clock, renderer },
      { warn: () => undefined },
    );
    // The deployed (streaming) origin, each answer read to its end.
    const origin = collecting(
      streamingOrigin({ deps, tenantHeader: undefined, ...createObservability('origin') }),
    );
    const site = Array.from({ length: SITE_PAGES }, (_, i) => `/site/page-${i}`);
    for (const path of site) await origin(getEvent(path), lambdaContext(30_000));
    const rendersBefore = renders;
    peak = 0;

    const visit = async (until: () => boolean, samples: number[], statuses: number[]) => {
      for (let i = 0; !until(); i++) {
        const started = performance.now();
        const reply = await origin(getEvent(site[i % SITE_PAGES]), lambdaContext(30_000));
        samples.push(performance.now() - started);
        statuses.push(reply.statusCode ?? 0);
      }
    };
    // The visitor alone first: its latency with no flood.
    const quiet: number[] = [];
    const quietStatuses: number[] = [];
    await visit(() => quiet.length >= 400, quiet, quietStatuses);

    const floodStatuses: Record<string, number> = {};
    const during: number[] = [];
    const duringStatuses: number[] = [];
    let next = 0;
    let finished = false;
    const label = `flood ${configuration} x${paths}`;
    const started = performance.now();
    const attacker = async () => {
      while (next < paths) {
        const n = next++;
        const path = `/random-${n}-${Math.random().toString(36).slice(2, 10)}`;
        const reply = await origin(getEvent(path), lambdaContext(30_000));
        const status = String(reply.statusCode ?? 0);
        floodStatuses[status] = (floodStatuses[status] ?? 0) + 1;
        if (n % 50 === 0) progress(label, n, paths);
      }
    };
    const visitor = visit(() => finished, during, duringStatuses);
    await Promise.all(Array.from({ length: concurrency }, attacker));
    const floodMs = performance.now() - started;
    finished = true;
    await visitor;
    progress(label, paths, paths);

    const rows = await countRows(s.clients.dynamodb, s.tableName);
    const stored = await storedBodies(s.clients.s3, s.bucket);
    const ms = (samples: number[], p: number) => round(percentile(samples, p), 2);
    return {
      configuration,
      paths,
      concurrency,
      floodMs: round(floodMs, 0),
      floodStatuses,
      renders: renders - rendersBefore,
      peakConcurrentRenders: peak,
      rows,
      bodies: stored.count,
      bytesStored: stored.bytes,
      visitor: {
        requests: during.length,
        non200: duringStatuses.filter((status) => status !== 200).length,
        p50: ms(during, 50),
        p99: ms(during, 99),
        quietP50: ms(quiet, 50),
        quietP99: ms(quiet, 99),
        p50Ratio: round(percentile(during, 50) / percentile(quiet, 50), 2),
        p99Ratio: round(percentile(during, 99) / percentile(quiet, 99), 2),
      },
    };
  } finally {
    s.destroy();
  }
}

async function countRows(
  client: DynamoDBClient,
  tableName: string,
): Promise<Record<string, number>> {
  const rows: Record<string, number> = {};
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: tableName,
        ProjectionExpression: 'sk',
        ExclusiveStartKey: start,
      }),
    );
    for (const item of page.Items ?? []) {
      // META#GONE (a gone path's inline 404) and META#PASS apart from META.
      const sk = item.sk?.S ?? '?';
      const kind = sk.startsWith('META#') ? sk : (sk.split('#')[0] ?? '?');
      rows[kind] = (rows[kind] ?? 0) + 1;
    }
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return rows;
}

async function storedBodies(
  client: S3Client,
  bucket: string,
): Promise<{ count: number; bytes: number }> {
  let count = 0;
  let bytes = 0;
  // Paged by StartAfter, not ContinuationToken: s3rver encrypts its continuation tokens with
  // DES, which OpenSSL 3 (Node 17+) refuses, so any listing past 1,000 keys fails there.
  let startAfter: string | undefined;
  let truncated: boolean | undefined;
  do {
    const page = await client.send(
      new ListObjectsV2Command({ Bucket: bucket, StartAfter: startAfter }),
    );
    for (const object of page.Contents ?? []) {
      count += 1;
      bytes += object.Size ?? 0;
      startAfter = object.Key;
    }
    truncated = page.IsTruncated;
  } while (truncated === true);
  return { count, bytes };
}
