/**
 * Tag index rows of pages that are gone (issue 19, item 2), on DynamoDB Local and s3rver: an
 * `expire`, the fan-out of a revalidation that finds no META, and the sweeper each remove them,
 * so a gone page costs one mark, not one on every revalidation of its tags for good.
 */
import { DeleteItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DynamoRevalidationMarks } from '../../../../lambda/adapters/revalidation-marks/dynamodb.js';
import { htmlPage } from '../../../../lambda/adapters/renderer/module.js';
import { tagPartition } from '../../../../lambda/adapters/tag-index/dynamodb.js';
import { DynamoTagRevalidations } from '../../../../lambda/adapters/tag-revalidations/dynamodb.js';
import type { CdnPurge } from '../../../../lambda/core/page/ports.js';
import { SortKey } from '../../../../lambda/core/page/rows.js';
import { runSweep } from '../../../../lambda/core/operate/sweep.js';
import {
  revalidate,
  type RevalidationDeps,
} from '../../../../lambda/core/revalidate/revalidation.js';
import type { RevalidationMode } from '../../../../lambda/core/page/model.js';
import { loadSweeperConfig } from '../../../../lambda/shared/config.js';
import { createSweeperDeps } from '../../../../lambda/sweeper/build.js';
import { TestClock } from '../../../helpers/clock.js';
import { countingRenderer } from '../../../helpers/renderers.js';
import {
  createWorkerHarness,
  intentFor,
  type WorkerHarness,
} from '../../../helpers/worker-harness.js';

const clock = new TestClock();
/** Every page carries its own tag (`own:<path>`) and one shared by every page of the test. */
const counter = countingRenderer((request) => ({
  ...htmlPage(`<p>${request.cacheKey.key}</p>`, { revalidateSeconds: 60 }),
  tags: [`own:${request.cacheKey.path.slice(1)}`, 'shared'],
}));
let h: WorkerHarness;
let deps: RevalidationDeps;
let effects = 0;

beforeAll(async () => {
  h = await createWorkerHarness({ renderer: counter.renderer, clock });
  const table = { client: h.clients.dynamodb, tableName: h.tableName };
  deps = {
    marks: new DynamoRevalidationMarks(table),
    tagIndex: new DynamoTagRevalidations(table),
    queue: { enqueue: () => Promise.resolve(), enqueueBatch: () => Promise.resolve() },
    cdn: { invalidateTags: (): Promise<CdnPurge> => Promise.resolve({ status: 'not-configured' }) },
    clock,
    deployId: 'd1',
  };
});
afterAll(() => h.destroy());

const publish = async (path: string) => {
  await h.send(intentFor(path));
  expect(await h.poll(1)).toMatchObject({ received: 1, failed: [] });
};

const revalidateTag = (tag: string, mode: RevalidationMode = 'stale') =>
  revalidate(deps, {
    tenant: undefined,
    keys: [],
    tags: [tag],
    mode,
    regenerate: false,
    effectId: `rv_${++effects}`,
  });

/** The page pks indexed under `tag`, read strongly consistent. */
const indexed = async (tag: string): Promise<string[]> => {
  const { Items = [] } = await h.clients.dynamodb.send(
    new QueryCommand({
      TableName: h.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :page)',
      ExpressionAttributeValues: {
        ':pk': { S: tagPartition(undefined, tag) },
        ':page': { S: 'PAGE#' },
      },
      ConsistentRead: true,
    }),
  );
  return Items.map((item) => (item.sk?.S ?? '').slice('PAGE#'.length)).sort();
};

/** META gone as DynamoDB TTL removes it: the version rows and bodies stay. */
const metaExpiresByTtl = (pk: string) =>
  h.clients.dynamodb.send(
    new DeleteItemCommand({
      TableName: h.tableName,
      Key: { pk: { S: pk }, sk: { S: SortKey.Meta } },
    }),
  );

describe('index rows of gone pages', () => {
  it('an expire removes every row of the pages it expired', async () => {
    await publish('/expired');
    const pk = h.keyFor('/expired').pk;
    expect(await indexed('own:expired')).toEqual([pk]);
    expect((await revalidateTag('own:expired', 'expire')).pages).toBe(1);
    expect(await indexed('own:expired')).toEqual([]);
    expect(await indexed('shared')).not.toContain(pk);
  });

  it('a revalidation that finds a page without META removes its row: the page costs one mark', async () => {
    await publish('/idle');
    const pk = h.keyFor('/idle').pk;
    await metaExpiresByTtl(pk);
    expect((await revalidateTag('own:idle')).pages).toBe(0);
    expect(await indexed('own:idle')).toEqual([]);
    // Its other tags keep their row until they are revalidated or the sweeper reaches the page.
    expect(await indexed('shared')).toContain(pk);
  });

  it('the sweeper removes the rows of a page whose META is gone, before its versions', async () => {
    await publish('/swept');
    const pk = h.keyFor('/swept').pk;
    await metaExpiresByTtl(pk);
    clock.advance(3_601); // past the orphan window
    const config = loadSweeperConfig({
      FACETHEORY_CACHE_TABLE_NAME: h.tableName,
      ISR_BODY_BUCKET: h.bucket,
      ISR_QUEUE_URL: 'http://localhost/unused.fifo',
    });
    const report = await runSweep(createSweeperDeps(config, { clients: h.clients, clock }));
    expect(report.errors).toEqual([]);
    expect(await indexed('own:swept')).toEqual([]);
    expect(await indexed('shared')).not.toContain(pk);
  });

  it('a live page keeps its rows through all of them', async () => {
    await publish('/live');
    const pk = h.keyFor('/live').pk;
    expect((await revalidateTag('own:live')).pages).toBe(1);
    expect(await indexed('own:live')).toEqual([pk]);
    expect(await indexed('shared')).toContain(pk);
  });
});
