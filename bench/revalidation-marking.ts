/**
 * The system the revalidation bench measures, behind one seam: `accept` runs until the 202,
 * `drain` until the last page is marked. The inline marking marks every page before its 202
 * (drain has nothing left to do); a background fan-out plugs in here with its own pair.
 */
import { setTimeout as wait } from 'node:timers/promises';
import { DynamoFanOutProgressRows } from '../lambda/adapters/fan-out-progress/dynamodb.js';
import { InMemoryRegenerationQueue } from '../lambda/adapters/regeneration-queue/memory.js';
import { DynamoRevalidationMarks } from '../lambda/adapters/revalidation-marks/dynamodb.js';
import { DynamoRevalidationStatuses } from '../lambda/adapters/revalidation-status/dynamodb.js';
import { DynamoRevalidationsInProgress } from '../lambda/adapters/revalidations-in-progress/dynamodb.js';
import { DynamoTagRevalidations } from '../lambda/adapters/tag-revalidations/dynamodb.js';
import type { CdnPurge } from '../lambda/core/page/ports.js';
import { SETTING_DEFAULTS } from '../lambda/core/settings/index.js';
import {
  acceptRevalidation,
  markBatch,
  type FanOutDeps,
} from '../lambda/core/revalidate/fan-out.js';
import { parseFanOut } from '../lambda/core/revalidate/fan-out-message.js';
import { revalidate } from '../lambda/core/revalidate/revalidation.js';
import type { Revalidation } from '../lambda/core/revalidate/model.js';
import type { AwsClients } from '../lambda/shared/aws-clients.js';
import type { Scenario } from './fixture.js';

export interface TagMarking {
  readonly name: string;
  /** One revalidation of `tag` in mode stale, until its 202. */
  accept(tag: string, effectId: string): Promise<{ readonly pages: number }>;
  /** Runs what the 202 left in the background until every page is marked. @returns pages marked */
  drain(): Promise<number>;
}

/** Builds the system on the scenario's table, with clients the bench counts calls on. */
export type MarkingFactory = (s: Scenario, clients: AwsClients) => TagMarking;

/** A CDN that records nothing: the purge by tag is one call whatever the page count. */
const noCdn = {
  invalidateTags: (): Promise<CdnPurge> => Promise.resolve({ status: 'not-configured' }),
};
const noQueue = { enqueue: () => Promise.resolve(), enqueueBatch: () => Promise.resolve() };

/** The inline `revalidate`: every page is marked before the 202. */
export const inlineMarking: MarkingFactory = (s, clients) => {
  const tables = { client: clients.dynamodb, tableName: s.tableName };
  const deps = {
    marks: new DynamoRevalidationMarks(tables),
    tagIndex: new DynamoTagRevalidations(tables),
    queue: noQueue,
    cdn: noCdn,
    clock: s.clock,
    deployId: 'bench',
  };
  return {
    name: 'inline: every page marked before the 202',
    accept: async (tag, effectId) => {
      const effect = await revalidate(deps, tagRevalidation(tag, effectId));
      return { pages: effect.pages };
    },
    drain: () => Promise.resolve(0),
  };
};

/** A `stale` revalidation of one tag, as both marking steps are asked for. */
const tagRevalidation = (tag: string, effectId: string): Revalidation => ({
  tenant: undefined,
  keys: [],
  tags: [tag],
  mode: 'stale',
  regenerate: false,
  effectId,
});

/**
 * The background fan-out (issue 23): `accept` is the revalidate function up to its 202 (its
 * real 250 ms wait included), `drain` runs the queued steps one after the other as the worker
 * does. Every row is on DynamoDB Local (page marks, tag index, status, in-progress and progress
 * rows); the queue is in memory, so the figures are the marking's, not local SQS's latency.
 */
export const fanOutMarking: MarkingFactory = (s, clients) => {
  const tables = { client: clients.dynamodb, tableName: s.tableName };
  const queue = new InMemoryRegenerationQueue();
  const deps: FanOutDeps = {
    marks: new DynamoRevalidationMarks(tables),
    tagIndex: new DynamoTagRevalidations(tables),
    queue,
    cdn: noCdn,
    clock: { now: () => s.clock.now(), sleep: (ms: number) => wait(ms) },
    deployId: 'bench',
    inProgress: new DynamoRevalidationsInProgress(tables),
    shards: 4,
    progress: new DynamoFanOutProgressRows(tables),
    fanOutQueue: queue,
    statuses: new DynamoRevalidationStatuses(tables),
    batchSize: SETTING_DEFAULTS.fanOutBatchSize,
    fanOutConcurrency: SETTING_DEFAULTS.fanOutConcurrency,
    inProgressCacheMs: 250,
  };
  return {
    name:
      `background fan-out: ${SETTING_DEFAULTS.fanOutBatchSize} pages a step, ` +
      `${SETTING_DEFAULTS.fanOutConcurrency} at a time, in-progress rows honoured from the 202`,
    accept: async (tag, effectId) => {
      const accepted = await acceptRevalidation(deps, tagRevalidation(tag, effectId));
      return { pages: accepted.pages };
    },
    drain: async () => {
      let marked = 0;
      for (let step = queue.fanOuts.shift(); step !== undefined; step = queue.fanOuts.shift()) {
        marked += (await markBatch(deps, parseFanOut(step.body))).marked;
      }
      return marked;
    },
  };
};
