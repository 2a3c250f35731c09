import {
  DeleteObjectCommand,
  GetObjectCommand,
  PutObjectCommand,
  type S3Client,
} from '@aws-sdk/client-s3';
import { BodyNotFoundError } from '../../core/errors.js';
import type { BodyMetadata, BodyStore, PutBodyInput, StoredBody } from '../../core/page/ports.js';

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
   * Keys are unique per render (see `bodyKeyOf` in core/page/rows.ts); `If-None-Match: *` makes S3
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
        Metadata: faceTheoryMetadata(input.metadata),
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
        metadata: bodyMetadataOf(response.Metadata),
      };
    } catch (error) {
      if (isNotFound(error)) throw new BodyNotFoundError(s3Key, { cause: error });
      throw error;
    }
  }

  /**
   * In the versioned bucket this adds a delete marker: the body stays a noncurrent version for the
   * retention period counted from now, then the lifecycle rule expires it. S3 answers 204 for a
   * key that is already gone.
   */
  async deleteBody(s3Key: string): Promise<void> {
    await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: s3Key }));
  }
}

const httpStatusOf = (error: unknown): number | undefined =>
  (error as { $metadata?: { httpStatusCode?: number } } | undefined)?.$metadata?.httpStatusCode;

const isNotFound = (error: unknown): boolean =>
  error instanceof Error &&
  (error.name === 'NoSuchKey' || error.name === 'NotFound' || httpStatusOf(error) === 404);

/**
 * FaceTheory's runtime reads a page's status, content type and CSP from S3 user metadata
 * (`x-amz-meta-facetheory-*`); writing them with the body costs nothing (same PutObject) and lets
 * it serve our pages right. Values must be ASCII, and user metadata is at most 2 KB in all: a CSP
 * that does not fit is left out (it stays on META, which is where this service reads it).
 */
export const FaceTheoryMetadata = {
  Status: 'facetheory-status',
  ContentType: 'facetheory-content-type',
  ContentSecurityPolicy: 'facetheory-content-security-policy',
} as const;

const MAX_USER_METADATA_BYTES = 2 * 1024;
// Printable ASCII only: S3 carries user metadata in HTTP headers.
const HEADER_SAFE = /^[\x20-\x7e]*$/;

function faceTheoryMetadata(metadata: BodyMetadata | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  const put = (name: string, value: string | undefined) => {
    if (value === undefined || !HEADER_SAFE.test(value)) return;
    const size = Object.entries(out).reduce((sum, [k, v]) => sum + k.length + v.length, 0);
    if (size + name.length + value.length <= MAX_USER_METADATA_BYTES) out[name] = value;
  };
  put(FaceTheoryMetadata.Status, metadata?.status?.toString());
  put(FaceTheoryMetadata.ContentType, metadata?.contentType);
  put(FaceTheoryMetadata.ContentSecurityPolicy, metadata?.contentSecurityPolicy);
  return out;
}

function bodyMetadataOf(metadata: Record<string, string> | undefined): BodyMetadata {
  const status = Number(metadata?.[FaceTheoryMetadata.Status]);
  return {
    status: Number.isInteger(status) && status >= 100 && status < 600 ? status : undefined,
    contentType: metadata?.[FaceTheoryMetadata.ContentType],
    contentSecurityPolicy: metadata?.[FaceTheoryMetadata.ContentSecurityPolicy],
  };
}
