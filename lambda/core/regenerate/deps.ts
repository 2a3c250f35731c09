/**
 * What a regeneration is given: its ports and settings. Apart from `regenerate.ts`, so the
 * steps (render, publish, after-publish...) import it without importing the entry that runs them.
 */
import type { RenderAdmission } from './admission.js';
import type { Clock } from '../clock.js';
import type { LogSink } from '../log.js';
import type { BodyStore, CacheTable, TagIndex, VersionRows } from '../page/ports.js';
import type { Random } from '../random.js';
import type { RenderPolicy } from './render-policy.js';
import type { Retention } from '../retention.js';
import type { Renderer } from './ports.js';

/** The ports and settings of a regeneration, the worker's and the origin's MISS alike. */
export interface RegenerateDeps extends RenderPolicy {
  readonly cacheTable: CacheTable;
  readonly bodies: BodyStore;
  readonly renderer: Renderer;
  readonly clock: Clock;
  /** Jitter of the publish retries. @default systemRandom */
  readonly random?: Random | undefined;
  /** Must outlast the render plus the body write; the lease is refreshed while rendering. */
  readonly leaseSeconds: number;
  /** How often the lease is refreshed during a render. @default a third of the lease */
  readonly leaseRefreshMs?: number | undefined;
  /** How far apart two workers' clocks may be (see `canStartRender`). @default 0 */
  readonly clockSkewMarginSeconds?: number | undefined;
  /** Kept below the lease, so a render cannot outlive it unnoticed. */
  readonly renderTimeoutMs: number;
  /**
   * How long a key whose answer is not to be stored is remembered as pass (META#PASS).
   * @default 0 - not remembered
   */
  readonly hitForPassSeconds?: number | undefined;
  /** Where bodies are written. @default BODY_KEY_PREFIX */
  readonly bodyKeyPrefix?: string | undefined;
  /** How long a META row outlives its freshness before DynamoDB TTL may collect it. */
  readonly retention?: Retention | undefined;
  /** Publish attempts when the transaction is cancelled by a conflict. @default 3 */
  readonly publishAttempts?: number;
  readonly log?: LogSink | undefined;
  /** Caps renders at once (the origin's MISSes); none when unset (the worker's event source caps it). */
  readonly admission?: RenderAdmission | undefined;
  /** The tag -> page index; a page's tags are not indexed without it. */
  readonly tagIndex?: TagIndex | undefined;
  /** The page's VER# rows: versions a publish drops from META's list are deleted here. */
  readonly versions: VersionRows;
  /** Versions kept per page, the live one included. @default SETTING_DEFAULTS.keepVersions */
  readonly keepVersions?: number | undefined;
}
