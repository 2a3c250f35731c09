/**
 * In-memory fakes of the sweeper's ports: a status index as rows per shard, a body listing
 * paged by position, what points to each page's bodies, and the listing cursor.
 */
import type {
  BodyListing,
  BodyReferences,
  ListedBody,
  PageReferences,
  StatusIndexReader,
  StatusRow,
  SweepCursor,
} from '../../../lambda/core/ports.js';

export class InMemoryStatusIndex implements StatusIndexReader {
  readonly shards = new Map<string, StatusRow[]>();

  add(shard: string, row: StatusRow): void {
    this.shards.set(shard, [...(this.shards.get(shard) ?? []), row]);
  }

  readShard(shard: string, limit: number) {
    const rows = [...(this.shards.get(shard) ?? [])].sort((a, b) => a.at - b.at);
    return Promise.resolve({ rows: rows.slice(0, limit), truncated: rows.length > limit });
  }
}

/** Keys in lexical order, like S3; the cursor is the position of the next key. */
export class InMemoryBodyListing implements BodyListing {
  readonly bodies: ListedBody[] = [];

  list(input: { cursor: string | undefined; limit: number }) {
    const sorted = [...this.bodies].sort((a, b) => (a.s3Key < b.s3Key ? -1 : 1));
    const start = input.cursor === undefined ? 0 : Number(input.cursor);
    const end = start + input.limit;
    return Promise.resolve({
      bodies: sorted.slice(start, end),
      next: end < sorted.length ? String(end) : undefined,
    });
  }
}

/**
 * A page's references as set; `listedMeanwhile` holds the `pk sk` of unlisted rows a publish
 * lists between the read and the delete, which the guarded delete must leave.
 */
export class InMemoryBodyReferences implements BodyReferences {
  readonly pages = new Map<string, PageReferences>();
  readonly reads: string[] = [];
  readonly listedMeanwhile = new Set<string>();
  readonly forgotten: string[] = [];

  of(pk: string): Promise<PageReferences> {
    this.reads.push(pk);
    return Promise.resolve(
      this.pages.get(pk) ?? { s3Keys: new Set(), unlisted: [], lease: undefined },
    );
  }

  forgetUnlisted(pk: string, sks: readonly string[]): Promise<string[]> {
    const deleted = sks.filter((sk) => !this.listedMeanwhile.has(`${pk} ${sk}`));
    const page = this.pages.get(pk);
    if (page !== undefined) {
      const unlisted = page.unlisted.filter((version) => !deleted.includes(version.sk));
      this.pages.set(pk, { ...page, unlisted });
    }
    this.forgotten.push(...deleted.map((sk) => `${pk} ${sk}`));
    return Promise.resolve(deleted);
  }
}

export class InMemorySweepCursor implements SweepCursor {
  value: string | undefined;
  saves = 0;

  load(): Promise<string | undefined> {
    return Promise.resolve(this.value);
  }

  save(cursor: string | undefined): Promise<void> {
    this.value = cursor;
    this.saves += 1;
    return Promise.resolve();
  }
}
