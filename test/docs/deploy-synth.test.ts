/**
 * The `npx cdk deploy` lines (or synth, diff, bootstrap) of README.md and docs/ (blocks marked
 * `<!-- doc: aws synth -->`) need an AWS account, so each is checked by what cdk does first:
 * the block is run by sh as printed with `npx` recording its arguments, and the app of
 * bin/isr.ts (the stack, with cdk-nag's AWS Solutions checks as a synth plugin) is synthesized
 * with that line's `-c` context. A setting the construct refuses fails the synth; a key the app
 * never reads (a typo CDK would ignore) fails the test.
 */
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, jest } from '@jest/globals';
import { App, Validations } from 'aws-cdk-lib';
import { AwsSolutionsChecks } from 'cdk-nag';
import { Node } from 'constructs';
import { IsrStack } from '../../lib/isr-stack.js';
import { ROOT } from '../helpers/doc-session.js';
import { fencedBlocks } from '../helpers/doc-steps.js';
import { cdkJsonContext } from '../lib/stack-fixture.js';

/** What an `aws synth` block may run: cdk commands that synthesize the app before they act. */
const CDK_COMMANDS = ['deploy', 'synth', 'diff', 'bootstrap'];

const folder = mkdtempSync(join(tmpdir(), 'isr-deploy-synth-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

const PAGES = [
  'README.md',
  ...readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];

/** Each `npx …` the block runs, as the argument lists sh hands to npx (`npx` records them). */
function npxCalls(code: string): string[][] {
  const out = join(folder, `args-${Math.random().toString(16).slice(2)}`);
  const script = `npx() { printf '%s\\0' "$@" >> "$NPX_ARGS"; printf '\\1\\0' >> "$NPX_ARGS"; }\n${code}`;
  execFileSync('sh', ['-e', '-c', script], { env: { PATH: process.env.PATH, NPX_ARGS: out } });
  const calls: string[][] = [[]];
  for (const arg of readFileSync(out, 'utf8').split('\0').slice(0, -1)) {
    if (arg === '\u0001') calls.push([]);
    else calls.at(-1)?.push(arg);
  }
  return calls.filter((call) => call.length > 0);
}

/** `-c key=value` (or `--context`) pairs, as the CDK CLI reads them. */
function contextOf(args: readonly string[]): Record<string, string> {
  const context: Record<string, string> = {};
  args.forEach((arg, i) => {
    if (arg !== '-c' && arg !== '--context') return;
    const pair = args[i + 1] ?? '';
    const at = pair.indexOf('=');
    context[pair.slice(0, at)] = pair.slice(at + 1);
  });
  return context;
}

/** bin/isr.ts's app with `context` as `-c` gives it; the context keys the app read. */
function synthesize(context: Record<string, string>): Set<string> {
  const read = new Set<string>();
  const original = Node.prototype.tryGetContext;
  const spy = jest.spyOn(Node.prototype, 'tryGetContext').mockImplementation(function (
    this: Node,
    key: string,
  ): unknown {
    read.add(key);
    return original.call(this, key);
  });
  try {
    const app = new App({
      outdir: mkdtempSync(join(folder, 'cdk.out-')),
      context: { ...cdkJsonContext(), ...context },
    });
    new IsrStack(app, 'FaceTheoryIsr', { description: 'FaceTheory ISR' });
    Validations.of(app).addPlugins(new AwsSolutionsChecks(app, { verbose: true }));
    app.synth({ force: true });
    return read;
  } finally {
    spy.mockRestore();
  }
}
const deployLines = PAGES.flatMap((page) =>
  fencedBlocks(readFileSync(join(ROOT, page), 'utf8'))
    .filter((block) => block.marker?.name === 'doc' && block.marker.kind === 'aws')
    .filter((block) => block.marker?.arg === 'synth')
    .flatMap((block) =>
      npxCalls(block.code).map((args) => [`${page}:${block.line}`, args] as const),
    ),
);

describe('the cdk deploy lines of the docs, synthesized with their context', () => {
  it('are there: the README and DEPLOY.md deploy with -c settings', () => {
    expect(deployLines.map(([at]) => at.split(':')[0])).toEqual(
      expect.arrayContaining(['README.md', 'docs/DEPLOY.md']),
    );
    // Each synthesizes the app first (bootstrap too, to find its environments).
    for (const [at, args] of deployLines) {
      expect([at, args[0], CDK_COMMANDS.includes(args[1] ?? '')]).toEqual([at, 'cdk', true]);
    }
  });

  // One synth per distinct context (the README repeats DEPLOY's first lines), named where first seen.
  const unique = new Map<string, string>();
  for (const [at, args] of deployLines) {
    const context = JSON.stringify(contextOf(args));
    if (!unique.has(context)) unique.set(context, at);
  }
  it.each([...unique].map(([context, at]) => [at, context] as const))(
    '%s: npx cdk deploy %s synthesizes, every -c key read by the app',
    (_, json) => {
      const context = JSON.parse(json) as Record<string, string>;
      const read = synthesize(context);
      expect(Object.keys(context).filter((key) => !read.has(key))).toEqual([]);
    },
    120_000,
  );

  it('negative controls: a refused value fails the synth, an unread key is caught', () => {
    expect(() => synthesize({ unknownQuery: 'keep' })).toThrow(/unknownQuery/);
    expect(synthesize({ renderOriginURL: 'https://x.example.com' }).has('renderOriginURL')).toBe(
      false,
    );
  }, 120_000);
});
