/**
 * The first hour of a new user (issue 35): README.md, then docs/OPERATIONS.md, then
 * docs/REVALIDATION.md, every `doc`-marked step run as printed, in order, in one fresh clone with
 * one `npm start` (REVALIDATION's own serve step restarts it with a secret, as the page says).
 * Only the port and folders are substituted (test/helpers/doc-session.ts); each step must exit 0
 * and print what its `prints` block says. OPERATIONS' `<placeholders>` are filled from the
 * running service, as a reader copies them from an earlier output; its `dlq` lines need a dead
 * letter, so one poison intent is queued first (the worker dead-letters it with its reason).
 */
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { LOCAL_CREDENTIALS } from '../../local/backends/local-aws.js';
import { readEndpointsFile } from '../../local/endpoints-file.js';
import type { Inspection } from '../../cli/commands/inspect.js';
import type { DeadLetterView } from '../../cli/commands/dlq.js';
import { DocSession, FIRST_HOUR_DOCS, sessionSteps } from '../helpers/doc-session.js';
import { poll } from '../helpers/doc-steps.js';

const steps = sessionSteps(FIRST_HOUR_DOCS);
const printed = new Map<string, string>();
const key = (step: { doc: string; line: number }) => `${step.doc}:${step.line}`;

/** The built CLI in the clone (what `npx isr` runs), for reading values a reader would copy. */
async function isrJson<T>(session: DocSession, ...argv: string[]): Promise<T> {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    [join(session.clone, 'dist/cli/isr.mjs'), ...argv, '--json'],
    { cwd: session.clone, env: session.env() },
  );
  return JSON.parse(stdout) as T;
}

/** A poison intent on the regeneration queue: the worker dead-letters it at its first receive. */
async function poisonIntent(session: DocSession): Promise<void> {
  const found = await readEndpointsFile(join(session.clone, '.local'));
  if (found === undefined) throw new Error('npm start is not running');
  const sqs = new SQSClient({
    region: found.region,
    endpoint: found.endpoints.sqs,
    credentials: LOCAL_CREDENTIALS,
  });
  try {
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: found.queueUrl,
        MessageBody: '{"v":1,"path":',
        MessageGroupId: 'doc-poison',
        MessageDeduplicationId: `doc-poison-${Date.now()}`,
      }),
    );
  } finally {
    sqs.destroy();
  }
}

/** A dead letter's id, once the DLQ has one (the first `<id>` queues a poison intent). */
async function letterId(session: DocSession): Promise<string> {
  let letters = await isrJson<DeadLetterView[]>(session, 'dlq', 'list');
  if (letters.length === 0) await poisonIntent(session);
  await poll(
    async () => {
      letters = await isrJson<DeadLetterView[]>(session, 'dlq', 'list');
      return letters.length > 0;
    },
    60,
    500,
  );
  const id = letters[0]?.messageId;
  if (id === undefined) throw new Error('no dead letter appeared');
  return id;
}

const session = new DocSession({
  fill: async (name, s) => {
    switch (name) {
      case 'version': {
        const page = await isrJson<Inspection>(s, 'inspect', '/hello');
        const older = page.versions.find((version) => version.kept && !version.live);
        if (older === undefined) throw new Error('/hello has no kept version but the live one');
        return older.id.slice(0, 12); // a unique prefix, as the page says one does
      }
      case 'id':
        return letterId(s);
      case 'k':
        return `doc-ops-${Date.now()}`;
      case 'effect_id': {
        const ids = s.outputs.join('\n').match(/rv_[0-9a-f]{32}/g) ?? [];
        const last = ids.at(-1);
        if (last === undefined) throw new Error('no effect id printed yet');
        return last;
      }
      default:
        throw new Error(`no value for <${name}>: teach test/docs/first-hour.test.ts to fill it`);
    }
  },
});

beforeAll(() => session.open(), 60_000);
afterAll(() => session.close(), 60_000);

describe('the first hour: README, OPERATIONS, REVALIDATION as printed, in one clone', () => {
  it('has the steps a newcomer runs, npm start first', () => {
    expect(steps[0]).toMatchObject({ doc: 'README.md', kind: 'setup' });
    expect(new Set(steps.map((step) => step.doc))).toEqual(new Set(FIRST_HOUR_DOCS));
  });

  it.each(steps.map((step) => [key(step), step.kind, step] as const))(
    '%s (%s) runs as printed',
    async (_, __, step) => {
      const output = session.run(step);
      await expect(output).resolves.toEqual(expect.any(String));
      printed.set(key(step), await output);
    },
    180_000,
  );

  it("npm start's ready line names the demo's /hello", () => {
    expect(session.servedOutput()).toMatch(
      new RegExp(`ISR ready on http://localhost:${session.port}  try: curl -i \\S+/hello\\n`),
    );
  });

  it("a tag's 202 says the command that follows its marking", () => {
    const receipts = [...printed.values()].join('\n');
    expect(receipts).toMatch(/"status": "isr revalidate status rv_[0-9a-f]{32} --wait"/);
  });

  it('negative controls: a wrong secret is a 401, and the CLI without one says to set it', async () => {
    // After REVALIDATION's steps npm start requires ISR_REVALIDATE_SECRET=whsec_example.
    const recipe = steps.find((step) => step.doc === 'docs/REVALIDATION.md' && step.kind === 'run');
    if (recipe === undefined) throw new Error('REVALIDATION.md lost its recipe');
    const wrong = await session.shell(recipe.code.replace('SECRET=whsec_example', 'SECRET=nope'));
    expect(wrong).toMatch(/^HTTP\/1\.1 401 /);
    expect(wrong).toMatch(/"reason":"signature-mismatch"/);
    const cli = await session.shell('npm run isr -- revalidate --path /hello').then(
      () => 'exit 0',
      (error: Error) => error.message,
    );
    expect(cli).toMatch(/revalidation refused: HTTP 401 \(missing-signature\)/);
    expect(cli).toMatch(/next: the endpoint requires a signature: set ISR_REVALIDATE_SECRET/);
  }, 60_000);

  it('negative control: a step that fails fails its test (a rollback with nothing to roll back)', async () => {
    await expect(session.shell('npm run isr -- rollback /never-rendered')).rejects.toThrow(
      /page-not-found/,
    );
  }, 60_000);
});
