import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import type { ServerResponse } from 'node:http';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { GetQueueAttributesCommand, GetQueueUrlCommand, SQSClient } from '@aws-sdk/client-sqs';
import { afterAll, afterEach, beforeAll, describe, expect, it } from '@jest/globals';
import { RENDER_COUNT_SK } from '../../lambda/adapters/render-counter/dynamodb.js';
import { normaliseCacheKey } from '../../lambda/core/page/cache-key.js';
import { freePort } from '../../local/backends/ports.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/backends/local-aws.js';
import { startHttpServer } from '../helpers/http-server.js';
import {
  ctrlC,
  exited,
  npmStart as startIn,
  serviceProcesses,
  stopStarted,
  until,
  wallClockSleep,
  type Started,
} from './npm-start.js';
import { isRunning, javaProcessesFor, listeningAddresses } from './processes.js';
import { rawRequest } from './raw-request.js';

const REVALIDATE = 3;
const root = mkdtempSync(join(tmpdir(), 'isr-e2e-'));
let dirs = 0;
const freshDataDir = () => join(root, `data-${(dirs += 1)}`);

// Whatever a test started is stopped once it ends, passed or failed; shared ones at the end.
afterEach(() => stopStarted((started) => !started.shared));
afterAll(async () => {
  await stopStarted(() => true);
  rmSync(root, { recursive: true, force: true });
});

/** `npm start` on a fresh data folder (unless given one), with pages stale after 3 s. */
const npmStart = (
  options: { dataDir?: string; port?: number; env?: Record<string, string>; shared?: boolean } = {},
) =>
  startIn({
    ...options,
    dataDir: options.dataDir ?? freshDataDir(),
    env: { ISR_REVALIDATE_SECONDS: String(REVALIDATE), ...options.env },
  });

/** `local/start.ts` run to its end (a start expected to fail), on a fresh folder unless told. */
const runStart = (env: Record<string, string>) =>
  spawnSync(process.execPath, ['--import', 'tsx', 'local/start.ts'], {
    env: { ...process.env, ISR_LOCAL_DATA_DIR: freshDataDir(), ...env },
    encoding: 'utf8',
    timeout: 60_000,
  });

async function get(url: string) {
  const response = await fetch(url);
  const text = await response.text();
  return {
    status: response.status,
    cache: response.headers.get('x-isr-cache'),
    count: Number(/<meta name="isr-render-count" content="(\d+)">/.exec(text)?.[1]),
  };
}

/** Messages in the regeneration queue, waiting or being processed by the worker. */
async function queuedRegenerations(sqsEndpoint: string): Promise<number> {
  const sqs = new SQSClient({
    endpoint: sqsEndpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
  });
  try {
    const { QueueUrl } = await sqs.send(
      new GetQueueUrlCommand({ QueueName: 'isr-regeneration.fifo' }),
    );
    const { Attributes } = await sqs.send(
      new GetQueueAttributesCommand({
        QueueUrl,
        AttributeNames: ['ApproximateNumberOfMessages', 'ApproximateNumberOfMessagesNotVisible'],
      }),
    );
    return (
      Number(Attributes?.ApproximateNumberOfMessages) +
      Number(Attributes?.ApproximateNumberOfMessagesNotVisible)
    );
  } finally {
    sqs.destroy();
  }
}

/** The origin alone, behind a local CloudFront that keeps nothing (ISR_LOCAL_EDGE_CACHE=0). */
const ORIGIN_ONLY = { ISR_LOCAL_EDGE_CACHE: '0' };

describe('npm start', () => {
  it('serves MISS, HIT, STALE, then the regenerated page; a storm renders once per stale generation; a restart keeps the cache', async () => {
    const port = await freePort();
    const dataDir = freshDataDir();
    const first = await npmStart({ port, dataDir, env: ORIGIN_ONLY });
    const page = `${first.url}/e2e`;

    expect(await get(page)).toEqual({ status: 200, cache: 'MISS', count: 1 });
    expect(await get(page)).toEqual({ status: 200, cache: 'HIT', count: 1 });
    await wallClockSleep(REVALIDATE * 1000 + 200);
    expect(await get(page)).toEqual({ status: 200, cache: 'STALE', count: 1 });
    expect(
      await until(
        () => get(page),
        (reply) => reply.cache === 'HIT',
      ),
    ).toEqual({
      status: 200,
      cache: 'HIT',
      count: 2,
    });

    // 200 concurrent requests on the stale page: all served at once, one more render. A slow
    // storm may outlive the new page's freshness and see it stale too: each stale generation
    // seen may cause one render, never more, however many requests saw it.
    await wallClockSleep(REVALIDATE * 1000 + 200);
    const storm = await Promise.all(Array.from({ length: 200 }, () => get(page)));
    expect(storm.every((reply) => reply.status === 200 && reply.count >= 2)).toBe(true);
    expect(storm.filter((reply) => reply.cache === 'STALE').length).toBeGreaterThan(0);
    const seen = [...storm];
    await until(
      async () => {
        const reply = await get(page);
        seen.push(reply);
        return reply;
      },
      (reply) => reply.cache === 'HIT' && reply.count >= 3,
    );
    // Nothing left to regenerate: whatever was queued has been processed and deleted.
    await until(
      () => queuedRegenerations(first.sqs),
      (queued) => queued === 0,
    );
    const staleGenerations = new Set(
      seen.filter((reply) => reply.cache === 'STALE').map((reply) => reply.count),
    ).size;
    const dynamodb = new DynamoDBClient({
      endpoint: first.dynamodb,
      region: LOCAL_REGION,
      credentials: LOCAL_CREDENTIALS,
    });
    const pk = normaliseCacheKey({ rawPath: '/e2e' }, { allowedQueryParams: [] }).pk;
    const counter = await dynamodb.send(
      new GetItemCommand({
        TableName: 'isr-cache',
        Key: { pk: { S: pk }, sk: { S: RENDER_COUNT_SK } },
        ConsistentRead: true,
      }),
    );
    dynamodb.destroy();
    const renders = 2 + staleGenerations;
    expect(counter.Item?.render_count).toEqual({ N: String(renders) });

    // Ctrl-C: a clean stop, and no Java process left behind.
    expect(await ctrlC(first)).toContain('stopped cleanly');
    expect(javaProcessesFor(dataDir)).toEqual([]);

    // Restart on the same data: the cached page is served, not rendered again.
    const second = await npmStart({ port, dataDir, env: ORIGIN_ONLY });
    const afterRestart = await get(`${second.url}/e2e`);
    expect(afterRestart.status).toBe(200);
    expect(afterRestart.cache).not.toBe('MISS');
    expect(afterRestart.count).toBe(renders);
    expect(await ctrlC(second)).toContain('stopped cleanly');
    expect(javaProcessesFor(dataDir)).toEqual([]);
  }, 180_000);
});

describe('npm start, running', () => {
  // Started together, so their start-ups overlap; each test below uses its own.
  let serving: Started, onOtherAddress: Started;
  let forSigterm: Started, forSigkill: Started, forJavaDeath: Started, withoutReader: Started;
  let forTakeover: Started;
  beforeAll(async () => {
    [serving, onOtherAddress, forSigterm, forSigkill, forJavaDeath, withoutReader, forTakeover] =
      await Promise.all([
        npmStart({ shared: true }),
        // Another loopback address: it shows the variable is obeyed without opening the LAN.
        npmStart({ shared: true, env: { ISR_LOCAL_BIND_ADDRESS: '127.0.0.2' } }),
        npmStart({ shared: true }),
        npmStart({ shared: true }),
        npmStart({ shared: true }),
        npmStart({ shared: true }),
        npmStart({ shared: true }),
      ]);
  }, 120_000);

  /** Where each of them listens, as the kernel reports it. */
  const boundAddresses = (started: Started) =>
    Object.fromEntries(
      Object.entries({
        server: started.url,
        dynamodb: started.dynamodb,
        s3: started.s3,
        sqs: started.sqs,
      }).map(([what, url]) => [what, listeningAddresses(Number(new URL(url).port))]),
    );

  it('listens on 127.0.0.1 only: the HTTP server, DynamoDB Local, s3rver and SQS', () => {
    expect(boundAddresses(serving)).toEqual({
      server: ['127.0.0.1'],
      dynamodb: ['127.0.0.1'],
      s3: ['127.0.0.1'],
      sqs: ['127.0.0.1'],
    });
  });

  it('puts the HTTP server where ISR_LOCAL_BIND_ADDRESS says, the backends still on 127.0.0.1', async () => {
    expect(onOtherAddress.url).toMatch(/^http:\/\/127\.0\.0\.2:\d+$/);
    expect(boundAddresses(onOtherAddress)).toEqual({
      server: ['127.0.0.2'],
      dynamodb: ['127.0.0.1'],
      s3: ['127.0.0.1'],
      sqs: ['127.0.0.1'],
    });
    expect((await rawRequest(`${onOtherAddress.url}/there`)).status).toBe(200);
  });

  it('answers as the synthesized CloudFront: a Miss, then a Hit from cloudfront with its Age', async () => {
    expect(serving.output()).toContain('cloudfront: the synthesized distribution (behaviours *');
    const first = await rawRequest(`${serving.url}/edge`);
    const second = await rawRequest(`${serving.url}/edge`);
    expect(first.headers['x-cache']).toBe('Miss from cloudfront');
    expect(second.headers['x-cache']).toBe('Hit from cloudfront');
    expect(second.headers.age).toMatch(/^\d+$/);
    expect(second.headers.via).toMatch(/\(CloudFront\)$/);
    expect(second.body.toString()).toBe(first.body.toString());
  });

  it('answers with Content-Length, as a function URL behind CloudFront does', async () => {
    const reply = await rawRequest(`${serving.url}/length`);
    expect(reply.status).toBe(200);
    expect(reply.headers['transfer-encoding']).toBeUndefined();
    expect(reply.headers['content-length']).toBe(String(reply.body.length));
  });

  it('stops node and java too when only the npm process gets SIGTERM', async () => {
    const { java, node } = serviceProcesses(forSigterm);
    process.kill(forSigterm.child.pid ?? 0, 'SIGTERM');
    await exited(forSigterm);
    expect(forSigterm.output()).toContain('stopped cleanly');
    expect({ node: isRunning(node), java: isRunning(java) }).toEqual({ node: false, java: false });
  });

  it('leaves no java behind when node itself is killed with SIGKILL', async () => {
    const { java, node } = serviceProcesses(forSigkill);
    process.kill(node, 'SIGKILL');
    await until(
      () => isRunning(java),
      (alive) => !alive,
      10_000,
    );
    expect(javaProcessesFor(forSigkill.dataDir)).toEqual([]);
  });

  it('refuses a second start on its data directory at once, saying who holds it (issue 19, item 17)', async () => {
    const { node } = serviceProcesses(serving);
    const endpoints = readFileSync(join(serving.dataDir, 'endpoints.json'), 'utf8');
    const second = runStart({
      ISR_LOCAL_DATA_DIR: serving.dataDir,
      PORT: String(await freePort()),
    });
    expect(second.status).toBe(1);
    expect(second.stderr).toMatch(
      new RegExp(
        `data directory ${serving.dataDir} is in use by another npm start ` +
          `\\(pid ${node}, port ${new URL(serving.url).port} on 127\\.0\\.0\\.1, ` +
          `since \\d{4}-\\d\\d-\\d\\dT`,
      ),
    );
    // it stopped before the backends: no second DynamoDB Local, the first's files untouched
    expect(javaProcessesFor(serving.dataDir)).toHaveLength(1);
    expect(readFileSync(join(serving.dataDir, 'endpoints.json'), 'utf8')).toBe(endpoints);
    expect((await get(`${serving.url}/after-second-start`)).status).toBe(200);
  });

  it('takes over the data directory of a start killed with SIGKILL (issue 19, item 17)', async () => {
    const { java, node } = serviceProcesses(forTakeover);
    process.kill(node, 'SIGKILL');
    await until(
      () => isRunning(java),
      (alive) => !alive,
      10_000,
    );
    const again = await npmStart({ dataDir: forTakeover.dataDir });
    expect(again.output()).toContain(`took over ${forTakeover.dataDir} from npm start pid ${node}`);
    expect((await get(`${again.url}/after-takeover`)).status).toBe(200);
  });

  it('still stops cleanly when its output has no reader any more, as after `npm start | tee` and Ctrl-C', async () => {
    const { java, node } = serviceProcesses(withoutReader);
    withoutReader.child.stdout?.destroy(); // what its stop prints now fails with EPIPE
    // SIGTERM to node rather than Ctrl-C, which would end npm by the signal and hide node's code.
    process.kill(node, 'SIGTERM');
    // Each process exits with the one below it: 0 only if node stopped cleanly.
    expect(await exited(withoutReader)).toBe(0);
    expect(isRunning(java)).toBe(false);
  });

  it('says what was not clean, and exits non-zero, when DynamoDB Local dies under it', async () => {
    process.kill(serviceProcesses(forJavaDeath).java, 'SIGKILL');
    const code = await exited(forJavaDeath);
    expect(code).not.toBe(0);
    expect(forJavaDeath.output()).toContain('DynamoDB Local exited with signal SIGKILL');
    expect(forJavaDeath.output()).toContain('stopped, but not cleanly');
    expect(forJavaDeath.output()).not.toContain('stopped cleanly');
  });
});

describe('npm start, on Ctrl-C', () => {
  it('answers the MISS and finishes the regeneration in flight, then stops cleanly with no java left', async () => {
    // An upstream that answers the first render at once and holds every later one until told.
    const held: ServerResponse[] = [];
    let holding = false;
    const answer = (res: ServerResponse) => {
      res.writeHead(200, { 'content-type': 'text/html', 'cache-control': 'public, s-maxage=1' });
      res.end('<!doctype html><p>from upstream</p>');
    };
    const upstream = await startHttpServer((_req, res) => {
      if (holding) held.push(res);
      else answer(res);
    });
    try {
      const started = await npmStart({
        env: {
          RENDER_ORIGIN_URL: upstream.url,
          POWERTOOLS_LOG_LEVEL: 'INFO',
          POWERTOOLS_DEV: 'false',
          ...ORIGIN_ONLY,
        },
      });
      expect((await get(`${started.url}/slow`)).cache).toBe('MISS');
      holding = true;
      // Once stale, one regeneration goes to the worker, whose render the upstream holds.
      await until(
        () => get(`${started.url}/slow`),
        (reply) => reply.cache === 'STALE',
      );
      await until(
        () => held.length,
        (count) => count === 1,
      );
      const miss = get(`${started.url}/other`);
      await until(
        () => held.length,
        (count) => count === 2,
      );

      const { java } = serviceProcesses(started);
      process.kill(-(started.child.pid ?? 0), 'SIGINT');
      await until(
        () => started.output(),
        (text) => text.includes('SIGINT: finishing in-flight work'),
      );
      // The signal reached the whole group, and the service is waiting: DynamoDB Local still
      // runs under the held renders (it is in a process group of its own).
      expect(isRunning(java)).toBe(true);
      held.splice(0).forEach(answer);

      expect(await miss).toMatchObject({ status: 200, cache: 'MISS' });
      await exited(started);
      const afterSignal = started.output().split('SIGINT: finishing in-flight work')[1] ?? '';
      // The render in flight publishes, or refreshes its page when the content has not changed.
      expect(afterSignal).toMatch(
        /"message":"regeneration intent handled".*"decision":"(new|unchanged)"/,
      );
      expect(afterSignal).toContain('stopped cleanly');
      expect(javaProcessesFor(started.dataDir)).toEqual([]);
    } finally {
      await upstream.close();
    }
  }, 120_000);
});

describe('npm start errors', () => {
  it('says which port is taken and what to do', async () => {
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, '127.0.0.1', resolve));
    const port = (blocker.address() as { port: number }).port;
    const result = runStart({ PORT: String(port) });
    blocker.close();
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      `port ${port} (the ISR server; set PORT to use another) is already in use`,
    );
  });

  it('says how to install Java when it is missing', async () => {
    const emptyPath = mkdtempSync(join(tmpdir(), 'no-java-'));
    const result = runStart({ PATH: emptyPath, PORT: String(await freePort()) });
    expect(result.status).toBe(1);
    expect(result.stderr).toContain('apt-get install -y default-jre-headless');
  });
});
