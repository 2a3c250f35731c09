/**
 * The ops CLI against the real local backends (DynamoDB Local, s3rver, local-aws-sqs), through
 * `run()` as a person types it (`--json` parsed back): inspect of a published page, stuck and
 * failed work from the status index, dead letters listed, redriven and deleted, and a rollback
 * that inspect then shows live.
 */
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { PutItemCommand } from '@aws-sdk/client-dynamodb';
import { ReceiveMessageCommand, type Message, type QueueAttributeName } from '@aws-sdk/client-sqs';
import { htmlPage } from '../../lambda/adapters/renderer/module.js';
import { claimItem } from '../../lambda/adapters/shared/dynamodb/request-row.js';
import { run } from '../../cli/run.js';
import type { Target } from '../../cli/target.js';
import type { Inspection } from '../../cli/commands/inspect.js';
import type { StatusRow } from '../../cli/commands/status.js';
import type { DeadLetterView } from '../../cli/commands/dlq.js';
import { TestClock } from '../helpers/clock.js';
import { countingRenderer } from '../helpers/renderers.js';
import { createWorkerHarness, intentFor, type WorkerHarness } from '../helpers/worker-harness.js';

const clock = new TestClock();
/** Pages whose upstream answers 500 for now. */
const down = new Set<string>();
const counter = countingRenderer((request, call) =>
  request.cacheKey.path.startsWith('/fails')
    ? htmlPage('upstream down', { status: 503 })
    : down.has(request.cacheKey.path)
      ? htmlPage('upstream error', { status: 500 })
      : htmlPage(`<p>${request.cacheKey.key} v${call}</p>`, { revalidateSeconds: 60 }),
);
let h: WorkerHarness;
let target: Target;

beforeAll(async () => {
  // One receive: a failing intent is dead-lettered by the worker itself, with its reason.
  h = await createWorkerHarness({
    renderer: counter.renderer,
    clock,
    env: { ISR_MAX_RECEIVE_COUNT: '1' },
  });
  target = {
    kind: 'local',
    name: 'test',
    region: 'us-east-1',
    clients: h.clients,
    tableName: h.tableName,
    bucket: h.bucket,
    queueUrl: h.queues.queueUrl,
    dlqUrl: h.queues.dlqUrl,
    revalidateUrl: undefined,
    distributionId: undefined,
    settings: { allowedQueryParams: [], renderPaths: [], leaseSeconds: 30 },
  };
});
afterAll(() => h.destroy());

/** Runs `isr <argv> --json`; resolves with the exit code and the parsed output. */
async function isr<T>(...argv: string[]): Promise<{ code: number; data: T; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const code = await run([...argv, '--json'], {
    out: (text) => out.push(text),
    err: (text) => err.push(text),
    env: { USER: 'oncall' },
    clock,
    target: () => Promise.resolve(target),
  });
  return { code, data: JSON.parse(out.join('\n') || 'null') as T, err: err.join('\n') };
}

/** Runs `isr <argv>` as a person reads it (tables); resolves with what it printed. */
async function isrText(...argv: string[]): Promise<string> {
  const out: string[] = [];
  const code = await run(argv, {
    out: (text) => out.push(text),
    err: () => undefined,
    env: { USER: 'oncall' },
    clock,
    target: () => Promise.resolve(target),
  });
  if (code !== 0) throw new Error(`isr ${argv.join(' ')} exited ${code}`);
  return out.join('\n');
}

async function publish(path: string): Promise<void> {
  await h.send(intentFor(path));
  await h.poll();
}

describe('isr inspect', () => {
  it('shows a published page: key, pk, fresh META, its version, the COMPLETED request and the body', async () => {
    await publish('/inspected');
    const { code, data } = await isr<Inspection>('inspect', 'http://example.com/inspected?utm=1');
    expect(code).toBe(0);
    expect(data.cacheKey).toMatchObject({ key: '/inspected', pk: h.keyFor('/inspected').pk });
    expect(data.freshness).toEqual({ state: 'fresh', secondsLeft: 60, held: false });
    expect(data.lock).toBeUndefined();
    expect(data.requests).toEqual([expect.objectContaining({ status: 'COMPLETED' })]);
    expect(data.versions).toEqual([expect.objectContaining({ live: true, kept: true })]);
    const body = await h.bodies.getBody(data.meta?.s3Key ?? '');
    expect(data.body).toEqual({
      s3Key: data.meta?.s3Key,
      size: body.body.byteLength,
      etag: body.etag,
    });
  });

  it('says a page that was never rendered is not published, and refuses a path no page has', async () => {
    const never = await isr<Inspection>('inspect', '/never');
    expect(never.code).toBe(0);
    expect(never.data.meta).toBeUndefined();
    expect((await isr('inspect', '/a/../b')).code).toBe(2);
  });
});

describe('isr stuck and isr failed', () => {
  it('lists a STARTED request past its expected completion, and not one still within it', async () => {
    const now = clock.seconds;
    const crashed = h.keyFor('/crashed').pk;
    const running = h.keyFor('/running').pk;
    for (const [pk, key, due] of [
      [crashed, 'crashed-1', now - 5],
      [running, 'running-1', now + 300],
    ] as const) {
      await h.clients.dynamodb.send(
        new PutItemCommand({
          TableName: h.tableName,
          Item: claimItem({
            pk,
            key,
            claimToken: 't',
            requestHash: undefined,
            ttl: now + 3_600,
            inProgressExpiresAtMs: due * 1000,
            createdAt: now - 60,
            lockedBy: 'isr-worker:req-1',
            request: JSON.stringify({ cacheKey: pk === crashed ? '/crashed' : '/running' }),
          }),
        }),
      );
    }
    const { code, data } = await isr<StatusRow[]>('stuck');
    expect(code).toBe(0);
    expect(data).toContainEqual(
      expect.objectContaining({
        kind: 'started',
        pk: crashed,
        sk: 'REQ#crashed-1',
        cacheKey: '/crashed',
        ageSeconds: 5,
        owner: 'isr-worker:req-1',
      }),
    );
    expect(data.some((row) => row.pk === running)).toBe(false);
  });

  it('lists a dead-lettered intent as FAILED with its reason', async () => {
    await publish('/fails-once');
    const { code, data } = await isr<StatusRow[]>('failed');
    expect(code).toBe(0);
    expect(data).toContainEqual(
      expect.objectContaining({
        kind: 'failed',
        pk: h.keyFor('/fails-once').pk,
        error: expect.stringMatching(/503/) as unknown,
      }),
    );
  });
});

describe('isr failed: pages whose renders are failing now', () => {
  const flaky = () => h.keyFor('/flaky').pk;
  const listed = async () =>
    (await isr<StatusRow[]>('failed')).data.filter((row) => row.pk === flaky());

  it('lists a page from its first failed render (retried, not broken), with why, until it publishes again', async () => {
    await publish('/flaky');
    clock.advance(61); // stale: the next intent renders
    expect(await listed()).toEqual([]); // published, nothing failed yet
    down.add('/flaky');
    await publish('/flaky');
    expect(await listed()).toEqual([
      expect.objectContaining({
        kind: 'failing',
        sk: 'META',
        cacheKey: '/flaky',
        failures: 1,
        error: expect.stringMatching(/500/) as unknown,
      }),
    ]);
    expect(await isrText('failed')).toMatch(/^failing +\/flaky +META .* 1 in a row: .*500/m);
    // The upstream answers again: the next publish takes the page out of the list.
    down.delete('/flaky');
    clock.advance(3_600); // past its backoff
    await publish('/flaky');
    expect(await listed()).toEqual([]);
  });
});

describe('isr dlq', () => {
  const receiveMain = async (): Promise<Message[]> =>
    (
      await h.clients.sqs.send(
        new ReceiveMessageCommand({
          QueueUrl: h.queues.queueUrl,
          MaxNumberOfMessages: 10,
          WaitTimeSeconds: 0,
          AttributeNames: ['MessageGroupId' as QueueAttributeName], // local-aws-sqs's name for it
        }),
      )
    ).Messages ?? [];

  it('lists the letters the worker dead-lettered, redrives one to the regeneration queue, deletes another', async () => {
    await h.deadLetters(); // hides earlier tests' letters (for 30 s): the count below is ours
    const poisonId = await h.send('{"v":1,"path":', 'group-p');
    const failingId = await h.send(intentFor('/fails-dlq'), 'group-f');
    await h.poll();

    const listed = await isr<DeadLetterView[]>('dlq', 'list');
    expect(listed.code).toBe(0);
    const bySource = (id: string) => listed.data.find((l) => l.sourceMessageId === id);
    expect(bySource(poisonId)).toMatchObject({ code: 'invalid-message', groupId: 'group-p' });
    expect(bySource(failingId)).toMatchObject({
      groupId: 'group-f',
      body: intentFor('/fails-dlq'),
    });
    // Listing leaves them there.
    expect((await isr<DeadLetterView[]>('dlq', 'list')).data).toHaveLength(listed.data.length);

    const letter = bySource(failingId)?.messageId ?? '';
    const redriven = await isr<{ redriven: { messageId: string }[] }>(
      'dlq',
      'redrive',
      '--id',
      letter,
    );
    expect(redriven.code).toBe(0);
    expect(redriven.data.redriven.map((r) => r.messageId)).toEqual([letter]);
    const back = await receiveMain();
    expect(back).toEqual([
      expect.objectContaining({
        Body: intentFor('/fails-dlq'),
        Attributes: expect.objectContaining({ MessageGroupId: 'group-f' }) as unknown,
      }),
    ]);

    const poison = bySource(poisonId)?.messageId ?? '';
    expect((await isr('dlq', 'delete', '--id', poison)).code).toBe(0);
    const left = (await isr<DeadLetterView[]>('dlq', 'list')).data.map((l) => l.messageId);
    expect(left).not.toContain(letter);
    expect(left).not.toContain(poison);
    expect(left).toHaveLength(listed.data.length - 2);
  });

  it('fails with exit code 1 for a letter that is not there', async () => {
    const { code, err } = await isr('dlq', 'delete', '--id', 'no-such-letter');
    expect(code).toBe(1);
    expect(err).toMatch(/no letter no-such-letter/);
  });
});

describe('isr rollback', () => {
  it('puts the previous version live, which inspect then shows; release says it was not held', async () => {
    await publish('/rolled');
    const first = (await isr<Inspection>('inspect', '/rolled')).data;
    clock.advance(61);
    await publish('/rolled');
    const second = (await isr<Inspection>('inspect', '/rolled')).data;
    expect(second.versions).toHaveLength(2);

    const rolled = await isr<{ to: string }>('rollback', '/rolled', '--hold', '30m');
    expect(rolled.code).toBe(0);
    const after = (await isr<Inspection>('inspect', '/rolled')).data;
    const live = after.versions.find((v) => v.live);
    expect(live?.id).toBe(first.versions[0]?.id);
    expect(after.meta?.s3Key).toBe(first.meta?.s3Key);
    expect(after.freshness).toMatchObject({ state: 'fresh', held: true });
    expect(after.meta?.rolledBack?.by).toBe('oncall@isr-cli');

    expect((await isr<{ decision: string }>('release', '/rolled')).data.decision).toBe('released');
    expect((await isr<{ decision: string }>('release', '/rolled')).data.decision).toBe('not-held');
  });

  it('hold and release record who asked, which inspect shows, and each purges the page from the CDN', async () => {
    await publish('/held');
    const held = await isr<{ by: string; cdn: { status: string } }>(
      'hold',
      '/held',
      '--for',
      '30m',
      '--by',
      'alice',
    );
    expect(held.code).toBe(0);
    expect(held.data).toMatchObject({ by: 'alice', cdn: { status: 'submitted' } });
    expect(held.err).toMatch(/^cdn purge local-cli-\d+-\d+: #/m);
    // No --by: ISR_ACTOR, else the OS user (a deployed stack's: the AWS caller).
    const released = await isr<{ by: string }>('release', '/held');
    expect(released.data.by).toBe('oncall@isr-cli');
    expect(released.err).toMatch(/^cdn purge local-cli-\d+-\d+: #/m);
    const page = (await isr<Inspection>('inspect', '/held')).data;
    expect(page.meta).toMatchObject({
      held: { by: 'alice', at: clock.seconds },
      released: { by: 'oncall@isr-cli', at: clock.seconds },
    });
    expect(await isrText('inspect', '/held')).toMatch(
      /^hold: +by alice, .*; released by oncall@isr-cli, /m,
    );
  });

  it('refuses a rollback with nothing older, exit code 1 and the reason', async () => {
    await publish('/only-once');
    const { code, err } = await isr('rollback', '/only-once');
    expect(code).toBe(1);
    expect(JSON.parse(err)).toMatchObject({ error: 'nothing-older' });
  });
});
