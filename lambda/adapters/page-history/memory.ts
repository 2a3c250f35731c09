import { LeaseLostError, PageChangedError, VersionRequestError } from '../../core/errors.js';
import { isLeaseLive } from '../../core/page/lease.js';
import type { HoldWrite, PageHistory, RestoreInput } from '../../core/operate/ports.js';
import type { PageVersion } from '../../core/page/model.js';
import { MemoryTable } from '../shared/memory-table.js';

/**
 * A page's VER# rows in memory, with the conditions of `adapters/page-history/dynamodb.ts`: a
 * restore commits only while META is the generation and version the operator read, the
 * operator's lease is still theirs and live, and the version's row is there.
 */
export class InMemoryPageHistory implements PageHistory {
  constructor(readonly state: MemoryTable) {}

  versions(pk: string): Promise<PageVersion[]> {
    const rows = [...this.state.versions.entries()]
      .filter(([id]) => id.startsWith(`${pk}\u0000`))
      .map(([, version]) => ({ ...version }))
      .sort((a, b) => (a.sk < b.sk ? 1 : -1));
    return Promise.resolve(rows);
  }

  version(pk: string, sk: string): Promise<PageVersion | undefined> {
    const version = this.state.versions.get(MemoryTable.versionId(pk, sk));
    return Promise.resolve(version === undefined ? undefined : { ...version });
  }

  forget(pk: string, sks: readonly string[]): Promise<string[]> {
    const keys: string[] = [];
    for (const sk of sks) {
      const id = MemoryTable.versionId(pk, sk);
      const version = this.state.versions.get(id);
      if (version !== undefined) keys.push(version.s3Key);
      this.state.versions.delete(id);
    }
    return Promise.resolve(keys);
  }

  restore(input: RestoreInput): Promise<void> {
    const { lease, meta, expected, now } = input;
    const lock = this.state.locks.get(lease.pk);
    if (lock?.token !== lease.token || !isLeaseLive(lock, now)) {
      return Promise.reject(new LeaseLostError(lease.pk, lock));
    }
    const current = this.state.metas.get(meta.pk);
    if (
      current === undefined ||
      current.generatedAt !== expected.generatedAt ||
      current.currentSk !== expected.currentSk
    ) {
      return Promise.reject(new PageChangedError(meta.pk));
    }
    if (
      meta.currentSk !== undefined &&
      !this.state.versions.has(MemoryTable.versionId(meta.pk, meta.currentSk))
    ) {
      return Promise.reject(
        new VersionRequestError('version-not-kept', `${meta.currentSk} is gone`),
      );
    }
    this.state.metas.set(meta.pk, { ...meta });
    this.state.locks.delete(lease.pk);
    return Promise.resolve();
  }

  hold(input: HoldWrite): Promise<void> {
    const { lease, now } = input;
    const lock = this.state.locks.get(lease.pk);
    if (lock?.token !== lease.token || !isLeaseLive(lock, now)) {
      return Promise.reject(new LeaseLostError(lease.pk, lock));
    }
    const current = this.state.metas.get(lease.pk);
    if (current === undefined || current.generatedAt !== input.expectedGeneratedAt) {
      return Promise.reject(new PageChangedError(lease.pk));
    }
    this.state.metas.set(lease.pk, { ...current, holdUntil: input.holdUntil, ttl: input.ttl });
    this.state.locks.delete(lease.pk);
    return Promise.resolve();
  }

  release(pk: string): Promise<boolean> {
    const meta = this.state.metas.get(pk);
    if (meta?.holdUntil === undefined) return Promise.resolve(false);
    this.state.metas.set(pk, { ...meta, holdUntil: undefined });
    return Promise.resolve(true);
  }
}
