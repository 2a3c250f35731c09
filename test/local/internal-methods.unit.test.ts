/**
 * Issue 31, fix 4: with an upstream the pages' behaviour takes every method, and `/_isr/*` is the
 * service's own, never passed. A POST with a body there went to the origin function through
 * origin access control, where Lambda refuses a payload the viewer did not hash in
 * `x-amz-content-sha256` ("Restrict access to an AWS Lambda function URL origin",
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/private-content-restricting-access-to-lambda.html):
 * an opaque 403 from Lambda. The edge answers it itself: 405 with its reason, as the origin does
 * for a method it does not serve.
 */
import { describe, expect, it } from '@jest/globals';
import type { OriginHandler } from '../../local/cloudfront/origins.js';
import { testCloudFront } from '../helpers/local-cloudfront.js';

describe('another method under /_isr/ with an upstream (issue 31, fix 4)', () => {
  it('is answered at the edge with 405 and its reason, never sent to the origin or the upstream', async () => {
    const calls: string[] = [];
    const handler: OriginHandler = (event) => {
      calls.push(event.rawPath);
      return Promise.resolve({ statusCode: 200, body: 'origin' });
    };
    const edge = await testCloudFront({ renderOriginUrl: 'http://127.0.0.1:1' }, handler);
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const answer = await edge.handle(
        {
          method,
          uri: '/_isr/revalidate',
          querystring: '',
          headers: { 'content-type': 'application/json' },
          clientIp: '203.0.113.7',
        },
        () => Promise.resolve(Buffer.from('{"paths":["/"]}')),
      );
      const body = Buffer.concat([...(answer.body as Iterable<Uint8Array>)]).toString();
      expect({ method, status: answer.status, result: answer.result }).toEqual({
        method,
        status: 405,
        result: 'FunctionGeneratedResponse',
      });
      expect(JSON.parse(body)).toMatchObject({ error: 'method-not-allowed' });
      expect(answer.headers).toContainEqual(['allow', 'GET, HEAD']);
    }
    expect(calls).toEqual([]);
  });
});
