import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DynamoDBClient, GetItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, describe, expect, it } from '@jest/globals';
import { RENDER_COUNT_SK } from '../../lambda/adapters/dynamodb/render-counter.js';
import { normaliseCacheKey } from '../../lambda/core/cache-key.js';
import { freePort } from '../../local/backends/ports.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from '../../local/backends/local-aws.js';
import { sleep } from '../helpers/renderers.js';

const REVALIDATE = 3;
const dataDir = mkdtempSync(join(tmpdir(), 'isr-e2e-'));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

interface Started {
  readonly child: ChildProcess;
  readonly url: string;
  readonly dynamodb: string;
  output(): string;
}

/** `npm start`, as a user runs it, in a process group of its own (like a terminal job). */
async function npmStart(port: number): Promise<Started> {
  const child = spawn('npm', ['start'], {
    env: {
      ...process.env,
      PORT: String(port),
      ISR_LOCAL_DATA_DIR: dataDir,
      ISR_REVALIDATE_SECONDS: String(REVALIDATE),
    },
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const deadline = Date.now() + 90_000;
  while (!/ISR ready on (\S+)/.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline)
      throw new Error(`npm start did not get ready:\n${output}`);
    await sleep(100);
  }
  return {
    child,
    url: /ISR ready on (\S+)/.exec(output)?.[1] ?? '',
    dynamodb: /dynamodb: (\S+)/.exec(output)?.[1] ?? '',
    output: () => output,
  };
}

/**
 * Ctrl-C: SIGINT to the whole process group, as a terminal sends it. Resolves once every process
 * that held the output has exited (npm itself dies of the signal; the service shuts down after).
 */
async function ctrlC(started: Started): Promise<string> {
  const closed = new Promise<void>((resolve) => started.child.once('close', () => resolve()));
  process.kill(-(started.child.pid ?? 0), 'SIGINT');
  await closed;
  return started.output();
}

async function get(url: string) {
  const response = await fetch(url);
  const text = await response.text();
  return {
    status: response.status,
    cache: response.headers.get('x-isr-cache'),
    count: Number(/<meta name="isr-render-count" content="(\d+)">/.exec(text)?.[1]),
  };
}

async function until<T>(
  probe: () => Promise<T>,
  done: (value: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (done(value)) return value;
    if (Date.now() > deadline) throw new Error(`gave up waiting; last: ${JSON.stringify(value)}`);
    await sleep(200);
  }
}

const javaProcessesFor = (dir: string) =>
  spawnSync('pgrep', ['-f', `DynamoDBLocal.jar.*${dir}`], { encoding: 'utf8' }).stdout.trim();

describe('npm start', () => {
  it('serves MISS, HIT, STALE, then the regenerated page; a storm renders once; a restart keeps the cache', async () => {
    const port = await freePort();
    const first = await npmStart(port);
    const page = `${first.url}/e2e`;

    expect(await get(page)).toEqual({ status: 200, cache: 'MISS', count: 1 });
    expect(await get(page)).toEqual({ status: 200, cache: 'HIT', count: 1 });
    await sleep(REVALIDATE * 1000 + 200);
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

    // 200 concurrent requests on the stale page: all served at once, exactly one more render.
    await sleep(REVALIDATE * 1000 + 200);
    const storm = await Promise.all(Array.from({ length: 200 }, () => get(page)));
    expect(storm.every((reply) => reply.status === 200 && reply.count >= 2)).toBe(true);
    expect(storm.filter((reply) => reply.cache === 'STALE').length).toBeGreaterThan(0);
    await until(
      () => get(page),
      (reply) => reply.count === 3,
    );
    await sleep(1_500); // room for any second regeneration to show up (none may)
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
    expect(counter.Item?.render_count).toEqual({ N: '3' });

    // Ctrl-C: a clean stop, and no Java process left behind.
    expect(await ctrlC(first)).toContain('stopped cleanly');
    expect(javaProcessesFor(dataDir)).toBe('');

    // Restart on the same data: the cached page is served, not rendered again.
    const second = await npmStart(port);
    const afterRestart = await get(`${second.url}/e2e`);
    expect(afterRestart.status).toBe(200);
    expect(afterRestart.cache).not.toBe('MISS');
    expect(afterRestart.count).toBe(3);
    expect(await ctrlC(second)).toContain('stopped cleanly');
    expect(javaProcessesFor(dataDir)).toBe('');
  }, 180_000);
});

describe('npm start errors', () => {
  const runStart = (env: Record<string, string>) =>
    spawnSync(process.execPath, ['--import', 'tsx', 'local/start.ts'], {
      env: { ...process.env, ISR_LOCAL_DATA_DIR: dataDir, ...env },
      encoding: 'utf8',
      timeout: 60_000,
    });

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
