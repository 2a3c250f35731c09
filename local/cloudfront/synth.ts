/**
 * The local CloudFront's configuration, from the very CDK code that builds the deployed
 * distribution: `createPageEdge` (what `IsrService` calls) in a stack of its own, with the
 * settings `npm start` runs with as construct props, synthesized, and read back out of the
 * template (`config.ts`). The stack has a stand-in origin function (only its URL is used) and a
 * stand-in https upstream host (CloudFront reaches only https; locally the upstream is
 * `RENDER_ORIGIN_URL`). CloudFormation's template validation is skipped: it checks nothing the
 * edge reads and costs seconds. Kept on disk by a digest of the props and the sources the edge
 * is built from, so `npm start` synthesizes only after a change.
 */
import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { presetOf, SETTINGS, TABLE, type SettingValues } from '../../lambda/core/settings/index.js';
import { packageRoot } from '../../lib/isr-function-code.js';
import type { IsrServiceProps } from '../../lib/isr-service-props.js';
import { edgeConfigOf, type EdgeConfig } from './config.js';

/** Where `npm start` keeps synthesized edges, whatever its data directory: `.local/edge`. */
export const EDGE_CACHE_DIRECTORY = join(packageRoot(), '.local', 'edge');

/** The host the template's upstream origin names; locally it is `RENDER_ORIGIN_URL`. */
export const STAND_IN_UPSTREAM_HOST = 'upstream.isr.localhost';

/**
 * The construct props of the settings a local run reads: every setting that is a prop and is
 * not what the construct would take anyway (its preset's value, else its default), and an https
 * stand-in for a plain-http upstream (so the edge routes to it as deployed).
 */
export function edgePropsOf(settings: Partial<SettingValues>): IsrServiceProps {
  const given = settings as Record<string, unknown>;
  const preset = presetOf(TABLE, given.preset) as Record<string, unknown>;
  const props: Record<string, unknown> = {};
  for (const [key, spec] of Object.entries(SETTINGS)) {
    const value = given[key];
    const otherwise = Object.hasOwn(preset, key) ? preset[key] : spec.default;
    if (spec.source !== 'prop' || value === undefined) continue;
    if (JSON.stringify(value) !== JSON.stringify(otherwise)) props[key] = value;
  }
  if (typeof props.renderOriginUrl === 'string') {
    const upstream = new URL(props.renderOriginUrl);
    props.renderOriginUrl = `https://${STAND_IN_UPSTREAM_HOST}${upstream.pathname}`;
  }
  return props;
}

/** Synthesizes the edge alone for `props` and reads its configuration (about a second). */
export async function synthesizeEdge(props: IsrServiceProps): Promise<EdgeConfig> {
  const [{ App, Stack }, lambda, { createPageEdge }, { resolveSettings }] = await Promise.all([
    import('aws-cdk-lib'),
    import('aws-cdk-lib/aws-lambda'),
    import('../../lib/isr-edge.js'),
    import('../../lib/isr-settings.js'),
  ]);
  const outdir = await mkdtemp(join(tmpdir(), 'isr-edge-'));
  try {
    const app = new App({
      outdir,
      builtinCloudFormationValidation: false,
      context: { ...(await cdkJsonContext()), 'aws:cdk:disable-asset-staging': true },
    });
    const stack = new Stack(app, 'LocalEdge');
    const origin = new lambda.Function(stack, 'Origin', {
      code: lambda.Code.fromInline('exports.handler = async () => ({})'),
      handler: 'index.handler',
      runtime: lambda.Runtime.NODEJS_22_X,
    });
    const url = origin.addFunctionUrl({ authType: lambda.FunctionUrlAuthType.AWS_IAM });
    createPageEdge(stack, url, resolveSettings(props), props);
    return edgeConfigOf(app.synth().getStackByName(stack.stackName).template);
  } finally {
    await rm(outdir, { recursive: true, force: true });
  }
}

/** The feature flags `cdk synth` runs with (cdk.json), which change what CDK writes. */
async function cdkJsonContext(): Promise<Record<string, unknown>> {
  const text = await readFile(join(packageRoot(), 'cdk.json'), 'utf8');
  return (JSON.parse(text) as { context?: Record<string, unknown> }).context ?? {};
}

/** The sources the edge is made from: the construct, the rules the function embeds, cdk.json. */
const SOURCE_DIRECTORIES = ['lib', 'lambda/core', 'local/cloudfront'];

async function sourceDigest(root: string): Promise<string> {
  const hash = createHash('sha256');
  const files: string[] = [join(root, 'cdk.json'), join(root, 'package-lock.json')];
  for (const directory of SOURCE_DIRECTORIES) {
    const entries = await readdir(join(root, directory), { recursive: true, withFileTypes: true });
    for (const entry of entries) {
      if (entry.isFile() && entry.name.endsWith('.ts')) {
        files.push(join(entry.parentPath, entry.name));
      }
    }
  }
  for (const file of files.sort()) {
    hash.update(relative(root, file)).update(await readFile(file).catch(() => Buffer.alloc(0)));
  }
  return hash.digest('hex');
}

/**
 * The edge for `props`, from `cacheDirectory` when an earlier run synthesized the same props
 * from the same sources, else synthesized now and kept there.
 */
export async function loadEdgeConfig(
  props: IsrServiceProps,
  cacheDirectory: string | undefined,
): Promise<{ readonly config: EdgeConfig; readonly synthesized: boolean }> {
  if (cacheDirectory === undefined)
    return { config: await synthesizeEdge(props), synthesized: true };
  const root = packageRoot();
  const digest = createHash('sha256')
    .update(JSON.stringify(props))
    .update(await sourceDigest(root))
    .digest('hex')
    .slice(0, 32);
  const file = join(cacheDirectory, `${digest}.json`);
  const kept = await readFile(file, 'utf8').catch(() => undefined);
  if (kept !== undefined) return { config: JSON.parse(kept) as EdgeConfig, synthesized: false };
  const config = await synthesizeEdge(props);
  await mkdir(cacheDirectory, { recursive: true });
  // Written whole, then renamed: starts running side by side never read half a file.
  const partial = `${file}.${process.pid}.tmp`;
  await writeFile(partial, JSON.stringify(config));
  await rename(partial, file);
  return { config, synthesized: true };
}
