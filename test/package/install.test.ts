/**
 * A CDK app that never saw this repository: the package is packed (`npm pack`, which builds
 * it), installed from the tarball with aws-cdk-lib and constructs only into a temporary app
 * outside the repository, and the README's "Use it in your CDK app" snippet, with
 * docs/DEPLOY.md's "Your own distribution" and "Your own table and bucket" added to it (a second
 * and a third stack), synthesizes there,
 * type-checked, as an ES module and as CommonJS (what `cdk init app --language typescript`
 * makes). Its Lambda assets must be the packed bundles, which test/package/bundles.test.ts runs.
 */
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { packageRoot } from '../../lib/isr-function-code.js';

const run = promisify(execFile);
const ROOT = packageRoot();
const FUNCTIONS = ['origin', 'worker', 'revalidate', 'sweeper', 'purger'] as const;

/** The first ts code block under `heading` (a whole line of the document), as printed. */
function snippetUnder(document: string, heading: string): string {
  const section = document.split(new RegExp(`^${heading}$`, 'm'))[1] ?? '';
  const code = /```ts\n([\s\S]*?)```/.exec(section)?.[1];
  if (code === undefined) throw new Error(`no ts block under "${heading}"`);
  return code;
}

/** Packed files that are not what a consumer needs (tests, sources, benches, local data). */
function unexpectedPackageFiles(paths: readonly string[]): string[] {
  const allowed =
    /^(package\.json|README\.md|CHANGELOG\.md|LICENSE|dist\/(esm|functions|cli|next)\/.+)$/;
  return paths.filter(
    (path) => !allowed.test(path) || (/\.ts$/.test(path) && !/\.d\.ts$/.test(path)),
  );
}

const sha256 = (file: string) => createHash('sha256').update(readFileSync(file)).digest('hex');
const contentsOf = (directory: string) =>
  Object.fromEntries(readdirSync(directory).map((name) => [name, sha256(join(directory, name))]));

interface Resource {
  readonly Type: string;
  readonly Properties: Record<string, unknown>;
}
type TemplateJson = { Resources: Record<string, Resource>; Outputs?: Record<string, unknown> };
interface Behaviour {
  readonly PathPattern?: string;
  readonly TargetOriginId: string;
  readonly FunctionAssociations?: { EventType: string }[];
  readonly CachePolicyId?: unknown;
  readonly OriginRequestPolicyId?: unknown;
  readonly ResponseHeadersPolicyId?: unknown;
}
interface DistributionConfig {
  readonly DefaultCacheBehavior: Behaviour;
  readonly CacheBehaviors: Behaviour[];
  readonly Origins: { Id: string; DomainName: unknown; OriginAccessControlId?: unknown }[];
  readonly CacheTagConfig?: unknown;
}

const work = mkdtempSync(join(tmpdir(), 'isr-consumer-'));
const app = join(work, 'app');
let packed: { filename: string; files: { path: string; mode: number }[] };
const STACKS = { own: 'MySite', existing: 'MyBlog', shop: 'MyShop' } as const;
type Synthesized = Record<keyof typeof STACKS, TemplateJson>;
const synthesized: Record<'esm' | 'cjs', Synthesized> = {} as never;

beforeAll(async () => {
  // npm pack runs prepack (npm run build): the tarball holds what the build just checked.
  const { stdout } = await run('npm', ['pack', '--json', '--pack-destination', work], {
    cwd: ROOT,
    maxBuffer: 16 * 1024 * 1024,
  });
  packed = (JSON.parse(stdout) as (typeof packed)[])[0]!;
  const devDependencies = (
    JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      devDependencies: Record<string, string>;
    }
  ).devDependencies;
  mkdirSync(join(app, 'bin'), { recursive: true });
  writeFileSync(
    join(app, 'package.json'),
    JSON.stringify({
      name: 'isr-consumer',
      private: true,
      dependencies: {
        'facetheory-isr': `file:${join(work, packed.filename)}`,
        'aws-cdk-lib': devDependencies['aws-cdk-lib'],
        constructs: devDependencies.constructs,
      },
    }),
  );
  await run('npm', ['install', '--prefer-offline', '--no-audit', '--no-fund', '--ignore-scripts'], {
    cwd: app,
  });
  // The snippets as an ES module and as CommonJS (a `cdk init` app), type-checked by tsc: the
  // README's app with DEPLOY's existing distribution and own table and bucket added, so one
  // synth makes the three stacks.
  const deploy = readFileSync(join(ROOT, 'docs', 'DEPLOY.md'), 'utf8');
  const snippet = [
    snippetUnder(readFileSync(join(ROOT, 'README.md'), 'utf8'), '## Use it in your CDK app'),
    snippetUnder(deploy, '### Your own distribution'),
    snippetUnder(deploy, '### Your own table and bucket'),
  ].join('\n');
  writeFileSync(join(app, 'bin', 'app.mts'), snippet);
  writeFileSync(join(app, 'bin', 'app.cts'), snippet);
  writeFileSync(
    join(app, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: {
        target: 'ES2022',
        module: 'NodeNext',
        moduleResolution: 'NodeNext',
        strict: true,
        skipLibCheck: true,
        types: [],
      },
      files: ['bin/app.mts', 'bin/app.cts'],
    }),
  );
  await run(process.execPath, [join(ROOT, 'node_modules', 'typescript', 'bin', 'tsc'), '-p', app]);
  // As `cdk synth` runs an app: CDK_OUTDIR set, the app synthesizes when it ends.
  const synth = async (kind: 'esm' | 'cjs', file: string) => {
    await run(process.execPath, [join('bin', file)], {
      cwd: app,
      env: { PATH: process.env.PATH, CDK_OUTDIR: join(app, `cdk.out.${kind}`) },
    });
    const read = (stack: string) =>
      JSON.parse(
        readFileSync(join(app, `cdk.out.${kind}`, `${stack}.template.json`), 'utf8'),
      ) as TemplateJson;
    synthesized[kind] = {
      own: read(STACKS.own),
      existing: read(STACKS.existing),
      shop: read(STACKS.shop),
    };
  };
  await Promise.all([synth('esm', 'app.mjs'), synth('cjs', 'app.cjs')]);
}, 600_000);

afterAll(() => rmSync(work, { recursive: true, force: true }));

describe('the packed package, installed into a fresh CDK app', () => {
  it('packs only what a consumer needs, the five bundles and the compiled CLI included', () => {
    const paths = packed.files.map((file) => file.path);
    expect(unexpectedPackageFiles(paths)).toEqual([]);
    expect(paths).toEqual(
      expect.arrayContaining([
        'dist/esm/lib/index.js',
        'dist/esm/lib/index.d.ts',
        'dist/cli/isr.mjs',
        'dist/next/index.mjs',
        'dist/esm/next/index.d.ts',
        ...FUNCTIONS.map((name) => `dist/functions/${name}/index.mjs`),
      ]),
    );
  });

  it('flags tests, sources, benches and local data in a package (negative control)', () => {
    const offenders = [
      'test/x.test.ts',
      'lambda/origin/index.ts',
      'bench/run.ts',
      '.local/x',
      'dist/esm/lib/a.ts',
    ];
    expect(unexpectedPackageFiles(['dist/esm/lib/a.d.ts', ...offenders])).toEqual(offenders);
  });

  it('installs without esbuild, TypeScript or tsx, and its isr bin runs on plain node', async () => {
    for (const tool of ['esbuild', 'typescript', 'tsx']) {
      expect(existsSync(join(app, 'node_modules', tool))).toBe(false);
    }
    const { stdout } = await run(join(app, 'node_modules', '.bin', 'isr'), ['--help']);
    expect(stdout).toMatch(/^usage: isr <command>/);
  });

  it('serves facetheory-isr/next as one file that loads neither the CDK nor constructs', async () => {
    const probe = [
      "import { createRequire } from 'node:module';",
      "const adapter = await import('facetheory-isr/next');",
      'const loaded = Object.keys(createRequire(import.meta.url).cache ?? {});',
      'console.log(JSON.stringify({ handler: typeof adapter.default, sign: typeof adapter.signatureOf,',
      '  cdk: loaded.some((file) => /aws-cdk-lib|constructs/.test(file)) }));',
    ].join('\n');
    writeFileSync(join(app, 'probe.mjs'), probe);
    const { stdout } = await run(process.execPath, ['probe.mjs'], { cwd: app });
    expect(JSON.parse(stdout)).toEqual({ handler: 'function', sign: 'function', cdk: false });
    const bundle = readFileSync(
      join(app, 'node_modules', 'facetheory-isr', 'dist', 'next', 'index.mjs'),
      'utf8',
    );
    expect(bundle).not.toMatch(/from ["'](aws-cdk-lib|constructs)/);
  });

  it('synthesizes the README snippet: the service with its own distribution, props applied', () => {
    const resources = Object.values(synthesized.esm.own.Resources);
    const count = (type: string) => resources.filter((resource) => resource.Type === type).length;
    expect(count('AWS::Lambda::Function')).toBe(FUNCTIONS.length);
    expect(count('AWS::CloudFront::Distribution')).toBe(1);
    expect(count('AWS::DynamoDB::GlobalTable')).toBe(1);
    expect(count('AWS::S3::Bucket')).toBe(1);
    expect(count('AWS::SQS::Queue')).toBe(4); // the regeneration queue, the purge queue, their DLQs
    const functions = resources.filter((resource) => resource.Type === 'AWS::Lambda::Function');
    const variablesOf = (fn: Resource) =>
      (fn.Properties.Environment as { Variables: Record<string, string> }).Variables;
    for (const fn of functions) {
      expect(fn.Properties).toMatchObject({ Runtime: 'nodejs22.x', Handler: 'index.handler' });
      // The purger reads the settings of a CDN purge only, not the page cache's.
      if (variablesOf(fn).POWERTOOLS_SERVICE_NAME === 'isr-purger') continue;
      expect(variablesOf(fn)).toMatchObject({
        RENDER_ORIGIN_URL: 'https://ssr.example.com',
        ISR_ALLOWED_QUERY_PARAMS: JSON.stringify(['page']),
      });
    }
    expect(functions.filter((fn) => variablesOf(fn).RENDER_ORIGIN_URL === undefined)).toHaveLength(
      1,
    );
    expect(Object.keys(synthesized.esm.own.Outputs ?? {})).toContain('Url');
  });

  it("synthesizes DEPLOY's existing distribution: the pages on its path, the rest as it was", () => {
    const { Resources, Outputs } = synthesized.esm.existing;
    const distributions = Object.values(Resources).filter(
      (resource) => resource.Type === 'AWS::CloudFront::Distribution',
    );
    expect(distributions).toHaveLength(1);
    const config = distributions[0].Properties.DistributionConfig as DistributionConfig;
    const site = config.Origins.find((origin) => origin.DomainName === 'www.example.com');
    expect(config.DefaultCacheBehavior).toMatchObject({ TargetOriginId: site?.Id });
    expect(config.DefaultCacheBehavior.FunctionAssociations).toBeUndefined();
    const pages = config.CacheBehaviors.find((behaviour) => behaviour.PathPattern === '/blog/*');
    const pagesOrigin = config.Origins.find((origin) => origin.Id === pages?.TargetOriginId);
    expect(pagesOrigin?.OriginAccessControlId).toBeDefined();
    expect(pages?.FunctionAssociations).toEqual([
      expect.objectContaining({ EventType: 'viewer-request' }),
    ]);
    const typeOf = (ref: unknown) => Resources[(ref as { Ref: string }).Ref]?.Type;
    expect(
      [pages?.CachePolicyId, pages?.OriginRequestPolicyId, pages?.ResponseHeadersPolicyId].map(
        typeOf,
      ),
    ).toEqual([
      'AWS::CloudFront::CachePolicy',
      'AWS::CloudFront::OriginRequestPolicy',
      'AWS::CloudFront::ResponseHeadersPolicy',
    ]);
    expect(config.Origins.map((origin) => origin.Id)).toContain('isr-upstream');
    expect(config.CacheTagConfig).toEqual({ HeaderName: 'x-isr-cache-tags' });
    // The same five packed bundles as the README's stack deploys.
    const bundles = (template: TemplateJson) =>
      Object.values(template.Resources)
        .filter((resource) => resource.Type === 'AWS::Lambda::Function')
        .map((fn) => (fn.Properties.Code as { S3Key: string }).S3Key)
        .sort();
    expect(bundles(synthesized.esm.existing)).toHaveLength(FUNCTIONS.length);
    expect(bundles(synthesized.esm.existing)).toEqual(bundles(synthesized.esm.own));
    expect(Object.keys(Outputs ?? {})).toContain('Revalidate');
  });

  it("synthesizes DEPLOY's own table and bucket: the service on them, creating neither", () => {
    const resources = Object.values(synthesized.esm.shop.Resources);
    const count = (type: string) => resources.filter((resource) => resource.Type === type).length;
    expect(count('AWS::DynamoDB::GlobalTable')).toBe(1);
    expect(count('AWS::S3::Bucket')).toBe(1);
    expect(count('AWS::Lambda::Function')).toBe(FUNCTIONS.length);
    const table = resources.find((resource) => resource.Type === 'AWS::DynamoDB::GlobalTable');
    expect(table?.Properties.GlobalSecondaryIndexes).toEqual([
      expect.objectContaining({ IndexName: 'status-index' }),
    ]);
  });

  it('synthesizes the same templates from a CommonJS app (require of the ES module)', () => {
    expect(synthesized.cjs).toEqual(synthesized.esm);
  });

  it('deploys the packed bundles, the same files the bundle tests ran', () => {
    const unpacked = join(work, 'unpacked');
    mkdirSync(unpacked);
    return run('tar', ['-xzf', join(work, packed.filename), '-C', unpacked]).then(() => {
      const functions = Object.values(synthesized.esm.own.Resources).filter(
        (resource) => resource.Type === 'AWS::Lambda::Function',
      );
      const deployed = Object.fromEntries(
        functions.map((fn) => {
          const variables = (fn.Properties.Environment as { Variables: Record<string, string> })
            .Variables;
          const hash = (fn.Properties.Code as { S3Key: string }).S3Key.replace(/\.zip$/, '');
          const kind = variables.POWERTOOLS_SERVICE_NAME.replace(/^isr-/, '');
          return [kind, contentsOf(join(app, 'cdk.out.esm', `asset.${hash}`))];
        }),
      );
      for (const kind of FUNCTIONS) {
        const packedBundle = contentsOf(join(unpacked, 'package', 'dist', 'functions', kind));
        expect(deployed[kind]).toEqual(packedBundle);
        expect(contentsOf(join(ROOT, 'dist', 'functions', kind))).toEqual(packedBundle);
      }
    });
  });
});
