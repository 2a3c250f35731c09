/**
 * What a regeneration costs when its page changed and when it did not, side by side, and what a
 * crawler sweep over unchanged pages costs against today's write path (every render publishes).
 * Both count the calls the worker makes on DynamoDB Local and s3rver and price them as AWS does
 * (`capacity.ts`, `prices.ts`); the worker runs as deployed (`createWorkerDeps`).
 */
import { randomUUID } from 'node:crypto';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { metaToItem } from '../lambda/adapters/shared/dynamodb/items.js';
import { htmlPage, ModuleRenderer } from '../lambda/adapters/renderer/module.js';
import { normaliseCacheKey } from '../lambda/core/page/cache-key.js';
import { encodeIntent } from '../lambda/core/page/intent.js';
import type { CacheKey } from '../lambda/core/page/model.js';
import { bodyKeyOf } from '../lambda/core/page/rows.js';
import { admitPage } from '../lambda/core/regenerate/render-policy.js';
import { pageDigest } from '../lambda/core/regenerate/unchanged.js';
import { processMessage } from '../lambda/core/worker/process-message.js';
import type { WorkerDeps } from '../lambda/core/worker/deps.js';
import { createWorkerDeps } from '../lambda/worker/build.js';
import { lambdaContext } from '../local/worker-poller.js';
import { newTally, type Tally } from './capacity.js';
import { scenario, type Backends, type Scenario } from './fixture.js';
import { writeBill } from './prices.js';
import { talliedClients } from './regeneration.js';
import { pool, round, table } from './stats.js';

/** One kind of regeneration, per regeneration. */
export interface KindCost {
  readonly regenerations: number;
  readonly calls: Record<string, number>;
  readonly wcu: number;
  /** Priced WCU from the end of the render to the end of the regeneration. */
  readonly wcuAfterRender: number;
  readonly rcu: number;
  readonly puts: number;
  readonly ms: number;
  readonly decisions: Record<string, number>;
}

export interface KindsResult {
  readonly changed: KindCost;
  readonly unchanged: KindCost;
}

/** A page of about 2 KB; `version` changes it (a changed page), or not. */
const pageOf = (cacheKey: CacheKey, version: string) =>
  htmlPage(
    `<html><body><h1>${cacheKey.key}</h1><p>${'x'.repeat(2_000)}</p>${version}</body></html>`,
    {
      revalidateSeconds: 60,
    },
  );

interface Runner {
  readonly s: Scenario;
  readonly tally: Tally;
  readonly deps: WorkerDeps;
  /** Priced WCU when the last render ended. */
  readonly renderEnd: { wcu: number };
  readonly decisions: Record<string, number>;
  deliver(cacheKey: CacheKey, observedGeneratedAt?: number): Promise<string>;
  destroy(): void;
}

async function runner(backends: Backends, changes: boolean): Promise<Runner> {
  const s = await scenario(backends);
  const tally = newTally();
  const clients = talliedClients(backends, tally);
  const renderEnd = { wcu: 0 };
  let renders = 0;
  const renderer = new ModuleRenderer((request) => {
    renders += 1;
    const page = pageOf(request.cacheKey, changes ? `<!-- ${renders} -->` : '');
    renderEnd.wcu = tally.pricedWcu;
    return page;
  });
  const deps = createWorkerDeps(
    s.workerConfig,
    { clients, clock: s.clock, renderer },
    { warn: () => undefined },
  );
  const decisions: Record<string, number> = {};
  return {
    s,
    tally,
    deps,
    renderEnd,
    decisions,
    deliver: async (cacheKey, observedGeneratedAt) => {
      deps.idempotency.config.registerLambdaContext(lambdaContext(60_000));
      const report = await processMessage(deps, {
        messageId: randomUUID(),
        body: encodeIntent({
          v: 1,
          path: cacheKey.path,
          query: '',
          deployId: 'bench',
          observedGeneratedAt,
        }),
        receiveCount: 1,
        groupId: 'g',
      });
      decisions[report.decision] = (decisions[report.decision] ?? 0) + 1;
      return report.decision;
    },
    destroy: () => {
      clients.dynamodb.destroy();
      clients.s3.destroy();
      clients.sqs.destroy();
      s.destroy();
    },
  };
}

const resetTally = (tally: Tally) => Object.assign(tally, newTally());
const per = (value: number, count: number) => round(value / count, 3);

/**
 * `keys` pages of each kind, published once through the worker, then regenerated one at a time
 * once stale (alternating rounds, so load drift hits both): the changed ones render a new page,
 * the unchanged ones the same page.
 */
export async function regenerationKinds(backends: Backends, keys: number): Promise<KindsResult> {
  const runners = {
    changed: await runner(backends, true),
    unchanged: await runner(backends, false),
  };
  try {
    const keysOf = (prefix: string, r: Runner) =>
      Array.from({ length: keys }, (_, i) =>
        normaliseCacheKey({ rawPath: `/${prefix}-${i}` }, r.s.workerConfig.keyPolicy),
      );
    const pages = {
      changed: keysOf('changed', runners.changed),
      unchanged: keysOf('same', runners.unchanged),
    };
    const measured = { changed: { ms: 0, afterRender: 0 }, unchanged: { ms: 0, afterRender: 0 } };
    for (const kind of ['changed', 'unchanged'] as const) {
      await pool(`publish ${keys} pages (${kind})`, pages[kind], 10, async (key) => {
        await runners[kind].deliver(key);
      });
      runners[kind].s.clock.advance(61);
      resetTally(runners[kind].tally);
      for (const decision of Object.keys(runners[kind].decisions))
        delete runners[kind].decisions[decision];
    }
    const ROUND = 25;
    for (let from = 0; from < keys; from += ROUND) {
      for (const kind of ['changed', 'unchanged'] as const) {
        const r = runners[kind];
        for (const key of pages[kind].slice(from, from + ROUND)) {
          const started = performance.now();
          await r.deliver(key);
          measured[kind].ms += performance.now() - started;
          measured[kind].afterRender += r.tally.pricedWcu - r.renderEnd.wcu;
        }
      }
    }
    const costOf = (kind: 'changed' | 'unchanged'): KindCost => {
      const { tally, decisions } = runners[kind];
      return {
        regenerations: keys,
        calls: Object.fromEntries(
          Object.entries(tally.calls).map(([name, n]) => [name, per(n, keys)]),
        ),
        wcu: per(tally.pricedWcu, keys),
        wcuAfterRender: per(measured[kind].afterRender, keys),
        rcu: per(tally.pricedRcu, keys),
        puts: per(tally.calls['s3:PutObject'] ?? 0, keys),
        ms: per(measured[kind].ms, keys),
        decisions: { ...decisions },
      };
    };
    return { changed: costOf('changed'), unchanged: costOf('unchanged') };
  } finally {
    runners.changed.destroy();
    runners.unchanged.destroy();
  }
}

/** One crawler sweep's bill. */
export interface SweepCost {
  readonly wcu: number;
  readonly rcu: number;
  readonly puts: number;
  /** DynamoDB write units and S3 PUTs at AWS's prices, for the whole sweep. */
  readonly writeDollars: number;
  readonly seconds: number;
  readonly decisions: Record<string, number>;
}

export interface SweepResult {
  readonly pages: number;
  readonly concurrency: number;
  /** The same pages as written before this release (no digest): every render publishes. */
  readonly today: SweepCost;
  readonly unchanged: SweepCost;
  /** Unchanged sweep's write bill over today's (goal under 1/3). */
  readonly billRatio: number;
}

/**
 * A crawler requests every one of `pages` stale pages once, and none changed: one intent each,
 * at `concurrency`. Today's write path is the same pages with a META written without a digest
 * (as every META was before this release), so every render publishes.
 */
export async function crawlerSweep(
  backends: Backends,
  pages: number,
  concurrency: number,
): Promise<SweepResult> {
  const runners = {
    today: await runner(backends, false),
    unchanged: await runner(backends, false),
  };
  try {
    const seededAt = runners.today.s.clock.seconds - 120;
    const keysOf = (r: Runner) =>
      Array.from({ length: pages }, (_, i) =>
        normaliseCacheKey({ rawPath: `/crawl/${i}` }, r.s.workerConfig.keyPolicy),
      );
    const keys = { today: keysOf(runners.today), unchanged: keysOf(runners.unchanged) };
    await seed(runners.today, keys.today, seededAt, false);
    await seed(runners.unchanged, keys.unchanged, seededAt, true);
    const seconds = { today: 0, unchanged: 0 };
    for (const kind of ['today', 'unchanged'] as const) resetTally(runners[kind].tally);
    const ROUND = 500;
    for (let from = 0, turn = 0; from < pages; from += ROUND, turn += 1) {
      const order =
        turn % 2 === 0 ? (['today', 'unchanged'] as const) : (['unchanged', 'today'] as const);
      for (const kind of order) {
        const started = performance.now();
        await pool(
          `crawl (${kind})`,
          keys[kind].slice(from, from + ROUND),
          concurrency,
          async (key) => {
            await runners[kind].deliver(key, seededAt);
          },
        );
        seconds[kind] += (performance.now() - started) / 1000;
      }
    }
    const sweepOf = (kind: 'today' | 'unchanged'): SweepCost => {
      const { tally, decisions } = runners[kind];
      const puts = tally.calls['s3:PutObject'] ?? 0;
      return {
        wcu: tally.pricedWcu,
        rcu: tally.pricedRcu,
        puts,
        writeDollars: round(writeBill(tally.pricedWcu, puts), 4),
        seconds: round(seconds[kind], 1),
        decisions: { ...decisions },
      };
    };
    const today = sweepOf('today');
    const unchanged = sweepOf('unchanged');
    return {
      pages,
      concurrency,
      today,
      unchanged,
      billRatio: round(unchanged.writeDollars / today.writeDollars, 3),
    };
  } finally {
    runners.today.destroy();
    runners.unchanged.destroy();
  }
}

/** Each page published as the worker would have (body, then META), with a digest or without. */
async function seed(r: Runner, keys: CacheKey[], generatedAt: number, withDigest: boolean) {
  const { s, deps } = r;
  await pool(
    `seed ${keys.length} pages (${withDigest ? 'digest' : 'no digest'})`,
    keys,
    20,
    async (cacheKey) => {
      const page = admitPage(pageOf(cacheKey, ''), deps);
      const s3Key = bodyKeyOf(cacheKey, 'seed');
      const { ETag } = await s.clients.s3.send(
        new PutObjectCommand({
          Bucket: s.bucket,
          Key: s3Key,
          Body: page.body,
          ContentType: page.contentType,
        }),
      );
      const meta = {
        pk: cacheKey.pk,
        s3Key,
        generatedAt,
        revalidateSeconds: 60,
        etag: ETag,
        cacheKey: cacheKey.key,
        contentType: page.contentType,
        statusCode: page.status,
        contentLength: page.body.byteLength,
        digest: withDigest ? pageDigest(page) : undefined,
      };
      await s.clients.dynamodb.send(
        new PutItemCommand({ TableName: s.tableName, Item: metaToItem(meta) }),
      );
    },
  );
}

const list = (entries: Record<string, number>) =>
  Object.entries(entries)
    .map(([name, value]) => `${name} ${value}`)
    .join(', ');

export function printCost(result: { kinds: KindsResult; sweep: SweepResult }): void {
  const { kinds, sweep } = result;
  console.log(
    `\nRegeneration cost: ${kinds.changed.regenerations} stale pages each, one at a time, changed against unchanged`,
  );
  console.log(
    table([
      ['per regeneration', 'changed', 'unchanged'],
      ['calls', list(kinds.changed.calls), list(kinds.unchanged.calls)],
      ['WCU (AWS pricing)', kinds.changed.wcu, kinds.unchanged.wcu],
      ['  after the render', kinds.changed.wcuAfterRender, kinds.unchanged.wcuAfterRender],
      ['RCU (AWS pricing)', kinds.changed.rcu, kinds.unchanged.rcu],
      ['S3 PUTs', kinds.changed.puts, kinds.unchanged.puts],
      ['mean ms', kinds.changed.ms, kinds.unchanged.ms],
      ['decisions', list(kinds.changed.decisions), list(kinds.unchanged.decisions)],
    ]),
  );
  console.log(
    `\nCrawler sweep: ${sweep.pages} stale unchanged pages, one intent each, ${sweep.concurrency} at a time ` +
      '(baseline: the same pages as written before this release, so every render publishes)',
  );
  const row = (what: string, pick: (cost: SweepCost) => string | number) => [
    what,
    pick(sweep.today),
    pick(sweep.unchanged),
  ];
  console.log(
    table([
      ['whole sweep', 'today (every render publishes)', 'unchanged renders refresh'],
      row('WCU (AWS pricing)', (c) => c.wcu),
      row('RCU (AWS pricing)', (c) => c.rcu),
      row('S3 PUTs', (c) => c.puts),
      row('write bill, WCU + PUTs ($)', (c) => c.writeDollars),
      row('seconds', (c) => c.seconds),
      row('decisions', (c) => list(c.decisions)),
      ['bill ratio (goal < 1/3)', '', sweep.billRatio],
    ]),
  );
}
