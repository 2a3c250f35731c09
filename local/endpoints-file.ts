/**
 * `<data dir>/endpoints.json`: where a running `npm start` can be reached. Its backends listen on
 * free ports picked at start, so the ops CLI (`npm run isr`) reads them here rather than guess.
 * Written once the service is ready, removed on a clean stop.
 */
import { readFile, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import * as v from 'valibot';

/** How the CLI turns a URL into a cache key, and the operator's lease, as the service does. */
export const OpsSettingsSchema = v.object({
  allowedQueryParams: v.array(v.string()),
  renderPaths: v.optional(v.array(v.string()), []),
  tenantHeader: v.optional(v.string()),
  tenants: v.optional(v.array(v.string())),
  leaseSeconds: v.number(),
  retention: v.optional(v.object({ idleSeconds: v.number(), goneSeconds: v.number() })),
  /** Regenerations a minute per site or tenant; absent: unlimited (`isr budget`). */
  regenerationBudget: v.optional(v.number()),
});
export type OpsSettings = v.InferOutput<typeof OpsSettingsSchema>;

export const LocalEndpointsSchema = v.object({
  /** The HTTP front playing CloudFront. */
  httpUrl: v.string(),
  region: v.string(),
  endpoints: v.object({ dynamodb: v.string(), s3: v.string(), sqs: v.string() }),
  tableName: v.string(),
  bucket: v.string(),
  queueUrl: v.string(),
  dlqUrl: v.string(),
  /** `POST` here to revalidate (issue 14); served by the HTTP front. */
  revalidateUrl: v.string(),
  settings: OpsSettingsSchema,
  pid: v.number(),
});
export type LocalEndpoints = v.InferOutput<typeof LocalEndpointsSchema>;

export const endpointsFileOf = (dataDir: string): string => join(dataDir, 'endpoints.json');

export async function writeEndpointsFile(dataDir: string, endpoints: LocalEndpoints) {
  await writeFile(endpointsFileOf(dataDir), `${JSON.stringify(endpoints, null, 2)}\n`);
}

/** Best-effort: a stale file names a pid that is gone, which the CLI reports. */
export async function removeEndpointsFile(dataDir: string): Promise<readonly string[]> {
  await rm(endpointsFileOf(dataDir), { force: true });
  return [];
}

/** @returns undefined when there is no file (npm start is not running, or stopped cleanly) */
export async function readEndpointsFile(dataDir: string): Promise<LocalEndpoints | undefined> {
  let text: string;
  try {
    text = await readFile(endpointsFileOf(dataDir), 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw error;
  }
  return v.parse(LocalEndpointsSchema, JSON.parse(text));
}
