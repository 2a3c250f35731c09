/**
 * The lease, in one place: the rules a caller applies on its own clock (DynamoDB enforces the
 * same rules atomically on LOCK: `Guard.leaseFree`, `leaseToken`, `leaseLive` in
 * `adapters/shared/dynamodb/conditions.ts`), how a lease is taken, seized and released, what a
 * LOCK row left behind means for bodies, and the keeper that holds a lease through a long render.
 * Render slots (`regenerate/admission.ts`) and an operator's seizure (`operate/rollback.ts`,
 * `operate/hold.ts`) are leases too, taken through here.
 */
import type { CacheKey, AcquiredLease, Lease } from './model.js';
import { epochSeconds, type Clock } from '../clock.js';
import { LeaseHeldError, LeaseLostError, type LeaseHolder } from '../errors.js';
import type { LogSink } from '../log.js';
import type { AcquireLeaseInput, CacheTable } from './ports.js';
import { bodyKeyOf } from './rows.js';

/** A lease is held iff `lease_expires_at > now`, on the caller's clock. */
export const isLeaseLive = (lease: { readonly expiresAt: number }, nowSeconds: number): boolean =>
  lease.expiresAt > nowSeconds;

/** A row written under a lease is the lease's own page's: any other is the caller's bug. */
export function assertUnderLease(what: string, pk: string, lease: { readonly pk: string }): void {
  if (pk !== lease.pk) throw new Error(`${what} ${pk} is not under lease ${lease.pk}`);
}

/**
 * A render may start only while the lease outlives the clock-skew margin: another worker whose
 * clock runs ahead by up to the margin may already consider the lease expired and take it over.
 * A caller paused since it took the lease (a GC pause, a frozen container) does not render.
 */
export const canStartRender = (
  lease: { readonly expiresAt: number },
  nowSeconds: number,
  clockSkewMarginSeconds: number,
): boolean => isLeaseLive(lease, nowSeconds + clockSkewMarginSeconds);

/**
 * How long past its expiry a LOCK row is kept before DynamoDB TTL may collect it. Garbage
 * collection only (expiry is always `isLeaseLive` on the caller's clock): a LOCK left by a crash
 * names the lease whose body may be an orphan, and the next taker retires it
 * (`abandonedBodyOf`), so the row is kept long enough for the page to be regenerated again.
 */
export const LOCK_TTL_BUFFER_SECONDS = 7 * 86_400;

/** When DynamoDB TTL may collect a LOCK row expiring at `expiresAt` (epoch seconds). */
export const lockTtlOf = (expiresAt: number, bufferSeconds = LOCK_TTL_BUFFER_SECONDS): number =>
  expiresAt + bufferSeconds;

/**
 * Takes the lease if it is free or expired (not `isLeaseLive`).
 * @returns the lease, or who holds it live
 */
export async function tryTakeLease(
  table: Pick<CacheTable, 'acquireLease'>,
  input: Omit<AcquireLeaseInput, 'seize'>,
): Promise<{ readonly lease: AcquiredLease } | { readonly heldBy: LeaseHolder | undefined }> {
  try {
    return { lease: await table.acquireLease(input) };
  } catch (error) {
    if (error instanceof LeaseHeldError) return { heldBy: error.holder };
    throw error;
  }
}

/**
 * Takes the lease even from a live holder: an operator's rollback or hold. The holder's token is
 * gone, so it can neither refresh nor publish. Never used by a regeneration.
 */
export const seizeLease = (
  table: Pick<CacheTable, 'acquireLease'>,
  input: Omit<AcquireLeaseInput, 'seize'>,
): Promise<AcquiredLease> => table.acquireLease({ ...input, seize: true });

/**
 * Releases a lease this caller may still hold, best-effort: a lease not released expires on its
 * own. A release that succeeds proves no publish of the caller's committed (a publish deletes
 * LOCK) and, with LOCK gone, none can: a body written under it is an orphan. When the release
 * finds the lease gone, a publish of the caller's may have committed, or the lease was taken
 * over, and its next taker retires the body (`abandonedBodyOf`).
 * @returns whether this call released it
 */
export async function releaseLease(
  table: Pick<CacheTable, 'releaseLease'>,
  lease: Lease,
  log?: { readonly sink: LogSink | undefined; readonly what: string },
): Promise<boolean> {
  try {
    return await table.releaseLease(lease);
  } catch (error) {
    log?.sink?.warn(`${log.what} release failed; it expires on its own`, { pk: lease.pk, error });
    return false;
  }
}

/**
 * The body the holder of a lease this caller took over may have left. That holder stopped
 * before publishing (a publish deletes LOCK) and, its token replaced, can never publish now: the
 * body it may have written under that lease will never be referenced. Often there is none.
 */
export const abandonedBodyOf = (
  cacheKey: CacheKey,
  lease: AcquiredLease,
  bodyKeyPrefix?: string,
): string | undefined =>
  lease.takenOver?.token === undefined
    ? undefined
    : bodyKeyOf(cacheKey, lease.takenOver.token, bodyKeyPrefix);

/**
 * Whether a body named after lease `token` may still be published: the page's LOCK carries that
 * token and is live. Such a body is in use even though nothing points to it yet.
 */
export const isBodyLeased = (
  lock: { readonly token: string | undefined; readonly expiresAt: number } | undefined,
  token: string,
  nowSeconds: number,
): boolean => lock !== undefined && lock.token === token && isLeaseLive(lock, nowSeconds);

export interface LeaseKeeperOptions {
  readonly clock: Clock;
  readonly durationSeconds: number;
  /** @default a third of the lease duration */
  readonly refreshEveryMs?: number | undefined;
  /** Called when a refresh fails for a reason other than losing the lease (the next tick retries). */
  readonly onRefreshError?: (error: unknown) => void;
}

/**
 * Keeps a lease alive while long work runs, by refreshing it (conditioned on the token) every so
 * often on the clock. When the lease turns out to be lost, `signal` aborts so the work can stop
 * early; the publish would be refused anyway.
 */
export class LeaseKeeper {
  readonly #table: CacheTable;
  readonly #options: LeaseKeeperOptions;
  readonly #abort = new AbortController();
  #lease: Lease;
  /** Stops the refresh loop; a new one per `restart`. */
  #stopping: AbortController | undefined;
  #running: Promise<void> | undefined;

  constructor(table: CacheTable, lease: Lease, options: LeaseKeeperOptions) {
    this.#table = table;
    this.#lease = lease;
    this.#options = options;
    this.#start();
  }

  /** Refreshes again (a second render under the same lease). */
  restart(): void {
    if (this.#running === undefined && !this.#abort.signal.aborted) this.#start();
  }

  #start(): void {
    const stopping = new AbortController();
    this.#stopping = stopping;
    this.#running = this.#refreshUntil(stopping.signal);
  }

  /** Sleeps a refresh period, refreshes, and again, until stopped or the lease is lost. */
  async #refreshUntil(stopped: AbortSignal): Promise<void> {
    const options = this.#options;
    const every = options.refreshEveryMs ?? Math.max(1, (options.durationSeconds * 1000) / 3);
    for (;;) {
      await options.clock.sleep(every, stopped);
      if (stopped.aborted) return;
      await this.#refresh();
      if (this.#abort.signal.aborted) return;
    }
  }

  /** The lease as last refreshed. */
  get lease(): Lease {
    return this.#lease;
  }

  /** Aborted once the lease is known to be lost. */
  get signal(): AbortSignal {
    return this.#abort.signal;
  }

  /** Stops refreshing and waits for a refresh in flight, so it cannot race the publish. */
  async stop(): Promise<void> {
    this.#stopping?.abort();
    const running = this.#running;
    this.#running = undefined;
    await running;
  }

  async #refresh(): Promise<void> {
    try {
      this.#lease = await this.#table.refreshLease(this.#lease, {
        now: epochSeconds(this.#options.clock),
        durationSeconds: this.#options.durationSeconds,
      });
    } catch (error) {
      if (error instanceof LeaseLostError) this.#abort.abort(error);
      else this.#options.onRefreshError?.(error);
    }
  }
}
