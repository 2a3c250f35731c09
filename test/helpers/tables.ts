import type { CacheTable } from '../../lambda/core/ports.js';

/** A CacheTable that forwards to `table` except for the methods overridden (fault injection). */
export function delegate(table: CacheTable, overrides: Partial<CacheTable>): CacheTable {
  return {
    getMeta: table.getMeta.bind(table),
    acquireLease: table.acquireLease.bind(table),
    refreshLease: table.refreshLease.bind(table),
    releaseLease: table.releaseLease.bind(table),
    publishGeneration: table.publishGeneration.bind(table),
    ...overrides,
  };
}
