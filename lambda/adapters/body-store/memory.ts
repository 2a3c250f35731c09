import { createHash } from 'node:crypto';
import { BodyNotFoundError } from '../../core/errors.js';
import type { BodyStore, PutBodyInput, StoredBody } from '../../core/page/ports.js';

/**
 * Page bodies in memory: a key is written once (like `If-None-Match: *`); a deleted body is
 * remembered (the versioned bucket keeps it as a noncurrent version).
 */
export class InMemoryBodyStore implements BodyStore {
  readonly objects = new Map<string, StoredBody>();
  readonly deleted = new Set<string>();

  putBody(input: PutBodyInput): Promise<{ s3Key: string; etag: string }> {
    if (this.objects.has(input.s3Key)) {
      return Promise.reject(new Error(`PreconditionFailed: ${input.s3Key} exists`));
    }
    const etag = `"${createHash('md5').update(input.body).digest('hex')}"`;
    this.objects.set(input.s3Key, {
      body: input.body,
      etag,
      contentType: input.contentType,
      metadata: input.metadata ?? {},
    });
    return Promise.resolve({ s3Key: input.s3Key, etag });
  }

  getBody(s3Key: string): Promise<StoredBody> {
    const object = this.objects.get(s3Key);
    if (object === undefined) return Promise.reject(new BodyNotFoundError(s3Key));
    return Promise.resolve({
      body: object.body,
      etag: object.etag,
      contentType: object.contentType,
      metadata: object.metadata,
    });
  }

  deleteBody(s3Key: string): Promise<void> {
    if (this.objects.delete(s3Key)) this.deleted.add(s3Key);
    return Promise.resolve();
  }

  /** The text of a stored body, for assertions. */
  text(s3Key: string): string | undefined {
    const object = this.objects.get(s3Key);
    return object === undefined ? undefined : new TextDecoder().decode(object.body);
  }

  /** Whether the body was retired (deleted once stored). */
  isRetired(s3Key: string): boolean {
    return this.deleted.has(s3Key) && !this.objects.has(s3Key);
  }
}
