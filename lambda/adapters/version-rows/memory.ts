import type { VersionRows } from '../../core/page/ports.js';
import { MemoryTable } from '../shared/memory-table.js';

/**
 * VER# rows in memory as a publisher needs them, over the table's versions; the operator's
 * `InMemoryPageHistory` extends it, as `DynamoPageHistory` extends `DynamoVersionRows`.
 */
export class InMemoryVersionRows implements VersionRows {
  constructor(readonly state: MemoryTable) {}

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
}
