import type { BodyListing, ListedBody } from '../../core/ports.js';

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
