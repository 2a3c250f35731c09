import type { StatusIndexReader, StatusRow } from '../../core/operate/ports.js';

/** The status index in memory: rows per shard, read oldest `at` first. */
export class InMemoryStatusIndex implements StatusIndexReader {
  readonly shards = new Map<string, StatusRow[]>();

  add(shard: string, row: StatusRow): void {
    this.shards.set(shard, [...(this.shards.get(shard) ?? []), row]);
  }

  readShard(shard: string, limit: number) {
    const rows = [...(this.shards.get(shard) ?? [])].sort((a, b) => a.at - b.at);
    // A full page may hide more rows, as DynamoDB's Limit says (see `StatusIndexReader`).
    return Promise.resolve({ rows: rows.slice(0, limit), truncated: rows.length >= limit });
  }
}
