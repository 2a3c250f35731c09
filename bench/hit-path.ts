/**
 * Hit path: latency of the origin handler serving a fresh page, against the bare GetItem +
 * GetObject pair it must make, measured interleaved (A, B, A, B...) in one process on the same
 * backends and clients, so drift and noise hit both alike. Also the pair with each revalidation
 * design's extra read: tag state rows (not chosen) and the in-progress shard (issue 23).
 */
import { BatchGetItemCommand, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { collecting, deployedOrigin } from '../test/helpers/streaming-origin.js';
import { normaliseCacheKey } from '../lambda/core/page/cache-key.js';
import { lambdaContext } from '../local/worker-poller.js';
import { getEvent, scenario, type Backends } from './fixture.js';
import { percentile, progress, round } from './stats.js';

export interface HitPathResult {
  readonly iterations: number;
  readonly pageBytes: number;
  readonly handler: { p50: number; p99: number };
  readonly bare: { p50: number; p99: number };
  readonly ratioP50: number;
  readonly ratioP99: number;
  /** The bare pair plus a tag-state read on every request (the revalidation design not chosen). */
  readonly tagRead: { p50: number; p99: number };
  readonly tagReadRatioP50: number;
  readonly tagReadRatioP99: number;
  /**
   * The bare pair plus the background revalidation's read (issue 23): one in-progress shard row,
   * strongly consistent, in parallel with META, reused for 250 ms from when it started.
   */
  readonly inProgress: { p50: number; p99: number };
  readonly inProgressRatioP50: number;
  readonly inProgressRatioP99: number;
  /** The same read made on every request (no reuse): its cost when a container's cache is cold. */
  readonly inProgressEvery: { p50: number; p99: number };
  readonly inProgressEveryRatioP50: number;
  readonly inProgressEveryRatioP99: number;
}

/** How long a container reuses its in-progress read (the revalidate function waits as long). */
const IN_PROGRESS_CACHE_MS = 250;

export async function hitPath(
  backends: Backends,
  iterations: number,
  pageBytes = 20_000,
): Promise<HitPathResult> {
  const s = await scenario(backends, { pageBytes });
  try {
    // The deployed (streaming) origin, each answer read to its end.
    const origin = collecting(
      deployedOrigin(s.originConfig, { clients: s.clients, clock: s.clock, renderer: s.renderer }),
    );
    const event = getEvent('/hit');
    const miss = await origin(event, lambdaContext(30_000));
    if (miss.headers?.['x-isr-cache'] !== 'MISS') throw new Error('hit-path setup did not render');
    const pk = normaliseCacheKey({ rawPath: '/hit' }, s.originConfig.keyPolicy).pk;
    const meta = await s.clients.dynamodb.send(
      new GetItemCommand({ TableName: s.tableName, Key: { pk: { S: pk }, sk: { S: 'META' } } }),
    );
    const s3Key = meta.Item?.s3_key?.S ?? '';

    const handler = async () => {
      const reply = await origin(event, lambdaContext(30_000));
      if (reply.headers?.['x-isr-cache'] !== 'HIT') throw new Error('expected a HIT');
    };
    const bare = async () => {
      const item = await s.clients.dynamodb.send(
        new GetItemCommand({
          TableName: s.tableName,
          Key: { pk: { S: pk }, sk: { S: 'META' } },
          ConsistentRead: true, // as the origin reads META (see serve.ts)
        }),
      );
      if (item.Item === undefined) throw new Error('no META');
      const object = await s.clients.s3.send(
        new GetObjectCommand({ Bucket: s.bucket, Key: s3Key }),
      );
      await object.Body?.transformToByteArray();
    };

    // The design not chosen for revalidation: tag state rows read on every request. The same
    // pair, plus a strongly consistent BatchGetItem of the page's two tag rows, which can only be
    // sent once META has said which tags the page has.
    const tagRows = ['demo', 'demo:hit'].map((tag) => ({
      pk: { S: `TAG#_#${tag}` },
      sk: { S: 'STATE' },
    }));
    const tagRead = async () => {
      const item = await s.clients.dynamodb.send(
        new GetItemCommand({
          TableName: s.tableName,
          Key: { pk: { S: pk }, sk: { S: 'META' } },
          ConsistentRead: true,
        }),
      );
      if (item.Item === undefined) throw new Error('no META');
      await s.clients.dynamodb.send(
        new BatchGetItemCommand({
          RequestItems: { [s.tableName]: { Keys: tagRows, ConsistentRead: true } },
        }),
      );
      const object = await s.clients.s3.send(
        new GetObjectCommand({ Bucket: s.bucket, Key: s3Key }),
      );
      await object.Body?.transformToByteArray();
    };

    // The in-progress shard row, holding five tags being marked, as a busy site would have it.
    const shardKey = { pk: { S: 'REVALIDATING#_#0' }, sk: { S: 'STATE' } };
    await s.clients.dynamodb.send(
      new PutItemCommand({
        TableName: s.tableName,
        Item: {
          ...shardKey,
          ...Object.fromEntries(
            [1, 2, 3, 4, 5].map((n) => [`stale#tag-${n}`, { S: `1800000000000|rv_${n}` }]),
          ),
        },
      }),
    );
    const readShard = () =>
      s.clients.dynamodb.send(
        new GetItemCommand({ TableName: s.tableName, Key: shardKey, ConsistentRead: true }),
      );
    let cached: { startedMs: number; read: Promise<unknown> } | undefined;
    const withInProgress = (reuse: boolean) => async () => {
      const now = performance.now();
      if (!reuse || cached === undefined || now - cached.startedMs >= IN_PROGRESS_CACHE_MS)
        cached = { startedMs: now, read: readShard() };
      const [item] = await Promise.all([
        s.clients.dynamodb.send(
          new GetItemCommand({
            TableName: s.tableName,
            Key: { pk: { S: pk }, sk: { S: 'META' } },
            ConsistentRead: true,
          }),
        ),
        cached.read,
      ]);
      if (item.Item === undefined) throw new Error('no META');
      const object = await s.clients.s3.send(
        new GetObjectCommand({ Bucket: s.bucket, Key: s3Key }),
      );
      await object.Body?.transformToByteArray();
    };

    const runs = {
      handler,
      bare,
      tagRead,
      inProgress: withInProgress(true),
      inProgressEvery: withInProgress(false),
    } as const;
    const names = Object.keys(runs) as (keyof typeof runs)[];
    const timings = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<
      keyof typeof runs,
      number[]
    >;
    const warmup = Math.min(300, iterations);
    for (let i = 0; i < warmup; i++) for (const name of names) await runs[name]();
    for (let i = 0; i < iterations; i++) {
      // Rotated order (A B C, B C A, C A B...), so drift weighs on each alike.
      for (let j = 0; j < names.length; j++) {
        const name = names[(i + j) % names.length];
        const started = performance.now();
        await runs[name]();
        timings[name].push(performance.now() - started);
      }
      if (i % 50 === 49 || i === iterations - 1)
        progress('hit path (handler vs bare pair)', i + 1, iterations);
    }
    const stats = (samples: number[]) => ({
      p50: round(percentile(samples, 50), 3),
      p99: round(percentile(samples, 99), 3),
    });
    const result = {
      handler: stats(timings.handler),
      bare: stats(timings.bare),
      tagRead: stats(timings.tagRead),
      inProgress: stats(timings.inProgress),
      inProgressEvery: stats(timings.inProgressEvery),
    };
    const ratio = (a: number, b: number) => round(a / b, 3);
    return {
      iterations,
      pageBytes,
      ...result,
      ratioP50: round(result.handler.p50 / result.bare.p50, 3),
      ratioP99: round(result.handler.p99 / result.bare.p99, 3),
      tagReadRatioP50: round(result.tagRead.p50 / result.bare.p50, 3),
      tagReadRatioP99: round(result.tagRead.p99 / result.bare.p99, 3),
      inProgressRatioP50: ratio(result.inProgress.p50, result.bare.p50),
      inProgressRatioP99: ratio(result.inProgress.p99, result.bare.p99),
      inProgressEveryRatioP50: ratio(result.inProgressEvery.p50, result.bare.p50),
      inProgressEveryRatioP99: ratio(result.inProgressEvery.p99, result.bare.p99),
    };
  } finally {
    s.destroy();
  }
}
