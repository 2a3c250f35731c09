import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { BodyListing, ListedBody } from '../../core/operate/ports.js';

export interface S3BodyListingOptions {
  readonly client: S3Client;
  readonly bucket: string;
  /** Only keys under the body prefix are listed (the sweeper's role is scoped to it). */
  readonly prefix: string;
}

/** Bodies listed with ListObjectsV2, one page of at most `limit` keys per call. */
export class S3BodyListing implements BodyListing {
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #prefix: string;

  constructor(options: S3BodyListingOptions) {
    this.#client = options.client;
    this.#bucket = options.bucket;
    this.#prefix = options.prefix;
  }

  async list(input: { cursor: string | undefined; limit: number }) {
    const page = await this.#client.send(
      new ListObjectsV2Command({
        Bucket: this.#bucket,
        Prefix: this.#prefix,
        MaxKeys: input.limit,
        ContinuationToken: input.cursor,
      }),
    );
    const bodies: ListedBody[] = (page.Contents ?? []).flatMap((object) =>
      object.Key === undefined || object.LastModified === undefined
        ? []
        : [{ s3Key: object.Key, writtenAt: Math.floor(object.LastModified.getTime() / 1000) }],
    );
    return { bodies, next: page.IsTruncated ? page.NextContinuationToken : undefined };
  }
}
