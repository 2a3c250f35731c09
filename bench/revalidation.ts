/**
 * Tag revalidation at scale: one tag on N published pages. For each N it measures the time to
 * the 202, the time until every page is marked, pages/s and WCU per page, against a floor of one
 * bare UpdateItem per page over the same META rows in the same run; the 202 for N pages is also
 * compared with the 202 for one page. How a tag is marked is pluggable (`TagMarking`), so the
 * same harness measures the inline marking and a background fan-out.
 */
import { randomUUID } from 'node:crypto';
import {
  BatchWriteItemCommand,
  ScanCommand,
  UpdateItemCommand,
  type AttributeValue,
} from '@aws-sdk/client-dynamodb';
import { keyOf, metaToItem } from '../lambda/adapters/shared/dynamodb/items.js';
import { PAGE, tagPartition } from '../lambda/adapters/tag-index/dynamodb.js';
import { normaliseCacheKey } from '../lambda/core/page/cache-key.js';
import { SETTING_DEFAULTS } from '../lambda/core/settings/index.js';
import { createAwsClients, type AwsClients } from '../lambda/shared/aws-clients.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../local/backends/index.js';
import { newTally, tallyDynamoDb, type Tally } from './capacity.js';
import { scenario, type Backends, type Scenario } from './fixture.js';
import { fanOutMarking, type MarkingFactory } from './revalidation-marking.js';
import { median, pool, round, table } from './stats.js';

/** An effect id of the revalidate function's shape. */
const newEffectId = () => `rv_${randomUUID().replaceAll('-', '')}`;

/** Pages marked at once by the floor, as the fan-out marks them. */
const FLOOR_CONCURRENCY = SETTING_DEFAULTS.fanOutConcurrency;
/** 202s of a one-page tag measured, for the median the N-page 202 is compared with. */
const ONE_PAGE_SAMPLES = 5;

export interface RevalidationSize {
  readonly pages: number;
  /** Median 202 of a one-page tag, measured just before (same warm process, same table). */
  readonly onePageAcceptMs: number;
  readonly acceptMs: number;
  /** The 202 for N pages over the median 202 for one page (goal <= 1.2). */
  readonly acceptRatio: number;
  readonly staleMs: number;
  readonly pagesPerSecond: number;
  readonly marked: number;
  readonly staleAfter: number;
  /** The floor before and after the marking, and their mean (what the marking is compared with). */
  readonly floor: {
    readonly ms: number;
    readonly pagesPerSecond: number;
    readonly beforeMs: number;
    readonly afterMs: number;
  };
  /** Marking throughput over the floor's (goal >= 0.8 with one write a page). */
  readonly throughputRatio: number;
  /** Writes counted per page, failed conditions included (what AWS charges). */
  readonly wcuPerPage: number;
  /** What DynamoDB Local reported through ReturnConsumedCapacity, per page. */
  readonly reportedWcuPerPage: number;
  readonly calls: Record<string, number>;
}

export interface RevalidationResult {
  readonly marking: string;
  readonly sizes: RevalidationSize[];
}

export async function tagRevalidation(
  backends: Backends,
  sizes: readonly number[],
  marking: MarkingFactory = fanOutMarking,
): Promise<RevalidationResult> {
  const s = await scenario(backends);
  const tally = newTally();
  const clients = talliedClients(backends, tally);
  const system = marking(s, clients);
  try {
    await seed(s, 'one', 1);
    const results: RevalidationSize[] = [];
    for (const pages of sizes) {
      results.push(await measure(s, { tally, clients, system, pages }));
    }
    return { marking: system.name, sizes: results };
  } finally {
    clients.dynamodb.destroy();
    clients.sqs.destroy();
    clients.s3.destroy();
    s.destroy();
  }
}

async function measure(
  s: Scenario,
  run: {
    tally: Tally;
    clients: AwsClients;
    system: ReturnType<MarkingFactory>;
    pages: number;
  },
): Promise<RevalidationSize> {
  const { tally, clients, system, pages } = run;
  const tag = `bench-${pages}`;
  const pks = await seed(s, tag, pages);
  const onePageAcceptMs = await onePageAccept(system);
  // The floor runs on the same (counted) client, before and after the marking: the mean of the
  // two is what the marking is compared with, so a machine busier in one half skews neither.
  const floorBefore = await floor(s, clients, pks);
  note(pages, `floor before: ${round(floorBefore, 0)} ms`);
  Object.assign(tally, newTally());
  const effectId = newEffectId();
  const started = performance.now();
  const accepted = await system.accept(tag, effectId);
  const acceptMs = performance.now() - started;
  note(pages, `202 after ${round(acceptMs, 0)} ms (one page: ${round(onePageAcceptMs, 0)} ms)`);
  const drained = await system.drain();
  const staleMs = performance.now() - started;
  note(pages, `${drained + accepted.pages} pages marked after ${round(staleMs, 0)} ms`);
  const spent = { ...tally, calls: { ...tally.calls } };
  const staleAfter = await countMarked(s, effectId);
  const floorAfter = await floor(s, clients, pks);
  const floorMs = (floorBefore + floorAfter) / 2;
  note(pages, `floor after: ${round(floorAfter, 0)} ms`);
  const perSecond = (ms: number) => round((pages / ms) * 1000, 0);
  return {
    pages,
    acceptMs: round(acceptMs, 0),
    onePageAcceptMs: round(onePageAcceptMs, 0),
    acceptRatio: round(acceptMs / onePageAcceptMs, 2),
    staleMs: round(staleMs, 0),
    pagesPerSecond: perSecond(staleMs),
    marked: accepted.pages + drained,
    staleAfter,
    floor: {
      ms: round(floorMs, 0),
      pagesPerSecond: perSecond(floorMs),
      beforeMs: round(floorBefore, 0),
      afterMs: round(floorAfter, 0),
    },
    throughputRatio: round(floorMs / staleMs, 2),
    wcuPerPage: round(spent.pricedWcu / pages, 3),
    reportedWcuPerPage: round(spent.localCapacity / pages, 3),
    calls: spent.calls,
  };
}

/** Each figure on stderr as it is measured: a long run that is stopped keeps what it had. */
const note = (pages: number, line: string) =>
  console.error(`  revalidation, ${pages} pages: ${line}`);

/** The median 202 of a one-page tag, after one unmeasured revalidation of it. */
async function onePageAccept(system: ReturnType<MarkingFactory>): Promise<number> {
  const samples: number[] = [];
  for (let i = 0; i <= ONE_PAGE_SAMPLES; i += 1) {
    const started = performance.now();
    await system.accept('one', newEffectId());
    if (i > 0) samples.push(performance.now() - started);
    await system.drain();
  }
  return median(samples);
}

/** The floor: one bare UpdateItem per page on the same META rows (no LOCK, no condition). */
async function floor(s: Scenario, clients: AwsClients, pks: readonly string[]): Promise<number> {
  const started = performance.now();
  await pool(`floor: ${pks.length} bare UpdateItems`, pks, FLOOR_CONCURRENCY, async (pk) => {
    await clients.dynamodb.send(
      new UpdateItemCommand({
        TableName: s.tableName,
        Key: keyOf(pk, 'META'),
        UpdateExpression: 'SET bench_floor = :now',
        ExpressionAttributeValues: { ':now': { N: String(s.clock.seconds) } },
      }),
    );
  });
  return performance.now() - started;
}

/** N fresh pages under one tag: META rows and tag index rows, 25 a batch, 8 batches at a time. */
async function seed(s: Scenario, tag: string, pages: number): Promise<string[]> {
  const pks = Array.from(
    { length: pages },
    (_, i) => normaliseCacheKey({ rawPath: `/${tag}/${i}` }, s.workerConfig.keyPolicy).pk,
  );
  const items = pks.flatMap((pk) => [
    metaToItem({
      pk,
      s3Key: `pages/_/${pk}/seed`,
      generatedAt: s.clock.seconds,
      revalidateSeconds: 3_600,
      tags: [tag],
    }),
    keyOf(tagPartition(undefined, tag), `${PAGE}${pk}`),
  ]);
  const batches = Array.from({ length: Math.ceil(items.length / 25) }, (_, i) =>
    items.slice(i * 25, i * 25 + 25),
  );
  await pool(`seed ${pages} pages`, batches, 8, async (batch) => {
    let requests = batch.map((Item) => ({ PutRequest: { Item } }));
    while (requests.length > 0) {
      const { UnprocessedItems } = await s.clients.dynamodb.send(
        new BatchWriteItemCommand({ RequestItems: { [s.tableName]: requests } }),
      );
      requests = (UnprocessedItems?.[s.tableName] ?? []) as typeof requests;
    }
  });
  return pks;
}

/** META rows this effect marked, counted by a Scan. */
async function countMarked(s: Scenario, effectId: string): Promise<number> {
  let count = 0;
  let start: Record<string, AttributeValue> | undefined;
  do {
    const page = await s.clients.dynamodb.send(
      new ScanCommand({
        TableName: s.tableName,
        FilterExpression: 'sk = :meta AND revalidated_by = :effect',
        ExpressionAttributeValues: { ':meta': { S: 'META' }, ':effect': { S: effectId } },
        Select: 'COUNT',
        ExclusiveStartKey: start,
      }),
    );
    count += page.Count ?? 0;
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return count;
}

function talliedClients(backends: Backends, tally: Tally): AwsClients {
  const clients = createAwsClients({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoints: backends.backends.endpoints,
  });
  tallyDynamoDb(clients.dynamodb, tally);
  return clients;
}

/** The printed table: one column per page count. */
export function printRevalidation(r: RevalidationResult): void {
  console.log(
    `\nTag revalidation (${r.marking}): one tag, mode stale; floor: one bare UpdateItem per page ` +
      `on the same rows, ${FLOOR_CONCURRENCY} at a time, on the same client, before and after`,
  );
  const row = (label: string, value: (size: RevalidationSize) => string | number) => [
    label,
    ...r.sizes.map(value),
  ];
  console.log(
    table([
      row('pages', (x) => x.pages),
      row('time to the 202 (ms)', (x) => x.acceptMs),
      row(`  the 202 for one page (ms, median of ${ONE_PAGE_SAMPLES})`, (x) => x.onePageAcceptMs),
      row('  its ratio to the 202 for one page (<= 1.2)', (x) => x.acceptRatio),
      row('time until every page is marked (ms)', (x) => x.staleMs),
      row('pages marked / found marked after', (x) => `${x.marked} / ${x.staleAfter}`),
      row('pages/s', (x) => x.pagesPerSecond),
      row(
        'floor: bare UpdateItem (mean ms, pages/s; before / after)',
        (x) => `${x.floor.ms}, ${x.floor.pagesPerSecond}; ${x.floor.beforeMs} / ${x.floor.afterMs}`,
      ),
      row('throughput / floor (>= 0.8 with 1 write a page)', (x) => x.throughputRatio),
      row('WCU per page (writes counted, AWS pricing)', (x) => x.wcuPerPage),
      row('WCU per page (reported by DynamoDB Local)', (x) => x.reportedWcuPerPage),
      row('calls', (x) =>
        Object.entries(x.calls)
          .map(([name, count]) => `${name.replace('dynamodb:', '')} ${count}`)
          .join(', '),
      ),
    ]),
  );
}
