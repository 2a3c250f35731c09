import {
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  PutObjectTaggingCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { BodyNotFoundError } from '../../core/errors.js';
import type { BodyStore, PutBodyInput, StoredBody } from '../../core/ports.js';
import { SupersededTag } from '../../core/rows.js';

/** Tag the bucket lifecycle expires on (defined in `core/rows.ts`); re-exported for callers. */
export { SupersededTag };

export interface S3BodyStoreOptions {
  readonly client: S3Client;
  readonly bucket: string;
}

/** Page bodies on S3. Write order: the body first, then META in DynamoDB points at it. */
export class S3BodyStore implements BodyStore {
  readonly #client: S3Client;
  readonly #bucket: string;

  constructor(options: S3BodyStoreOptions) {
    this.#client = options.client;
    this.#bucket = options.bucket;
  }

  /**
   * Keys are unique per render (see `bodyKeyOf` in core/rows.ts); `If-None-Match: *` makes S3
   * itself refuse to replace an object, should a key ever repeat. A crash after this call and
   * before the publish leaves an unreferenced object, never a half-published page.
   */
  async putBody(input: PutBodyInput): Promise<{ s3Key: string; etag: string }> {
    const { ETag } = await this.#client.send(
      new PutObjectCommand({
        Bucket: this.#bucket,
        Key: input.s3Key,
        Body: input.body,
        ContentType: input.contentType,
        IfNoneMatch: '*',
      }),
    );
    if (ETag === undefined) throw new Error(`S3 returned no ETag for ${input.s3Key}`);
    return { s3Key: input.s3Key, etag: ETag };
  }

  async getBody(s3Key: string): Promise<StoredBody> {
    try {
      const response = await this.#client.send(
        new GetObjectCommand({ Bucket: this.#bucket, Key: s3Key }),
      );
      if (response.Body === undefined || response.ETag === undefined) {
        throw new BodyNotFoundError(s3Key);
      }
      return {
        body: await response.Body.transformToByteArray(),
        etag: response.ETag,
        contentType: response.ContentType,
      };
    } catch (error) {
      if (isNotFound(error)) throw new BodyNotFoundError(s3Key, { cause: error });
      throw error;
    }
  }

  async deleteBody(s3Key: string): Promise<void> {
    await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: s3Key }));
  }

  async markSuperseded(s3Key: string): Promise<void> {
    try {
      await this.#client.send(
        new PutObjectTaggingCommand({
          Bucket: this.#bucket,
          Key: s3Key,
          Tagging: { TagSet: [{ ...SupersededTag }] },
        }),
      );
    } catch (error) {
      if (isNotFound(error)) throw new BodyNotFoundError(s3Key, { cause: error });
      throw error;
    }
  }
}

const httpStatusOf = (error: unknown): number | undefined =>
  (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;

const isNotFound = (error: unknown): boolean =>
  error instanceof Error &&
  (error.name === 'NoSuchKey' || error.name === 'NotFound' || httpStatusOf(error) === 404);
