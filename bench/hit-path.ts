/**
 * Hit path: latency of the origin handler serving a fresh page, against the bare GetItem +
 * GetObject pair it must make, measured interleaved (A, B, A, B...) in one process on the same
 * backends and clients, so drift and noise hit both alike.
 */
import { BatchGetItemCommand, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetObjectCommand } from '@aws-sdk/client-s3';
import { buildOriginHandler } from '../lambda/origin/build.js';
import { normaliseCacheKey } from '../lambda/core/cache-key.js';
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
}

export async function hitPath(
  backends: Backends,
  iterations: number,
  pageBytes = 20_000,
): Promise<HitPathResult> {
  const s = await scenario(backends, { pageBytes });
  try {
    const origin = buildOriginHandler(s.originConfig, {
      clients: s.clients,
      clock: s.clock,
      renderer: s.renderer,
    });
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

    const runs = { handler, bare, tagRead } as const;
    const names = Object.keys(runs) as (keyof typeof runs)[];
    const timings = { handler: [] as number[], bare: [] as number[], tagRead: [] as number[] };
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
    };
    return {
      iterations,
      pageBytes,
      ...result,
      ratioP50: round(result.handler.p50 / result.bare.p50, 3),
      ratioP99: round(result.handler.p99 / result.bare.p99, 3),
      tagReadRatioP50: round(result.tagRead.p50 / result.bare.p50, 3),
      tagReadRatioP99: round(result.tagRead.p99 / result.bare.p99, 3),
    };
  } finally {
    s.destroy();
  }
}
