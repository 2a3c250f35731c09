import { describe, expect, it, jest } from '@jest/globals';
import { sweepOrphanBodies } from '../../../../lambda/core/operate/orphan-bodies.js';
import { IndexedStatus, statusShardOf } from '../../../../lambda/core/page/rows.js';
import { runSweep, sweepTasks, taskLogFields } from '../../../../lambda/core/operate/sweep.js';
import { TestClock } from '../../../helpers/clock.js';
import { InMemorySweepCursor } from '../../../../lambda/adapters/sweep-cursor/memory.js';
import { InMemoryBodyListing } from '../../../../lambda/adapters/body-listing/memory.js';
import { InMemoryBodyReferences } from '../../../../lambda/adapters/body-references/memory.js';
import { MemoryTable } from '../../../../lambda/adapters/shared/memory-table.js';
import { InMemoryStatusIndex } from '../../../../lambda/adapters/status-index-reader/memory.js';
import { InMemoryWorkResolution } from '../../../../lambda/adapters/work-resolution/memory.js';

const clock = new TestClock();
const now = clock.seconds;

function indexWith(
  rows: { status: IndexedStatus; pk: string; sk: string; at: number; createdAt?: number }[],
) {
  const index = new InMemoryStatusIndex();
  for (const { status, ...row } of rows) index.add(statusShardOf(status, row.pk), row);
  return index;
}

describe('sweepTasks', () => {
  it('reports a STARTED row as missing only once its expected completion is past', async () => {
    const index = indexWith([
      { status: IndexedStatus.Started, pk: 'CACHE#due', sk: 'REQ#a', at: now },
      { status: IndexedStatus.Started, pk: 'CACHE#late', sk: 'REQ#b', at: now - 1 },
      { status: IndexedStatus.Started, pk: 'CACHE#early', sk: 'REQ#c', at: now + 60 },
    ]);
    const report = await sweepTasks({ index, clock, pageLimit: 10 });
    expect(report.missing.map((row) => row.pk)).toEqual(['CACHE#late']);
    expect(report.startedOpen).toBe(3);
  });

  it('reports FAILED rows with their reason, expired LOCKs, and broken pages', async () => {
    const index = indexWith([
      { status: IndexedStatus.Failed, pk: 'CACHE#f', sk: 'REQ#f', at: now - 100 },
      { status: IndexedStatus.Lease, pk: 'CACHE#gone', sk: 'LOCK', at: now - 1 },
      { status: IndexedStatus.Lease, pk: 'CACHE#live', sk: 'LOCK', at: now + 10 },
      { status: IndexedStatus.Broken, pk: 'CACHE#b', sk: 'META', at: now - 5 },
    ]);
    const shard = statusShardOf(IndexedStatus.Failed, 'CACHE#f');
    index.shards.set(shard, [
      { pk: 'CACHE#f', sk: 'REQ#f', at: now - 100, errorCode: 'refused:status', error: '403' },
    ]);
    const report = await sweepTasks({ index, clock, pageLimit: 10 });
    expect(report.failed).toEqual([expect.objectContaining({ errorCode: 'refused:status' })]);
    expect(report.abandoned.map((row) => row.pk)).toEqual(['CACHE#gone']);
    expect(report.broken.map((row) => row.pk)).toEqual(['CACHE#b']);
    expect(report.missing).toEqual([]);
  });

  it('resolves FAILED and missing work of a page published after it, and reports the rest', async () => {
    const index = indexWith([
      { status: IndexedStatus.Failed, pk: 'CACHE#healed', sk: 'REQ#f1', at: now - 100 },
      { status: IndexedStatus.Failed, pk: 'CACHE#broke-later', sk: 'REQ#f2', at: now - 10 },
      { status: IndexedStatus.Failed, pk: 'REVALIDATE#_', sk: 'REQ#f3', at: now - 100 },
      {
        status: IndexedStatus.Started,
        pk: 'CACHE#healed',
        sk: 'REQ#s1',
        at: now - 1,
        createdAt: now - 60,
      },
      { status: IndexedStatus.Started, pk: 'CACHE#in-flight', sk: 'REQ#s2', at: now + 30 },
    ]);
    const state = new MemoryTable();
    const published = (pk: string, generatedAt: number) =>
      state.metas.set(pk, { pk, s3Key: 'k', generatedAt, revalidateSeconds: 60 });
    published('CACHE#healed', now - 50);
    published('CACHE#broke-later', now - 20);
    published('CACHE#in-flight', now);
    const resolution = new InMemoryWorkResolution(state, index);
    const report = await sweepTasks({ index, clock, pageLimit: 10, resolution });
    expect(report.failed.map((row) => row.sk)).toEqual(['REQ#f3', 'REQ#f2']);
    expect(report.missing).toEqual([]);
    expect(report.resolved).toBe(2);
    expect(report.startedOpen).toBe(1); // the one in flight is left alone
    expect([...resolution.resolved.keys()]).toEqual(['CACHE#healed/REQ#s1', 'CACHE#healed/REQ#f1']);
    // negative control: without the resolution, every row is reported
    const blind = await sweepTasks({
      index: indexWith([
        { status: IndexedStatus.Failed, pk: 'CACHE#healed', sk: 'REQ#f1', at: now - 100 },
      ]),
      clock,
      pageLimit: 10,
    });
    expect(blind.failed).toHaveLength(1);
  });

  it('reads at most pageLimit rows per shard, oldest first, and names the shards it cut short', async () => {
    const pk = 'CACHE#many';
    const rows = [5, 1, 4, 2, 3].map((age) => ({
      status: IndexedStatus.Started,
      pk,
      sk: `REQ#${age}`,
      at: now - age,
    }));
    const report = await sweepTasks({ index: indexWith(rows), clock, pageLimit: 2 });
    expect(report.missing.map((row) => row.sk)).toEqual(['REQ#5', 'REQ#4']);
    expect(report.truncated).toEqual([statusShardOf(IndexedStatus.Started, pk)]);
  });

  it('lists a bounded number of keys per kind in the log fields, and every count', async () => {
    const rows = Array.from({ length: 30 }, (_, i) => ({
      status: IndexedStatus.Failed,
      pk: `CACHE#${i}`,
      sk: 'REQ#x',
      at: now - i,
    }));
    const report = await sweepTasks({ index: indexWith(rows), clock, pageLimit: 100 });
    const fields = taskLogFields(report, 5);
    expect(fields.failedTasks).toBe(30);
    expect(fields.failed).toHaveLength(5);
  });
});

describe('sweepOrphanBodies', () => {
  const AGE = 3_600;
  const old = now - AGE - 1;

  function world() {
    const state = new MemoryTable();
    const listing = new InMemoryBodyListing();
    const references = new InMemoryBodyReferences(state);
    const cursor = new InMemorySweepCursor();
    const deleted: string[] = [];
    const deps = {
      listing,
      references,
      cursor,
      clock,
      bodies: { deleteBody: (key: string) => Promise.resolve(void deleted.push(key)) },
      bodyKeyPrefix: 'pages/',
      orphanAgeSeconds: AGE,
      listLimit: 100,
    };
    return { state, listing, references, cursor, deleted, deps };
  }

  /**
   * The rows of page `CACHE#h`: META pointing at `live` and listing a version per `kept` body,
   * VER# rows META does not list, and a LOCK.
   */
  function page(
    w: ReturnType<typeof world>,
    rows: {
      live?: string;
      kept?: string[];
      unlisted?: [sk: string, s3Key: string][];
      lease?: { token: string; expiresAt: number };
    },
  ) {
    const pk = 'CACHE#h';
    const generation = { pk, generatedAt: 1, revalidateSeconds: 60 };
    const kept = (rows.kept ?? []).map((s3Key, i): [string, string] => [`VER#k${i}`, s3Key]);
    if (rows.live !== undefined) {
      const versionSks = kept.map(([sk]) => sk);
      w.state.metas.set(pk, { ...generation, s3Key: rows.live, versionSks });
    }
    for (const [sk, s3Key] of [...kept, ...(rows.unlisted ?? [])]) {
      w.state.versions.set(MemoryTable.versionId(pk, sk), { ...generation, sk, s3Key });
    }
    if (rows.lease === undefined) w.state.locks.delete(pk);
    else w.state.locks.set(pk, { ...rows.lease, owner: undefined });
  }

  it('retires an old body nothing points to, and never one META or a version names', async () => {
    const w = world();
    w.listing.bodies.push(
      { s3Key: 'pages/_/h/live', writtenAt: old },
      { s3Key: 'pages/_/h/kept', writtenAt: old },
      { s3Key: 'pages/_/h/orphan', writtenAt: old },
    );
    page(w, { live: 'pages/_/h/live', kept: ['pages/_/h/kept'] });
    const report = await sweepOrphanBodies(w.deps);
    expect(w.deleted).toEqual(['pages/_/h/orphan']);
    expect(report).toMatchObject({ listed: 3, inUse: 2, retired: ['pages/_/h/orphan'] });
    // One read for the page, however many of its bodies were listed.
    expect(w.references.reads).toEqual(['CACHE#h']);
  });

  it('leaves bodies within the safety window, and keys it does not recognise', async () => {
    const w = world();
    w.listing.bodies.push(
      { s3Key: 'pages/_/h/young', writtenAt: now - AGE },
      { s3Key: 'pages/not-a-body', writtenAt: old },
    );
    const report = await sweepOrphanBodies(w.deps);
    expect(w.deleted).toEqual([]);
    expect(report).toMatchObject({ young: 1, unrecognised: 1 });
  });

  it('leaves the body of a live lease on its token, and retires it once the lease ran out', async () => {
    const w = world();
    w.listing.bodies.push({ s3Key: 'pages/_/h/tok', writtenAt: old });
    page(w, { lease: { token: 'tok', expiresAt: now + 1 } });
    expect(await sweepOrphanBodies(w.deps)).toMatchObject({ leased: 1, retired: [] });
    page(w, { lease: { token: 'tok', expiresAt: now } });
    expect((await sweepOrphanBodies(w.deps)).retired).toEqual(['pages/_/h/tok']);
  });

  it('deletes the versions META does not list, then retires their old bodies', async () => {
    const w = world();
    w.listing.bodies.push(
      { s3Key: 'pages/_/h/live', writtenAt: old },
      { s3Key: 'pages/_/h/before-expire', writtenAt: old },
      { s3Key: 'pages/_/h/young-unlisted', writtenAt: now },
    );
    page(w, {
      live: 'pages/_/h/live',
      unlisted: [
        ['VER#1', 'pages/_/h/before-expire'],
        ['VER#2', 'pages/_/h/young-unlisted'],
      ],
    });
    const report = await sweepOrphanBodies(w.deps);
    expect(w.references.forgotten).toEqual(['CACHE#h VER#1', 'CACHE#h VER#2']);
    expect(w.deleted).toEqual(['pages/_/h/before-expire']);
    expect(report).toMatchObject({ versionsForgotten: 2, inUse: 1, young: 1 });
  });

  it('keeps a version a publish listed after the read, and its body with it', async () => {
    const w = world();
    w.listing.bodies.push({ s3Key: 'pages/_/h/listed-meanwhile', writtenAt: old });
    page(w, { unlisted: [['VER#3', 'pages/_/h/listed-meanwhile']] });
    // A publish lists the row between the sweeper's read and its delete.
    w.references.beforeForget = (pk) => {
      const generation = { pk, generatedAt: 2, revalidateSeconds: 60 };
      w.state.metas.set(pk, { ...generation, s3Key: 'pages/_/h/new', versionSks: ['VER#3'] });
    };
    const report = await sweepOrphanBodies(w.deps);
    expect(w.references.forgotten).toEqual([]);
    expect(w.deleted).toEqual([]);
    expect(report).toMatchObject({ versionsForgotten: 0, inUse: 1, retired: [] });
  });

  it('deletes no version when every one is listed', async () => {
    const w = world();
    w.listing.bodies.push({ s3Key: 'pages/_/h/live', writtenAt: old });
    page(w, { live: 'pages/_/h/live' });
    const forget = jest.spyOn(w.references, 'forgetUnlisted');
    expect(await sweepOrphanBodies(w.deps)).toMatchObject({ versionsForgotten: 0, inUse: 1 });
    expect(forget).not.toHaveBeenCalled();
  });

  it('carries the listing on across runs and starts a new lap at the end', async () => {
    const w = world();
    for (let i = 0; i < 5; i++) w.listing.bodies.push({ s3Key: `pages/_/h/${i}`, writtenAt: old });
    const deps = { ...w.deps, listLimit: 2 };
    const laps = [];
    for (let run = 0; run < 3; run++) laps.push((await sweepOrphanBodies(deps)).lapComplete);
    expect(laps).toEqual([false, false, true]);
    expect(w.deleted.sort()).toEqual(['0', '1', '2', '3', '4'].map((i) => `pages/_/h/${i}`));
    expect(w.cursor.value).toBeUndefined();
  });
});

describe('runSweep', () => {
  it('reports the parts that worked when another fails, and flushes pending purges', async () => {
    const w = {
      listing: { list: () => Promise.reject(new Error('s3 down')) },
      references: new InMemoryBodyReferences(new MemoryTable()),
      cursor: new InMemorySweepCursor(),
      bodies: { deleteBody: () => Promise.resolve() },
    };
    let flushed = 0;
    const report = await runSweep({
      tasks: { index: new InMemoryStatusIndex(), clock, pageLimit: 10 },
      orphans: { ...w, clock, bodyKeyPrefix: 'pages/', orphanAgeSeconds: 3_600, listLimit: 10 },
      flushPendingPurges: () => Promise.resolve(++flushed + 2),
    });
    expect(report.tasks?.startedOpen).toBe(0);
    expect(report.orphans).toBeUndefined();
    expect(report.errors.map((e) => e.part)).toEqual(['orphans']);
    expect(report.purgesFlushed).toBe(3);
    expect(flushed).toBe(1);
  });
});
