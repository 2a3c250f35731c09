import { DynamoCacheTable } from '../adapters/cache-table/dynamodb.js';
import { DynamoRenderCounter } from '../adapters/render-counter/dynamodb.js';
import { DynamoVersionRows } from '../adapters/version-rows/dynamodb.js';
import { DynamoTagIndex } from '../adapters/tag-index/dynamodb.js';
import { DemoRenderer } from '../adapters/renderer/demo.js';
import { HttpRenderer } from '../adapters/renderer/http.js';
import { ExtensionSecretSource } from '../adapters/secret-source/extension.js';
import { S3BodyStore } from '../adapters/body-store/s3.js';
import { systemClock, type Clock } from '../core/clock.js';
import { publicOriginOf } from '../core/forwarding.js';
import { publicOriginsOf } from '../core/tenant-origins.js';
import type { CdnInvalidator, SecretSource } from '../core/page/ports.js';
import type { Renderer } from '../core/regenerate/ports.js';
import { SETTING_DEFAULTS } from '../core/settings/index.js';
import type { RegenerateDeps } from '../core/regenerate/deps.js';
import type { LogSink } from '../core/log.js';
import type { AwsClients } from './aws-clients.js';
import type { ServiceConfig } from './config.js';

/** What a function is built from besides its configuration; tests and local mode inject these. */
export interface ServiceRuntime {
  readonly clients: AwsClients;
  /** @default systemClock */
  readonly clock?: Clock | undefined;
  /** @default an HttpRenderer for RENDER_ORIGIN_URL, else the DemoRenderer */
  readonly renderer?: Renderer | undefined;
  /**
   * Where the origin's random choices come from (which render slots a MISS probes); the model
   * check passes a seeded one so a run replays the same way. @default Math.random
   */
  readonly random?: (() => number) | undefined;
  /** Who holds leases, for operators reading LOCK rows. */
  readonly owner?: string | undefined;
  /**
   * The upstream's shared secret, when given as is (local mode, tests).
   * @default - read through the Parameters and Secrets extension when configured
   */
  readonly upstreamSecret?: SecretSource | undefined;
  /** The Lambda session token, for the secrets extension. @default - none */
  readonly sessionToken?: (() => string | undefined) | undefined;
  /**
   * Purges the CDN by cache tag after a revalidation (local mode's printer, a test's recorder).
   * @default - `createCdnInvalidator` in `revalidate/build.ts` decides
   */
  readonly cdn?: CdnInvalidator | undefined;
  /**
   * The revalidation webhook's HMAC key, when given as is (local mode's ISR_REVALIDATE_SECRET).
   * @default - read through the secrets extension when ISR_REVALIDATE_SECRET_ARN is set
   */
  readonly revalidateSecret?: SecretSource | undefined;
  /**
   * Local mode on loopback without a key: revalidation requests need no signature.
   * @default false
   */
  readonly revalidateOpen?: boolean | undefined;
}

/** The upstream renderer when one is configured, else the demo renderer. */
export function createRenderer(
  config: ServiceConfig,
  runtime: ServiceRuntime,
  clock: Clock,
  log?: LogSink,
): Renderer {
  if (config.renderOriginUrl !== undefined) {
    return new HttpRenderer({
      originUrl: config.renderOriginUrl,
      tenantHeader: config.tenantHeader,
      maxBodyBytes: config.maxBodyBytes,
      tagHeader: config.upstreamTagHeader,
      publicOrigin: publicOriginOf(config.publicOrigin),
      tenantOrigins: publicOriginsOf(config.settings.tenantOrigins),
      log,
      secretHeader: upstreamSecretHeader(config, runtime),
      variantParam: config.settings.variantParam,
    });
  }
  return new DemoRenderer({
    counter: new DynamoRenderCounter({
      client: runtime.clients.dynamodb,
      tableName: config.tableName,
    }),
    clock,
    revalidateSeconds: config.defaultRevalidateSeconds,
  });
}

/** The header carrying the upstream's shared secret, and where its value comes from. */
export function upstreamSecretHeader(config: ServiceConfig, runtime: ServiceRuntime) {
  const name = config.upstreamSecret?.header ?? SETTING_DEFAULTS.upstreamSecretHeader;
  if (runtime.upstreamSecret !== undefined) return { name, secret: runtime.upstreamSecret };
  if (config.upstreamSecret === undefined) return undefined;
  const secret = new ExtensionSecretSource({
    secretId: config.upstreamSecret.arn,
    sessionToken: runtime.sessionToken ?? (() => undefined),
  });
  return { name, secret };
}

/** The adapters and settings of one regeneration, shared by the worker and the origin's misses. */
export function createRegenerateDeps(
  config: ServiceConfig,
  runtime: ServiceRuntime,
  log: LogSink,
): RegenerateDeps {
  const clock = runtime.clock ?? systemClock;
  const tables = { client: runtime.clients.dynamodb, tableName: config.tableName };
  return {
    cacheTable: new DynamoCacheTable(tables),
    bodies: new S3BodyStore({ client: runtime.clients.s3, bucket: config.bucket }),
    tagIndex: new DynamoTagIndex({ ...tables, clock, random: runtime.random }),
    versions: new DynamoVersionRows(tables),
    keepVersions: config.keepVersions,
    goneInlineMaxBytes: config.goneInlineMaxBytes,
    renderer: runtime.renderer ?? createRenderer(config, runtime, clock, log),
    clock,
    leaseSeconds: config.leaseSeconds,
    clockSkewMarginSeconds: config.clockSkewMarginSeconds,
    renderTimeoutMs: config.renderTimeoutMs,
    defaultRevalidateSeconds: config.defaultRevalidateSeconds,
    hitForPassSeconds: config.hitForPassSeconds,
    maxBodyBytes: config.maxBodyBytes,
    headerPolicy: config.headerPolicy,
    setCookie: config.setCookie,
    bodyKeyPrefix: config.bodyKeyPrefix,
    retention: config.retention,
    log,
  };
}
