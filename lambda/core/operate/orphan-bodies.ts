/**
 * Retires bodies nothing points to. A body is written before the publish that points META at it
 * (body first, then the pointer), so a crash, a lost publish or a best-effort delete that failed
 * leaves an object no row names. A run lists one bounded page of the prefix, continuing from the
 * cursor the previous run saved, so successive runs cover the whole bucket.
 *
 * It also deletes the VER# rows META no longer lists: an `expire` deletes META and the next
 * publish starts a new list, and META's TTL removes an idle page's META; both leave version rows
 * no publish will ever drop. Rows go first, each only while META still does not list it (a
 * publish may list a new row after the read); a row kept that way keeps its body too. A crash
 * between the two leaves a body no row names: the next lap retires it.
 *
 * A body is retired only when all of these hold, read strongly consistent after the listing:
 * - it is older than `orphanAgeSeconds` (> lease + longest function run: its render can no
 *   longer publish it; `core/settings/index.ts` enforces the bound);
 * - neither META's `s3_key` nor a VER# row META lists names it (nor an unlisted row that could
 *   not be deleted);
 * - no live LOCK of its page holds the lease token the key is named after.
 * Retiring is a DeleteObject in the versioned bucket: recoverable until the lifecycle expires it.
 *
 * Cost of a run: one ListObjectsV2; per distinct page among the old bodies, two strongly
 * consistent Queries (LOCK + META, then VER#: ~1 read unit each for small rows); one GetItem and
 * one PutItem on the cursor row; a DeleteObject per orphan. With the default 500 keys, at most
 * ~1,000 read units, and usually far fewer (bodies of one page share the reads). Per unlisted
 * VER# row (rare: after an expire or META's TTL), one two-item TransactWriteItems (~4 write units).
 */
import { epochSeconds, type Clock } from '../clock.js';
import type {
  BodyListing,
  BodyReferences,
  ListedBody,
  PageReferences,
  SweepCursor,
} from './ports.js';
import type { BodyStore, TagRowRemoval } from '../page/ports.js';
import { isBodyLeased } from '../page/lease.js';
import { bodyOwnerOf } from '../page/rows.js';

export interface OrphanSweepDeps {
  readonly listing: BodyListing;
  readonly references: BodyReferences;
  readonly bodies: Pick<BodyStore, 'deleteBody'>;
  readonly cursor: SweepCursor;
  /** Where a gone page's tag index rows are removed; without it they wait for a revalidation. */
  readonly tagRows?: TagRowRemoval | undefined;
  readonly clock: Clock;
  readonly bodyKeyPrefix: string;
  readonly orphanAgeSeconds: number;
  readonly listLimit: number;
  /** Pages whose references are read at once. @default 8 */
  readonly concurrency?: number;
}

export interface OrphanReport {
  readonly listed: number;
  /** Bodies deleted this run. */
  readonly retired: readonly string[];
  /** Younger than the safety window: left for a later lap. */
  readonly young: number;
  /** Named by META or a version it lists (or by an unlisted row a publish listed meanwhile). */
  readonly inUse: number;
  /** VER# rows META no longer listed, deleted this run. */
  readonly versionsForgotten: number;
  /** Named after the token of a live lease: its render may still publish it. */
  readonly leased: number;
  /** Keys that are not `<prefix><tenant>/<hash>/<token>`: never ours to delete. */
  readonly unrecognised: number;
  /** The listing reached the end of the prefix: the next run starts a new lap. */
  readonly lapComplete: boolean;
}

/** One bounded step of the lap over the body prefix. */
export async function sweepOrphanBodies(deps: OrphanSweepDeps): Promise<OrphanReport> {
  const now = epochSeconds(deps.clock);
  const start = await deps.cursor.load();
  const page = await deps.listing.list({ cursor: start, limit: deps.listLimit });
  const counts = { young: 0, inUse: 0, leased: 0, unrecognised: 0, versionsForgotten: 0 };
  const byPage = new Map<string, { body: ListedBody; token: string; tenant?: string }[]>();
  for (const body of page.bodies) {
    if (now - body.writtenAt <= deps.orphanAgeSeconds) {
      counts.young += 1;
      continue;
    }
    const owner = bodyOwnerOf(body.s3Key, deps.bodyKeyPrefix);
    if (owner === undefined) {
      counts.unrecognised += 1;
      continue;
    }
    const bodies = byPage.get(owner.pk) ?? [];
    bodies.push({ body, token: owner.token, tenant: owner.tenant });
    byPage.set(owner.pk, bodies);
  }

  const retired: string[] = [];
  const pages = [...byPage.entries()];
  const concurrency = deps.concurrency ?? 8;
  for (let i = 0; i < pages.length; i += concurrency) {
    await Promise.all(
      pages.slice(i, i + concurrency).map(async ([pk, bodies]) => {
        // Read after the listing: a pointer written before this read is seen (consistent read).
        const refs = await deps.references.of(pk);
        const inUse = new Set(refs.s3Keys);
        if (refs.unlisted.length > 0) {
          await unindexStrayTags(deps, bodies[0]?.tenant, pk, refs);
          const sks = refs.unlisted.map((version) => version.sk);
          const forgotten = new Set(await deps.references.forgetUnlisted(pk, sks));
          counts.versionsForgotten += forgotten.size;
          // A row the guard kept was listed meanwhile: its body is in use after all.
          for (const { sk, s3Key } of refs.unlisted)
            if (!forgotten.has(sk) && s3Key !== undefined) inUse.add(s3Key);
        }
        for (const { body, token } of bodies) {
          if (inUse.has(body.s3Key)) counts.inUse += 1;
          else if (isBodyLeased(refs.lease, token, now)) counts.leased += 1;
          else {
            await deps.bodies.deleteBody(body.s3Key);
            retired.push(body.s3Key);
          }
        }
      }),
    );
  }
  // Saved after the page is done: a run that crashes redoes its page, which is harmless.
  await deps.cursor.save(page.next);
  return {
    listed: page.bodies.length,
    retired: retired.sort(),
    ...counts,
    lapComplete: page.next === undefined,
  };
}

/**
 * The index rows of tags only versions META no longer lists carried (every tag, once META is
 * gone by TTL) go before those versions do, while their tags are still known: so a gone page
 * stops costing marks. Guarded (`TagRowRemoval`): a page being published keeps its rows.
 */
async function unindexStrayTags(
  deps: OrphanSweepDeps,
  tenant: string | undefined,
  pk: string,
  refs: PageReferences,
): Promise<void> {
  const live = new Set(refs.tags ?? []);
  const stray = new Set(refs.unlisted.flatMap((version) => version.tags ?? []));
  const gone = [...stray].filter((tag) => !live.has(tag));
  if (deps.tagRows !== undefined && gone.length > 0) await deps.tagRows.remove(tenant, pk, gone);
}
