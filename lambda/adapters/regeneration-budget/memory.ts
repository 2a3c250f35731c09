import {
  budgetPk,
  budgetSk,
  deferredPrefixOf,
  type DeferredIntent,
  type RegenerationBudget,
} from '../../core/page/budget.js';

/** The budget's counter and deferred rows in memory, under the DynamoDB adapter's contract. */
export class InMemoryRegenerationBudget implements RegenerationBudget {
  readonly #counts = new Map<string, number>();
  readonly #deferred = new Map<string, DeferredIntent>();
  /** Writes made, as the DynamoDB adapter would bill them (refused conditional writes too). */
  writes = 0;

  take(scope: string, window: number, cap: number): Promise<boolean> {
    this.writes += 1;
    const key = `${budgetPk(scope)}|${budgetSk(window)}`;
    const count = this.#counts.get(key) ?? 0;
    if (count >= cap) return Promise.resolve(false);
    this.#counts.set(key, count + 1);
    return Promise.resolve(true);
  }

  count(scope: string, window: number): Promise<number> {
    return Promise.resolve(this.#counts.get(`${budgetPk(scope)}|${budgetSk(window)}`) ?? 0);
  }

  defer(entry: DeferredIntent): Promise<void> {
    this.writes += 1;
    const kept = this.#deferred.get(entry.pk);
    if (kept?.explicit === true && !entry.explicit) return Promise.resolve();
    this.#deferred.set(entry.pk, entry);
    return Promise.resolve();
  }

  deferred(limit: number, scope?: string): Promise<readonly DeferredIntent[]> {
    const prefix = scope === undefined ? '' : deferredPrefixOf(scope);
    const rows = [...this.#deferred.values()]
      .filter((row) => row.pk.startsWith(prefix))
      .sort((a, b) => (a.pk < b.pk ? -1 : a.pk > b.pk ? 1 : 0));
    return Promise.resolve(rows.slice(0, limit));
  }

  release(entry: DeferredIntent): Promise<void> {
    if (this.#deferred.get(entry.pk)?.deferredAt === entry.deferredAt) {
      this.#deferred.delete(entry.pk);
    }
    return Promise.resolve();
  }
}
