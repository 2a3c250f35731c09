/**
 * The system the revalidation bench measures, behind one seam: `accept` runs until the 202,
 * `drain` until the last page is marked. The inline marking marks every page before its 202
 * (drain has nothing left to do); a background fan-out plugs in here with its own pair.
 */
import { DynamoRevalidationMarks } from '../lambda/adapters/revalidation-marks/dynamodb.js';
import { DynamoTagRevalidations } from '../lambda/adapters/tag-revalidations/dynamodb.js';
import type { CdnPurge } from '../lambda/core/ports.js';
import { revalidate } from '../lambda/core/revalidate/revalidation.js';
import type { AwsClients } from '../lambda/shared/aws-clients.js';
import type { Scenario } from './fixture.js';

export interface TagMarking {
  readonly name: string;
  /** One revalidation of `tag` in mode stale, until its 202. */
  accept(tag: string, effectId: string): Promise<{ readonly pages: number }>;
  /** Runs what the 202 left in the background until every page is marked. */
  drain(): Promise<void>;
}

/** Builds the system on the scenario's table, with clients the bench counts calls on. */
export type MarkingFactory = (s: Scenario, clients: AwsClients) => TagMarking;

/** A CDN that records nothing: the purge by tag is one call whatever the page count. */
const noCdn = {
  invalidateTags: (): Promise<CdnPurge> => Promise.resolve({ status: 'not-configured' }),
};
const noQueue = { enqueue: () => Promise.resolve(), enqueueBatch: () => Promise.resolve() };

/** Today's `revalidate`: every page's LOCK and META are written before the 202. */
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
      const effect = await revalidate(deps, {
        tenant: undefined,
        keys: [],
        tags: [tag],
        mode: 'stale',
        regenerate: false,
        effectId,
      });
      return { pages: effect.pages };
    },
    drain: () => Promise.resolve(),
  };
};
