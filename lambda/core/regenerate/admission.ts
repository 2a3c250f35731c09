/**
 * A cap on the renders that run inside viewer requests (origin MISSes) at once, across every
 * origin instance: each render holds one of `limit` slots, and a slot is a lease row like a
 * page's LOCK (`pk = ISR#RENDER-SLOT#<n>`, `sk = LOCK`), taken with the same free-or-expired
 * condition and released with the same token condition. A crashed render frees its slot when
 * its lease runs out. Past the cap a MISS is answered at once (503 + Retry-After, or a
 * fallback page): a flood of new URLs cannot queue without bound or use up the account's
 * Lambda concurrency rendering. Probing a few random slots keeps a render to one or two writes;
 * the cap is a hard upper bound, and near it a request may be refused with a slot still free.
 */
import { tryTakeLease } from '../page/lease.js';
import { systemRandom, type Random } from '../random.js';
import type { CacheTable } from '../page/ports.js';
import type { Lease } from '../page/model.js';

export interface AdmissionPolicy {
  /** Renders allowed at once, across every origin instance. */
  readonly limit: number;
  /** Slots tried before giving up. @default 3 */
  readonly probes?: number;
}

/** A slot held for one render. */
export type AdmissionTicket = Lease;

export const renderSlotPk = (slot: number): string => `ISR#RENDER-SLOT#${slot}`;

export class RenderAdmission {
  readonly #table: CacheTable;
  readonly #policy: AdmissionPolicy;
  readonly #random: Random;

  constructor(table: CacheTable, policy: AdmissionPolicy, random: Random = systemRandom) {
    this.#table = table;
    this.#policy = policy;
    this.#random = random;
  }

  /** A slot for a render lasting at most `holdSeconds`, or undefined when none was free. */
  async enter(
    nowSeconds: number,
    holdSeconds: number,
    owner?: string,
  ): Promise<AdmissionTicket | undefined> {
    const { limit } = this.#policy;
    const probes = Math.min(this.#policy.probes ?? 3, limit);
    const first = Math.floor(this.#random() * limit);
    for (let probe = 0; probe < probes; probe++) {
      const slot = (first + probe * Math.max(1, Math.floor(limit / probes))) % limit;
      const taken = await tryTakeLease(this.#table, {
        pk: renderSlotPk(slot),
        now: nowSeconds,
        durationSeconds: holdSeconds,
        owner,
      });
      if ('lease' in taken) return taken.lease;
    }
    return undefined;
  }

  async leave(ticket: AdmissionTicket): Promise<void> {
    await this.#table.releaseLease(ticket);
  }
}
