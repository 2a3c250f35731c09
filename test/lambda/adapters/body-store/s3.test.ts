import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { S3BodyStore } from '../../../../lambda/adapters/body-store/s3.js';
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

  it('raises BodyNotFoundError for a missing body', async () => {
    await expect(store.getBody('pages/_/a/missing')).rejects.toBeInstanceOf(BodyNotFoundError);
  });

  it('deletes a body, and a body already gone is not an error', async () => {
    await store.putBody({ s3Key: 'pages/_/a/3', body: html('x'), contentType: 'text/html' });
    await store.deleteBody('pages/_/a/3');
    await expect(store.getBody('pages/_/a/3')).rejects.toBeInstanceOf(BodyNotFoundError);
    await expect(store.deleteBody('pages/_/a/3')).resolves.toBeUndefined();
  });
});
