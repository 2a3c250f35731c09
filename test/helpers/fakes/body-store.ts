import { createHash } from 'node:crypto';
import { BodyNotFoundError } from '../../../lambda/core/errors.js';
import type { BodyStore, PutBodyInput, StoredBody } from '../../../lambda/core/ports.js';

interface StoredObject extends StoredBody {
  tags: string[];
}

/** Page bodies in memory: a key is written once (like `If-None-Match: *`), tags are recorded. */
export class InMemoryBodyStore implements BodyStore {
  readonly objects = new Map<string, StoredObject>();

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
      tags: [],
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
    this.objects.delete(s3Key);
    return Promise.resolve();
  }

  markSuperseded(s3Key: string): Promise<void> {
    const object = this.objects.get(s3Key);
    if (object === undefined) return Promise.reject(new BodyNotFoundError(s3Key));
    object.tags.push('superseded');
    return Promise.resolve();
  }

  /** The text of a stored body, for assertions. */
  text(s3Key: string): string | undefined {
    const object = this.objects.get(s3Key);
    return object === undefined ? undefined : new TextDecoder().decode(object.body);
  }

  isSuperseded(s3Key: string): boolean {
    return this.objects.get(s3Key)?.tags.includes('superseded') ?? false;
  }
}
