/**
 * The lease rules the caller applies on its own clock, and the keeper that holds a lease through
 * a long render. DynamoDB enforces the same rules atomically in the condition expressions of
 * `adapters/shared/dynamodb/conditions.ts` (free-or-expired to acquire, token to refresh/release/publish,
 * token and unexpired to publish); this module is the client side of that protocol.
 */
import { epochSeconds, type Clock } from './clock.js';
import { LeaseLostError } from './errors.js';
import type { CacheTable, Lease } from './ports.js';

/** A lease is held iff `lease_expires_at > now`, on the caller's clock. */
export const isLeaseLive = (lease: { readonly expiresAt: number }, nowSeconds: number): boolean =>
  lease.expiresAt > nowSeconds;

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

export interface LeaseKeeperOptions {
  readonly clock: Clock;
  readonly durationSeconds: number;
  /** @default a third of the lease duration */
  readonly refreshEveryMs?: number | undefined;
  /** Called when a refresh fails for a reason other than losing the lease (the next tick retries). */
  readonly onRefreshError?: (error: unknown) => void;
}

/**
 * Keeps a lease alive while long work runs, by refreshing it (conditioned on the token) on a
 * timer. When the lease turns out to be lost, `signal` aborts so the work can stop early; the
 * publish would be refused anyway.
 */
export class LeaseKeeper {
  readonly #table: CacheTable;
  readonly #options: LeaseKeeperOptions;
  readonly #abort = new AbortController();
  #lease: Lease;
  #timer: NodeJS.Timeout | undefined;
  #inFlight: Promise<void> | undefined;

  constructor(table: CacheTable, lease: Lease, options: LeaseKeeperOptions) {
    this.#table = table;
    this.#lease = lease;
    this.#options = options;
    this.#start();
  }

  /** Refreshes again (a second render under the same lease). */
  restart(): void {
    if (this.#timer === undefined && !this.#abort.signal.aborted) this.#start();
  }

  #start(): void {
    const options = this.#options;
    const every = options.refreshEveryMs ?? Math.max(1, (options.durationSeconds * 1000) / 3);
    this.#timer = setInterval(() => {
      this.#inFlight ??= this.#refresh().finally(() => (this.#inFlight = undefined));
    }, every);
    this.#timer.unref();
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
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.#inFlight;
  }

  async #refresh(): Promise<void> {
    try {
      this.#lease = await this.#table.refreshLease(this.#lease, {
        now: epochSeconds(this.#options.clock),
        durationSeconds: this.#options.durationSeconds,
      });
    } catch (error) {
      if (error instanceof LeaseLostError) {
        clearInterval(this.#timer);
        this.#abort.abort(error);
      } else {
        this.#options.onRefreshError?.(error);
      }
    }
  }
}
