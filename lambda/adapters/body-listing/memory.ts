import type { BodyListing, ListedBody } from '../../core/operate/ports.js';
import { BODY_KEY_PREFIX } from '../../core/page/rows.js';

/**
 * Bodies as written, listed like S3: under the prefix only, keys in lexical order; the cursor is
 * the position of the next key.
 */
export class InMemoryBodyListing implements BodyListing {
  readonly bodies: ListedBody[] = [];

  constructor(readonly prefix: string = BODY_KEY_PREFIX) {}

  list(input: { cursor: string | undefined; limit: number }) {
    const sorted = this.bodies
      .filter((body) => body.s3Key.startsWith(this.prefix))
      .sort((a, b) => (a.s3Key < b.s3Key ? -1 : 1));
    const start = input.cursor === undefined ? 0 : Number(input.cursor);
    const end = start + input.limit;
    return Promise.resolve({
      bodies: sorted.slice(start, end),
      next: end < sorted.length ? String(end) : undefined,
    });
  }
}
