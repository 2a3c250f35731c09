/**
 * The sweeper deletes the VER# rows META no longer lists (after an `expire`, or META gone by
 * TTL) and then retires their bodies, on the real DynamoDB Local and s3rver; a row a publish
 * lists between the sweeper's read and its delete is kept, and without the guard it is lost.
 */
import {
  DeleteItemCommand,
  PutItemCommand,
  QueryCommand,
  UpdateItemCommand,
} from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { Guard } from '../../../lambda/adapters/shared/dynamodb/conditions.js';
import { DynamoBodyReferences } from '../../../lambda/adapters/body-references/dynamodb.js';
import { itemToMeta, versionToItem } from '../../../lambda/adapters/shared/dynamodb/items.js';
import { DynamoRevalidationMarks } from '../../../lambda/adapters/revalidation-marks/dynamodb.js';
import { htmlPage } from '../../../lambda/adapters/renderer/module.js';
import { BodyNotFoundError } from '../../../lambda/core/errors.js';
import type { BodyReferences } from '../../../lambda/core/operate/ports.js';
import { bodyKeyOf, SortKey } from '../../../lambda/core/page/rows.js';
import { runSweep, type SweepReport } from '../../../lambda/core/operate/sweep.js';
import { loadSweeperConfig } from '../../../lambda/shared/config.js';
import { createSweeperDeps } from '../../../lambda/sweeper/build.js';
import { TestClock } from '../../helpers/clock.js';
import { removeGuard } from '../../helpers/guard-mutation.js';
import { countingRenderer } from '../../helpers/renderers.js';
import {
  createWorkerHarness,
  intentFor,
  type WorkerHarness,
} from '../../helpers/worker-harness.js';

const clock = new TestClock();
const counter = countingRenderer((request) =>
  htmlPage(`<p>${request.cacheKey.key} at ${clock.seconds}</p>`, { revalidateSeconds: 60 }),
);
let h: WorkerHarness;
let table: { client: WorkerHarness['clients']['dynamodb']; tableName: string };

beforeAll(async () => {
  h = await createWorkerHarness({ renderer: counter.renderer, clock });
  table = { client: h.clients.dynamodb, tableName: h.tableName };
});
afterAll(() => h.destroy());

/** Publishes `path` through the real worker; returns META's body key and current version. */
const publish = async (path: string) => {
  await h.send(intentFor(path));
  expect(await h.poll(1)).toMatchObject({ received: 1, failed: [] });
  const meta = itemToMeta((await h.row(h.keyFor(path).pk, SortKey.Meta)) ?? {});
  return { s3Key: meta.s3Key, sk: meta.currentSk ?? '' };
};

/** The page's VER# rows as `sk → s3_key`, read strongly consistent. */
const versionRows = async (pk: string): Promise<Record<string, string | undefined>> => {
  const { Items = [] } = await h.clients.dynamodb.send(
    new QueryCommand({
      TableName: h.tableName,
      KeyConditionExpression: 'pk = :pk AND begins_with(sk, :ver)',
      ExpressionAttributeValues: { ':pk': { S: pk }, ':ver': { S: 'VER#' } },
      ConsistentRead: true,
    }),
  );
  return Object.fromEntries(Items.map((item) => [item.sk?.S ?? '', item.s3_key?.S]));
};

const exists = async (s3Key: string): Promise<boolean> =>
  h.bodies.getBody(s3Key).then(
    () => true,
    (error: unknown) => {
      if (error instanceof BodyNotFoundError) return false;
      throw error;
    },
  );

async function sweep(references?: (real: BodyReferences) => BodyReferences): Promise<SweepReport> {
  const config = loadSweeperConfig({
    FACETHEORY_CACHE_TABLE_NAME: h.tableName,
    ISR_BODY_BUCKET: h.bucket,
    ISR_QUEUE_URL: 'http://localhost/unused.fifo',
  });
  const deps = createSweeperDeps(config, { clients: h.clients, clock });
  const orphans = {
    ...deps.orphans,
    references: references?.(deps.orphans.references) ?? deps.orphans.references,
  };
  const report = await runSweep({ ...deps, orphans });
  expect(report.errors).toEqual([]);
  return report;
}

describe('the sweeper deletes versions META no longer lists', () => {
  it('after an expire: the old versions and their bodies go, the new list stays', async () => {
    const pk = h.keyFor('/expired').pk;
    const first = await publish('/expired');
    clock.advance(61);
    const second = await publish('/expired');
    expect(await new DynamoRevalidationMarks(table).expire(pk)).toBeDefined();
    const third = await publish('/expired');
    expect(Object.keys(await versionRows(pk)).sort()).toEqual(
      [first.sk, second.sk, third.sk].sort(),
    );
    clock.advance(3_601); // every body is now past the safety window

    const report = await sweep();
    expect(report.orphans?.versionsForgotten).toBe(2);
    expect(await versionRows(pk)).toEqual({ [third.sk]: third.s3Key });
    expect(report.orphans?.retired).toEqual([first.s3Key, second.s3Key].sort());
    expect(await exists(first.s3Key)).toBe(false);
    expect(await exists(second.s3Key)).toBe(false);
    expect(await exists(third.s3Key)).toBe(true);
    // A second run finds nothing more to delete.
    expect((await sweep()).orphans).toMatchObject({ versionsForgotten: 0, retired: [] });
  });

  it('after META is gone (its TTL): every version and body of the page goes', async () => {
    const pk = h.keyFor('/idle').pk;
    const only = await publish('/idle');
    await h.clients.dynamodb.send(
      new DeleteItemCommand({
        TableName: h.tableName,
        Key: { pk: { S: pk }, sk: { S: SortKey.Meta } },
      }),
    );
    clock.advance(3_601);
    const report = await sweep();
    expect(report.orphans?.versionsForgotten).toBe(1);
    expect(await versionRows(pk)).toEqual({});
    expect(report.orphans?.retired).toEqual([only.s3Key]);
  });
});

describe('a version a publish lists after the sweeper read', () => {
  /**
   * A VER# row and its old body that META does not list yet, and references that let a publish
   * list it right after the sweeper's read (the window between the read and the delete).
   */
  async function raced(path: string) {
    const key = h.keyFor(path);
    await publish(path);
    const meta = itemToMeta((await h.row(key.pk, SortKey.Meta)) ?? {});
    const sk = `VER#${String(clock.seconds + 1).padStart(10, '0')}-raced`;
    const s3Key = bodyKeyOf(key, 'raced');
    await h.bodies.putBody({ s3Key, body: new Uint8Array([1]), contentType: 'text/html' });
    await h.clients.dynamodb.send(
      new PutItemCommand({
        TableName: h.tableName,
        Item: versionToItem({ ...meta, s3Key, currentSk: sk }),
      }),
    );
    clock.advance(3_601);
    const listAfterRead = (real: BodyReferences): BodyReferences => ({
      of: async (pk) => {
        const refs = await real.of(pk);
        if (pk === key.pk) {
          expect(refs.unlisted.map((version) => version.sk)).toEqual([sk]);
          await h.clients.dynamodb.send(
            new UpdateItemCommand({
              TableName: h.tableName,
              Key: { pk: { S: pk }, sk: { S: SortKey.Meta } },
              UpdateExpression: 'SET version_sks = list_append(:sk, version_sks)',
              ExpressionAttributeValues: { ':sk': { L: [{ S: sk }] } },
            }),
          );
        }
        return refs;
      },
      forgetUnlisted: (pk, sks) => real.forgetUnlisted(pk, sks),
    });
    return { pk: key.pk, sk, s3Key, listAfterRead };
  }

  const listed = async (pk: string) =>
    itemToMeta((await h.row(pk, SortKey.Meta)) ?? {}).versionSks ?? [];

  it('is kept, with its body', async () => {
    const race = await raced('/raced');
    const report = await sweep(race.listAfterRead);
    expect(report.orphans?.versionsForgotten).toBe(0);
    expect(await listed(race.pk)).toContain(race.sk);
    expect(await h.row(race.pk, race.sk)).toBeDefined();
    expect(await exists(race.s3Key)).toBe(true);
  });

  it('negative control: without the META condition, the listed version is lost', async () => {
    const race = await raced('/raced-unguarded');
    const restore = removeGuard(h.clients.dynamodb, Guard.versionUnlisted);
    try {
      await sweep(race.listAfterRead);
    } finally {
      restore();
    }
    expect(await listed(race.pk)).toContain(race.sk);
    expect(await h.row(race.pk, race.sk)).toBeUndefined();
    expect(await exists(race.s3Key)).toBe(false);
  });

  it('is refused by the adapter when its list is stale, and deleted when truly unlisted', async () => {
    const pk = h.keyFor('/stale-list').pk;
    const live = await publish('/stale-list');
    const references = new DynamoBodyReferences(table);
    expect(await references.forgetUnlisted(pk, [live.sk])).toEqual([]);
    expect(await h.row(pk, live.sk)).toBeDefined();
    const stray = await versionRowFrom(pk, live.sk, 'VER#0000000001-stray');
    expect(await references.forgetUnlisted(pk, [stray])).toEqual([stray]);
    expect(await h.row(pk, stray)).toBeUndefined();
  });
});

/** Copies version `from` of `pk` to a new VER# row `sk` that META does not list. */
async function versionRowFrom(pk: string, from: string, sk: string): Promise<string> {
  const row = (await h.row(pk, from)) ?? {};
  await h.clients.dynamodb.send(
    new PutItemCommand({ TableName: h.tableName, Item: { ...row, sk: { S: sk } } }),
  );
  return sk;
}
