/**
 * The edge workload (issue 36 §5): Zipf-distributed HTML and RSC navigations, a crawler sweep of
 * every page and a few revalidations, through the local CloudFront the construct synthesizes in
 * front of the origin on the local backends. Counts, not times: the edge hit ratio, origin
 * invocations and the service's calls per 1,000 views, priced per million views (`prices.ts`).
 */
import { deployedOrigin, observed } from '../test/helpers/streaming-origin.js';
import { loadOriginConfig } from '../lambda/shared/config.js';
import type { FunctionUrlHandler } from '../local/cloudfront/origins.js';
import type { ViewerRequest } from '../local/cloudfront/requests.js';
import { EdgeResult } from '../local/cloudfront/responses.js';
import { LocalCloudFront } from '../local/cloudfront/cloudfront.js';
import { FunctionUrlOrigin, type LocalOrigin } from '../local/cloudfront/origins.js';
import { EDGE_CACHE_DIRECTORY, edgePropsOf, loadEdgeConfig } from '../local/cloudfront/synth.js';
import { lambdaContext } from '../local/worker-poller.js';
import type { SettingValues } from '../lambda/core/settings/table.js';
import type { Clock } from '../lambda/core/clock.js';
import { seededRandom } from '../test/helpers/random.js';
import { newTally, tallyDynamoDb, tallyS3, type Tally } from './capacity.js';
import { scenario, type Backends } from './fixture.js';
import { PRICES } from './prices.js';
import { round, table } from './stats.js';
import { ZIPF_EXPONENT, zipf } from './zipf.js';

/** The share of navigations that are client-side (an RSC payload, `rsc: 1`) rather than HTML. */
export const RSC_SHARE = 0.4;
/** Revalidations spread over the navigations, each purging one popular page's path. */
export const REVALIDATIONS = 5;

export interface EdgeSettings {
  readonly pages: number;
  readonly views: number;
  readonly seed?: number;
}

/** What one phase of the workload cost. */
export interface EdgePhase {
  readonly name: string;
  readonly views: number;
  readonly edgeHits: number;
  readonly hitRatio: number;
  readonly originInvocations: number;
  readonly renders: number;
  readonly calls: Record<string, number>;
  readonly perThousandViews: {
    originInvocations: number;
    renders: number;
    rcu: number;
    wcu: number;
  };
  /** Dollars per million views like these, from the counted requests and calls. */
  readonly dollarsPerMillionViews: number;
  readonly serviceDollarsPerMillionViews: number;
}

export interface EdgeWorkloadResult {
  readonly pages: number;
  readonly zipfExponent: number;
  readonly rscShare: number;
  readonly revalidations: number;
  readonly phases: readonly EdgePhase[];
}

const pathOf = (rank: number) => `/p/${rank}`;

const viewer = (path: string, kind: 'html' | 'rsc' | 'crawler', bust: string): ViewerRequest => ({
  method: 'GET',
  uri: path,
  querystring: kind === 'rsc' ? `_rsc=${bust}` : '',
  headers: {
    host: 'bench.example',
    ...(kind === 'rsc' ? { rsc: '1' } : {}),
    'user-agent': kind === 'crawler' ? 'Googlebot/2.1' : 'Mozilla/5.0',
  },
  clientIp: '192.0.2.1',
});

/** The dollars of one phase's counted requests and calls, per million views. */
function priced(views: number, invocations: number, tally: Tally, calls: Record<string, number>) {
  const count = (pattern: RegExp) =>
    Object.entries(calls)
      .filter(([name]) => pattern.test(name))
      .reduce((total, [, n]) => total + n, 0);
  const service =
    invocations * PRICES.lambdaRequest +
    tally.pricedRcu * PRICES.dynamodbReadUnit +
    tally.readCapacity * PRICES.dynamodbReadUnit +
    tally.pricedWcu * PRICES.dynamodbWriteUnit +
    count(/^s3:Get/) * PRICES.s3Get +
    count(/^s3:(Put|Copy|CompleteMultipart)/) * PRICES.s3Put;
  const perMillion = 1e6 / Math.max(1, views);
  return {
    service: round(service * perMillion, 3),
    total: round((service + views * PRICES.cloudfrontHttpsRequest) * perMillion, 3),
  };
}

/**
 * The synthesized distribution in front of `handler`, as `localCloudFront` (local/edge.ts) builds
 * it, but with a store that keeps every object: npm start's 1,000-object bound would evict the
 * long tail, which CloudFront does not at these sizes, and lower the measured hit ratio.
 */
async function edgeFor(
  settings: Partial<SettingValues>,
  handler: FunctionUrlHandler,
  clock: Pick<Clock, 'now'>,
): Promise<LocalCloudFront> {
  const { config } = await loadEdgeConfig(edgePropsOf(settings), EDGE_CACHE_DIRECTORY);
  const origins: Record<string, LocalOrigin> = {};
  for (const origin of Object.values(config.origins)) {
    if (origin.kind !== 'function-url') continue; // no path of the workload goes upstream
    origins[origin.id] = new FunctionUrlOrigin({
      handler,
      context: () => lambdaContext(30_000, 'isr-origin'),
      signing: origin.signing,
    });
  }
  const store = { maxObjects: Number.MAX_SAFE_INTEGER, maxBytes: Number.MAX_SAFE_INTEGER };
  return new LocalCloudFront({ config, origins, clock, store });
}

/** Runs the workload; each phase counts on its own tally. */
export async function edgeWorkload(
  backends: Backends,
  settings: EdgeSettings,
): Promise<EdgeWorkloadResult> {
  const s = await scenario(backends);
  const random = seededRandom(settings.seed ?? 36);
  const config = loadOriginConfig({
    ...s.env,
    ISR_PRESET: 'nextjs',
    // The preset's routes need an upstream; none of the workload's paths goes to it (the
    // scenario's counting renderer renders every page), so nothing listens there.
    RENDER_ORIGIN_URL: 'http://127.0.0.1:9',
    ISR_REVALIDATE_SECONDS: '3600',
  });
  const origin = deployedOrigin(config, {
    clients: s.clients,
    clock: s.clock,
    renderer: s.renderer,
  });
  let invocations = 0;
  const handler = observed(origin, () => {
    invocations += 1;
  });
  const cloudfront = await edgeFor(config.settings, handler, s.clock);
  const tally = newTally();
  tallyDynamoDb(s.clients.dynamodb, tally);
  tallyS3(s.clients.s3, tally);
  const phases: EdgePhase[] = [];
  /** Runs `views` requests, counting what the edge, the origin and the backends did. */
  const phase = async (name: string, requests: Iterable<ViewerRequest | 'revalidate'>) => {
    const before = { ...tally, calls: { ...tally.calls } };
    const invocationsBefore = invocations;
    const rendersBefore = s.renders.count;
    let views = 0;
    let edgeHits = 0;
    for (const request of requests) {
      if (request === 'revalidate') {
        // A revalidation's purge of a popular page, as CreateInvalidation of its path.
        cloudfront.invalidate([pathOf(nextRank())]);
        continue;
      }
      const answer = await cloudfront.handle(request, () => Promise.resolve(undefined));
      if (answer.status !== 200) throw new Error(`${request.uri}: ${answer.status}`);
      views += 1;
      if (answer.result === EdgeResult.Hit || answer.result === EdgeResult.RefreshHit) {
        edgeHits += 1;
      }
    }
    const calls = Object.fromEntries(
      Object.entries(tally.calls)
        .map(([call, n]) => [call, n - (before.calls[call] ?? 0)] as const)
        .filter(([, n]) => n > 0),
    );
    const spent: Tally = {
      ...tally,
      calls,
      pricedRcu: tally.pricedRcu - before.pricedRcu,
      pricedWcu: tally.pricedWcu - before.pricedWcu,
      readCapacity: tally.readCapacity - before.readCapacity,
    };
    const originInvocations = invocations - invocationsBefore;
    const renders = s.renders.count - rendersBefore;
    const perThousand = (n: number) => round((n * 1_000) / Math.max(1, views), 1);
    const dollars = priced(views, originInvocations, spent, calls);
    phases.push({
      name,
      views,
      edgeHits,
      hitRatio: round(edgeHits / Math.max(1, views), 4),
      originInvocations,
      renders,
      calls,
      perThousandViews: {
        originInvocations: perThousand(originInvocations),
        renders: perThousand(renders),
        rcu: perThousand(spent.pricedRcu + spent.readCapacity),
        wcu: perThousand(spent.pricedWcu),
      },
      dollarsPerMillionViews: dollars.total,
      serviceDollarsPerMillionViews: dollars.service,
    });
  };
  const nextRank = zipf(settings.pages, ZIPF_EXPONENT, random);
  const everyRevalidation = Math.floor(settings.views / (REVALIDATIONS + 1));
  function* navigations(): Generator<ViewerRequest | 'revalidate'> {
    for (let i = 1; i <= settings.views; i++) {
      const kind = random() < RSC_SHARE ? 'rsc' : 'html';
      yield viewer(pathOf(nextRank()), kind, i.toString(36));
      if (i % everyRevalidation === 0 && i / everyRevalidation <= REVALIDATIONS) yield 'revalidate';
    }
  }
  function* sweep(): Generator<ViewerRequest> {
    for (let rank = 0; rank < settings.pages; rank++) yield viewer(pathOf(rank), 'crawler', '');
  }
  try {
    await phase('navigations (Zipf, HTML + RSC, revalidations)', navigations());
    await phase('crawler sweep (every page once)', sweep());
    await phase('navigations after the sweep', navigations());
    await cloudfront.settled();
  } finally {
    s.destroy();
  }
  return {
    pages: settings.pages,
    zipfExponent: ZIPF_EXPONENT,
    rscShare: RSC_SHARE,
    revalidations: REVALIDATIONS,
    phases,
  };
}

/** The section's table: one row per phase, then the whole run. */
export function printEdge(r: EdgeWorkloadResult): void {
  console.log(
    `\nEdge: ${r.pages} pages, Zipf s=${r.zipfExponent}, ${r.rscShare * 100}% RSC navigations, ` +
      `${r.revalidations} path purges per navigation phase, through the local CloudFront ` +
      '(counts; $ = CloudFront requests + origin Lambda requests + DynamoDB + S3, no duration or bytes)',
  );
  console.log(
    table([
      [
        'phase',
        'views',
        'edge hit ratio',
        'origin invocations / 1k views',
        'renders / 1k',
        'RCU / 1k',
        'WCU / 1k',
        'service $ / M views',
        'total $ / M views',
      ],
      ...r.phases.map((p) => [
        p.name,
        p.views,
        p.hitRatio,
        p.perThousandViews.originInvocations,
        p.perThousandViews.renders,
        p.perThousandViews.rcu,
        p.perThousandViews.wcu,
        p.serviceDollarsPerMillionViews,
        p.dollarsPerMillionViews,
      ]),
    ]),
  );
}
