import { describe, expect, it } from '@jest/globals';
import {
  EdgeFunctionError,
  runViewerRequest,
  type EdgeRequest,
} from '../../../lib/edge/cloudfront-functions-runtime.js';

const request: EdgeRequest = {
  method: 'GET',
  uri: '/a',
  querystring: 'page=1&page=2&flag',
  headers: { Accept: ['text/html', 'application/json'], Cookie: 'a=1; b=2; a=3', host: 'x' },
  clientIp: '198.51.100.7',
};

/** A function that hands back the event it saw, as its answer's body. */
const ECHO = `function handler(event) {
  return { statusCode: 200, body: JSON.stringify(event) };
}`;

function thrown(run: () => unknown): EdgeFunctionError {
  try {
    run();
  } catch (error) {
    if (error instanceof EdgeFunctionError) return error;
    throw error;
  }
  throw new Error('nothing was thrown');
}

describe('the CloudFront Functions runtime emulation', () => {
  it('hands the function CloudFront’s event: lower-case headers, cookies and query apart, multiValue for repeats', () => {
    const result = runViewerRequest(ECHO, request);
    if (!('response' in result)) throw new Error('no response');
    expect(JSON.parse(result.response.body.toString())).toEqual({
      version: '1.0',
      context: expect.objectContaining({ eventType: 'viewer-request' }) as unknown,
      viewer: { ip: '198.51.100.7' },
      request: {
        method: 'GET',
        uri: '/a',
        querystring: {
          page: { value: '1', multiValue: [{ value: '1' }, { value: '2' }] },
          flag: { value: '' },
        },
        headers: {
          accept: {
            value: 'text/html',
            multiValue: [{ value: 'text/html' }, { value: 'application/json' }],
          },
          host: { value: 'x' },
        },
        cookies: {
          a: { value: '1', multiValue: [{ value: '1' }, { value: '3' }] },
          b: { value: '2' },
        },
      },
    });
  });

  it('turns the request the function returns back into HTTP, with the origin it selected', () => {
    const source = `import cf from 'cloudfront';
function handler(event) {
  var request = event.request;
  request.headers['x-added'] = { value: 'yes' };
  delete request.querystring.flag;
  cf.selectRequestOriginById('upstream');
  return request;
}`;
    expect(runViewerRequest(source, request, { origins: ['upstream'] })).toEqual({
      origin: 'upstream',
      request: {
        method: 'GET',
        uri: '/a',
        querystring: 'page=1&page=2',
        headers: {
          accept: ['text/html', 'application/json'],
          host: 'x',
          'x-added': 'yes',
          cookie: 'a=1; a=3; b=2',
        },
        clientIp: '198.51.100.7',
      },
    });
    const unselected = runViewerRequest(
      'function handler(event) { return event.request; }',
      request,
    );
    expect('request' in unselected && unselected.origin).toBeUndefined();
  });

  it('answers as CloudFront does when the function fails: 503 when it throws, 502 when its result is refused', () => {
    expect(
      thrown(() => runViewerRequest('function handler() { throw new Error("x"); }', request))
        .status,
    ).toBe(503);
    const refused = [
      'function handler(e) { e.request.method = "POST"; return e.request; }',
      'function handler(e) { e.request.headers["X-Upper"] = { value: "1" }; return e.request; }',
      'function handler(e) { e.request.headers["upgrade"] = { value: "h2c" }; return e.request; }',
      'function handler(e) { e.request.uri = "no-slash"; return e.request; }',
      'function handler() { return { statusCode: 99 }; }',
      'function handler() { return undefined; }',
      'async function handler(e) { return e.request; }',
    ];
    for (const source of refused)
      expect(thrown(() => runViewerRequest(source, request)).status).toBe(502);
    const unknownOrigin = `import cf from 'cloudfront';
function handler(e) { cf.selectRequestOriginById('elsewhere'); return e.request; }`;
    expect(
      thrown(() => runViewerRequest(unknownOrigin, request, { origins: ['upstream'] })).status,
    ).toBe(503);
  });

  it('runs the function in strict mode, as CloudFront does', () => {
    const sloppy = 'function handler(e) { undeclared = 1; return e.request; }';
    expect(thrown(() => runViewerRequest(sloppy, request)).message).toMatch(
      /undeclared is not defined/,
    );
  });
});
