import { GetObjectTaggingCommand } from '@aws-sdk/client-s3';
import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { S3BodyStore, SupersededTag } from '../../../../lambda/adapters/s3/body-store.js';
import { BodyNotFoundError } from '../../../../lambda/core/errors.js';
import type { AwsClients } from '../../../../lambda/shared/aws-clients.js';
import { createTestBucket, testClients } from '../../../helpers/backends.js';

let clients: AwsClients;
let bucket: string;
let store: S3BodyStore;
const html = (text: string) => new TextEncoder().encode(text);

beforeAll(async () => {
  clients = testClients();
  bucket = await createTestBucket(clients);
  store = new S3BodyStore({ client: clients.s3, bucket });
});
afterAll(() => clients.s3.destroy());

describe('S3BodyStore', () => {
  it('stores a body and reads it back with its ETag and content type', async () => {
    const body = html('<h1>hello</h1>'.repeat(1000));
    const put = await store.putBody({ s3Key: 'pages/_/a/1', body, contentType: 'text/html' });
    expect(put.etag).toMatch(/^"[0-9a-f]{32}"$/);
    const got = await store.getBody('pages/_/a/1');
    expect(got).toEqual({ body, etag: put.etag, contentType: 'text/html', metadata: {} });
  });

  it('raises BodyNotFoundError for a missing body, to read or to tag', async () => {
    await expect(store.getBody('pages/_/a/missing')).rejects.toBeInstanceOf(BodyNotFoundError);
    await expect(store.markSuperseded('pages/_/a/missing')).rejects.toBeInstanceOf(
      BodyNotFoundError,
    );
  });

  it('deletes a body', async () => {
    await store.putBody({ s3Key: 'pages/_/a/3', body: html('x'), contentType: 'text/html' });
    await store.deleteBody('pages/_/a/3');
    await expect(store.getBody('pages/_/a/3')).rejects.toBeInstanceOf(BodyNotFoundError);
  });

  it('tags a superseded body for the lifecycle rule', async () => {
    await store.putBody({ s3Key: 'pages/_/a/4', body: html('x'), contentType: 'text/html' });
    await store.markSuperseded('pages/_/a/4');
    const { TagSet } = await clients.s3.send(
      new GetObjectTaggingCommand({ Bucket: bucket, Key: 'pages/_/a/4' }),
    );
    expect(TagSet).toEqual([SupersededTag]);
  });
});
