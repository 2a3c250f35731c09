/**
 * Defaults and synth-time checks of `IsrServiceProps`. Every timing rule the Lambdas enforce at
 * cold start (`lambda/shared/config.ts`) is checked here too, so a bad combination fails
 * `cdk synth` instead of the first invocation after a deploy.
 */
import { Duration, RemovalPolicy, Token } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import type { IsrServiceProps } from './isr-service.js';

/** Time a render needs after it returns: body PutObject, the publish transaction, tagging. */
export const PUBLISH_MARGIN_MS = 5_000;
/** Visibility timeout per unit of worker timeout, as AWS advises for SQS event sources. */
export const VISIBILITY_TIMEOUT_FACTOR = 6;
/** FIFO event sources take at most 10 records per batch. */
export const MAX_FIFO_BATCH_SIZE = 10;
/**
 * A function URL answers with at most 6 MB, and the origin base64-encodes binary bodies (4/3),
 * so 4 MiB is the largest body that always fits.
 */
export const MAX_BODY_BYTES = 4 * 1024 * 1024;

/** Props with every default applied and every rule checked. */
export interface IsrSettings {
  readonly renderOriginUrl: string | undefined;
  readonly allowedQueryParams: readonly string[];
  readonly tenantHeader: string | undefined;
  readonly deployId: string;
  readonly revalidateSeconds: number;
  readonly leaseSeconds: number;
  readonly renderTimeoutMs: number;
  readonly maxBodyBytes: number;
  readonly workerTimeout: Duration;
  readonly workerMemorySize: number;
  readonly workerBatchSize: number;
  readonly workerMaxConcurrency: number;
  readonly originTimeout: Duration;
  readonly originMemorySize: number;
  readonly maxReceiveCount: number;
  readonly supersededBodyExpirationDays: number;
  readonly removalPolicy: RemovalPolicy;
  readonly logRetention: RetentionDays;
  readonly queueAgeAlarmThreshold: Duration;
  readonly deadLetterAlarmThreshold: number;
  readonly workerErrorsAlarmThreshold: number;
}

/** A prop combination the service cannot run with; thrown while the construct is built. */
export class IsrServiceConfigError extends Error {
  override readonly name = 'IsrServiceConfigError';
}

/** Headers that must never reach the function URL from the viewer (OAC signs; Host routes). */
const FORBIDDEN_TENANT_HEADERS = new Set(['host', 'authorization', 'x-forwarded-host']);

export function resolveSettings(props: IsrServiceProps): IsrSettings {
  const settings: IsrSettings = {
    renderOriginUrl: checkOriginUrl(props.renderOriginUrl),
    allowedQueryParams: checkQueryParams(props.allowedQueryParams ?? []),
    tenantHeader: checkTenantHeader(props.tenantHeader),
    deployId: checkDeployId(props.deployId ?? 'unversioned'),
    revalidateSeconds: integer('revalidateSeconds', props.revalidateSeconds ?? 60, 1),
    leaseSeconds: integer('leaseSeconds', props.leaseSeconds ?? 30, 2),
    renderTimeoutMs: integer('renderTimeoutMs', props.renderTimeoutMs ?? 10_000, 1),
    maxBodyBytes: integer('maxBodyBytes', props.maxBodyBytes ?? MAX_BODY_BYTES, 1, MAX_BODY_BYTES),
    workerTimeout: props.workerTimeout ?? Duration.seconds(30),
    workerMemorySize: integer('workerMemorySize', props.workerMemorySize ?? 1024, 128, 10_240),
    workerBatchSize: integer(
      'workerBatchSize',
      props.workerBatchSize ?? 10,
      1,
      MAX_FIFO_BATCH_SIZE,
    ),
    workerMaxConcurrency: integer(
      'workerMaxConcurrency',
      props.workerMaxConcurrency ?? 10,
      2,
      1000,
    ),
    originTimeout: props.originTimeout ?? Duration.seconds(30),
    originMemorySize: integer('originMemorySize', props.originMemorySize ?? 1024, 128, 10_240),
    maxReceiveCount: integer('maxReceiveCount', props.maxReceiveCount ?? 5, 5, 1000),
    supersededBodyExpirationDays: integer(
      'supersededBodyExpirationDays',
      props.supersededBodyExpirationDays ?? 7,
      1,
    ),
    removalPolicy: props.removalPolicy ?? RemovalPolicy.RETAIN,
    logRetention: props.logRetention ?? RetentionDays.ONE_MONTH,
    queueAgeAlarmThreshold: props.queueAgeAlarmThreshold ?? Duration.seconds(300),
    deadLetterAlarmThreshold: integer(
      'deadLetterAlarmThreshold',
      props.deadLetterAlarmThreshold ?? 0,
      0,
    ),
    workerErrorsAlarmThreshold: integer(
      'workerErrorsAlarmThreshold',
      props.workerErrorsAlarmThreshold ?? 0,
      0,
    ),
  };
  checkTimings(settings);
  return settings;
}

/**
 * The lease must outlive the render (a render cannot run past the lease unnoticed), and each
 * function's timeout must leave room for a whole render plus its publish: the worker for every
 * regeneration, the origin for a miss it renders in the request.
 */
function checkTimings(settings: IsrSettings): void {
  const { renderTimeoutMs, leaseSeconds } = settings;
  if (renderTimeoutMs >= leaseSeconds * 1000) {
    throw new IsrServiceConfigError(
      `IsrService: renderTimeoutMs (${renderTimeoutMs} ms) must be below the lease ` +
        `(leaseSeconds=${leaseSeconds}, ${leaseSeconds * 1000} ms): the lease must be longer than the render`,
    );
  }
  const needed = renderTimeoutMs + PUBLISH_MARGIN_MS;
  for (const [name, timeout] of [
    ['workerTimeout', settings.workerTimeout],
    ['originTimeout', settings.originTimeout],
  ] as const) {
    const ms = timeout.toMilliseconds();
    if (ms < needed || ms > 900_000) {
      throw new IsrServiceConfigError(
        `IsrService: ${name} (${ms} ms) must leave room for a render and its publish: at least ` +
          `renderTimeoutMs + ${PUBLISH_MARGIN_MS} ms = ${needed} ms, and at most 900 s`,
      );
    }
  }
  const queueAge = settings.queueAgeAlarmThreshold.toSeconds();
  if (queueAge < 60) {
    throw new IsrServiceConfigError(
      `IsrService: queueAgeAlarmThreshold (${queueAge} s) must be at least 60 s (SQS reports per minute)`,
    );
  }
}

function integer(name: string, value: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (!Number.isInteger(value) || value < min || value > max) {
    const range = max === Number.MAX_SAFE_INTEGER ? `>= ${min}` : `${min}..${max}`;
    throw new IsrServiceConfigError(
      `IsrService: ${name} must be an integer ${range}, got ${value}`,
    );
  }
  return value;
}

function checkOriginUrl(url: string | undefined): string | undefined {
  if (url === undefined || Token.isUnresolved(url)) return url;
  let protocol: string;
  try {
    protocol = new URL(url).protocol;
  } catch (error) {
    throw new IsrServiceConfigError(`IsrService: renderOriginUrl is not a URL: ${url}`, {
      cause: error,
    });
  }
  if (protocol !== 'https:' && protocol !== 'http:') {
    throw new IsrServiceConfigError(`IsrService: renderOriginUrl must be http(s), got ${url}`);
  }
  return url;
}

/** Names travel comma-separated in ISR_ALLOWED_QUERY_PARAMS and must match what CloudFront sees. */
function checkQueryParams(params: readonly string[]): readonly string[] {
  for (const param of params) {
    if (!/^[^\s,&=#]+$/.test(param)) {
      throw new IsrServiceConfigError(
        `IsrService: allowedQueryParams entry ${JSON.stringify(param)} is not a query parameter name`,
      );
    }
  }
  return [...new Set(params)].sort();
}

function checkTenantHeader(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  const name = header.trim().toLowerCase();
  if (!/^[a-z0-9-]+$/.test(name) || FORBIDDEN_TENANT_HEADERS.has(name)) {
    throw new IsrServiceConfigError(
      `IsrService: tenantHeader ${JSON.stringify(header)} must be a plain header name other than ` +
        [...FORBIDDEN_TENANT_HEADERS].join(', '),
    );
  }
  return name;
}

function checkDeployId(deployId: string): string {
  if (deployId.length < 1 || deployId.length > 128) {
    throw new IsrServiceConfigError('IsrService: deployId must be 1 to 128 characters');
  }
  return deployId;
}
