/**
 * Regeneration cost: what one regeneration costs in DynamoDB capacity and calls, and how fast the
 * worker regenerates 1,000 stale keys compared with the same calls (reads, conditions and row
 * shapes included) issued as bare SDK calls around a bare render: the ratio is the service's own
 * overhead, and `msByStep` shows where each regeneration's time goes.
 */
import { randomUUID } from 'node:crypto';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { normaliseCacheKey } from '../lambda/core/page/cache-key.js';
import type { CacheKey } from '../lambda/core/page/model.js';
import { encodeIntent } from '../lambda/core/page/intent.js';
import { createAwsClients, type AwsClients } from '../lambda/shared/aws-clients.js';
import { createWorkerDeps } from '../lambda/worker/build.js';
import { processMessage } from '../lambda/core/worker/process-message.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../local/backends/index.js';
import { lambdaContext } from '../local/worker-poller.js';
import { newTally, tallyDynamoDb, tallyS3, type Tally } from './capacity.js';
import { scenario, type Backends, type Scenario } from './fixture.js';
import { sameCalls } from './regeneration-baseline.js';
import { pool, round, table } from './stats.js';

export interface RegenerationResult {
  readonly keys: number;
  readonly concurrency: number;
  readonly perRegeneration: PerRegeneration;
  /** The baseline's calls, priced the same way: equal to the worker's when it is fair. */
  readonly baseline: PerRegeneration;
  readonly isr: { readonly ms: number; readonly perSecond: number };
  readonly bare: { readonly ms: number; readonly perSecond: number };
  readonly ratio: number;
  readonly decisions: Record<string, number>;
}

interface PerRegeneration {
  readonly calls: Record<string, number>;
  readonly pricedWcu: number;
  readonly pricedRcu: number;
  readonly localCapacity: number;
  /** Mean ms of one regeneration, start to end, at the bench's concurrency. */
  readonly ms: number;
  /** Mean ms per regeneration inside each kind of call; `outside calls` is the rest. */
  readonly msByStep: Record<string, number>;
  /** This process's CPU ms per regeneration (SDK, s3rver, the code under test), load-independent. */
  readonly cpuMs: number;
}

/** Keys per timed round; rounds alternate worker and baseline, so load drift hits both. */
const ROUND = 50;

export async function regeneration(
  backends: Backends,
  keys: number,
  concurrency: number,
): Promise<RegenerationResult> {
  const s = await scenario(backends);
  const tallies = { isr: newTally(), bare: newTally() };
  const clients = {
    isr: talliedClients(backends, tallies.isr),
    bare: talliedClients(backends, tallies.bare),
  };
  try {
    const seedGeneratedAt = s.clock.seconds - 100;
    const deps = createWorkerDeps(
      s.workerConfig,
      { clients: clients.isr, clock: s.clock, renderer: s.renderer },
      { warn: () => undefined },
    );
    const decisions: Record<string, number> = {};
    const runs = {
      isr: async (cacheKey: CacheKey) => {
        // One invocation's context per message, as the handler has: a claim expires with it.
        deps.idempotency.config.registerLambdaContext(lambdaContext(60_000));
        const report = await processMessage(deps, workerMessage(cacheKey, seedGeneratedAt));
        decisions[report.decision] = (decisions[report.decision] ?? 0) + 1;
      },
      bare: (cacheKey: CacheKey) => sameCalls(s, clients.bare, cacheKey),
    };
    const warmUp = Math.max(20, concurrency * 2);
    const keysOf = {
      isr: await seedStaleKeys(s, 'isr', keys + warmUp, seedGeneratedAt),
      bare: await seedStaleKeys(s, 'bare', keys + warmUp, seedGeneratedAt),
    };
    // Warm-up (JIT, connections, DynamoDB Local's JVM), not counted.
    for (const system of ['isr', 'bare'] as const) {
      await pool(`warm-up (${system})`, keysOf[system].slice(0, warmUp), concurrency, runs[system]);
      Object.assign(tallies[system], newTally());
    }
    for (const decision of Object.keys(decisions)) delete decisions[decision];
    const elapsed = { isr: 0, bare: 0 };
    const latency = { isr: 0, bare: 0 };
    const cpu = { isr: 0, bare: 0 };
    for (let from = warmUp, turn = 0; from < keys + warmUp; from += ROUND, turn += 1) {
      const order = turn % 2 === 0 ? (['isr', 'bare'] as const) : (['bare', 'isr'] as const);
      for (const system of order) {
        const started = performance.now();
        const cpuBefore = process.cpuUsage();
        await pool(
          `regenerate, ${system} round`,
          keysOf[system].slice(from, from + ROUND),
          concurrency,
          async (key) => {
            const one = performance.now();
            await runs[system](key);
            latency[system] += performance.now() - one;
          },
        );
        elapsed[system] += performance.now() - started;
        const cpuUsed = process.cpuUsage(cpuBefore);
        cpu[system] += (cpuUsed.user + cpuUsed.system) / 1000;
      }
    }
    const per = (value: number) => round(value / keys, 3);
    const perRegeneration = (tally: Tally, ms: number, cpuMs: number): PerRegeneration => {
      const insideCalls = Object.values(tally.callMs).reduce((sum, value) => sum + value, 0);
      return {
        calls: Object.fromEntries(
          Object.entries(tally.calls).map(([name, count]) => [name, per(count)]),
        ),
        pricedWcu: per(tally.pricedWcu),
        pricedRcu: per(tally.pricedRcu),
        localCapacity: per(tally.localCapacity),
        ms: per(ms),
        msByStep: {
          ...Object.fromEntries(
            Object.entries(tally.callMs).map(([name, value]) => [name, per(value)]),
          ),
          'outside calls': per(ms - insideCalls),
        },
        cpuMs: per(cpuMs),
      };
    };
    const worker = perRegeneration(tallies.isr, latency.isr, cpu.isr);
    const baseline = perRegeneration(tallies.bare, latency.bare, cpu.bare);
    // The ratio means something only while the baseline makes the worker's calls.
    if (JSON.stringify(sorted(worker.calls)) !== JSON.stringify(sorted(baseline.calls))) {
      throw new Error(
        `the baseline's calls ${JSON.stringify(baseline.calls)} differ from the worker's ${JSON.stringify(worker.calls)}`,
      );
    }
    const rate = (ms: number) => ({ ms: round(ms, 0), perSecond: round((keys / ms) * 1000, 1) });
    return {
      keys,
      concurrency,
      perRegeneration: worker,
      baseline,
      isr: rate(elapsed.isr),
      bare: rate(elapsed.bare),
      ratio: round(elapsed.isr / elapsed.bare, 2),
      decisions,
    };
  } finally {
    for (const c of [clients.isr, clients.bare]) {
      c.dynamodb.destroy();
      c.s3.destroy();
      c.sqs.destroy();
    }
    s.destroy();
  }
}

const sorted = (calls: Record<string, number>) =>
  Object.entries(calls).sort(([a], [b]) => a.localeCompare(b));

/** The intent a stale hit on the seeded generation queues. */
const workerMessage = (cacheKey: CacheKey, observedGeneratedAt: number) => ({
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

function talliedClients(backends: Backends, tally: Tally): AwsClients {
  const clients = createAwsClients({
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    endpoints: backends.backends.endpoints,
  });
  tallyDynamoDb(clients.dynamodb, tally);
  tallyS3(clients.s3, tally);
  return clients;
}

/** Each key gets a published generation that is already stale. */
async function seedStaleKeys(
  s: Scenario,
  prefix: string,
  keys: number,
  generatedAt: number,
): Promise<CacheKey[]> {
  const cacheKeys = Array.from({ length: keys }, (_, index) =>
    normaliseCacheKey({ rawPath: `/${prefix}-${index}` }, s.workerConfig.keyPolicy),
  );
  await pool(`seed ${keys} stale keys (${prefix})`, cacheKeys, 20, async (cacheKey) => {
    const s3Key = `pages/_/${cacheKey.hash}/seed`;
    await s.clients.s3.send(
      new PutObjectCommand({
        Bucket: s.bucket,
        Key: s3Key,
        Body: 'seed',
        ContentType: 'text/html',
      }),
    );
    await s.clients.dynamodb.send(
      new PutItemCommand({
        TableName: s.tableName,
        Item: {
          pk: { S: cacheKey.pk },
          sk: { S: 'META' },
          s3_key: { S: s3Key },
          generated_at: { N: String(generatedAt) },
          revalidate_seconds: { N: '60' },
        },
      }),
    );
  });
  return cacheKeys;
}

/** The printed table: worker against the same calls, per regeneration, and where the time goes. */
export function regenerationTable(r: RegenerationResult): string {
  const list = (entries: Record<string, number>) =>
    Object.entries(entries)
      .map(([name, value]) => `${name} ${value}`)
      .join(', ');
  const steps = [
    ...new Set([...Object.keys(r.perRegeneration.msByStep), ...Object.keys(r.baseline.msByStep)]),
  ];
  return table([
    ['per regeneration', 'worker', 'same calls, bare SDK'],
    ['calls', list(r.perRegeneration.calls), list(r.baseline.calls)],
    [
      'WCU / RCU (AWS pricing)',
      `${r.perRegeneration.pricedWcu} / ${r.perRegeneration.pricedRcu}`,
      `${r.baseline.pricedWcu} / ${r.baseline.pricedRcu}`,
    ],
    [
      'capacity reported by DynamoDB Local',
      r.perRegeneration.localCapacity,
      r.baseline.localCapacity,
    ],
    ['mean ms, start to end', r.perRegeneration.ms, r.baseline.ms],
    ...steps.map((step) => [
      `  ms in ${step}`,
      r.perRegeneration.msByStep[step] ?? 0,
      r.baseline.msByStep[step] ?? 0,
    ]),
    ['CPU ms of this process', r.perRegeneration.cpuMs, r.baseline.cpuMs],
    ['regenerations/s', r.isr.perSecond, r.bare.perSecond],
    ['time ratio worker / same calls', r.ratio, 1],
    ['decisions', list(r.decisions), ''],
  ]);
}
