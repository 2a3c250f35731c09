import { randomUUID } from 'node:crypto';
import type { LambdaFunctionURLEvent } from 'aws-lambda';

export interface HttpRequestLike {
  readonly method: string;
  /** The request target as received, still percent-encoded: `/a/b?x=1`. */
  readonly target: string;
  /** Lower-case header names. */
  readonly headers: Readonly<Record<string, string>>;
}

/**
 * A Lambda function URL event (payload format 2.0) for an HTTP request, shaped as the one
 * CloudFront's origin request produces: raw path and query as received, lower-case headers.
 */
export function functionUrlEvent(request: HttpRequestLike): LambdaFunctionURLEvent {
  const queryAt = request.target.indexOf('?');
  const rawPath = queryAt === -1 ? request.target : request.target.slice(0, queryAt);
  const rawQueryString = queryAt === -1 ? '' : request.target.slice(queryAt + 1);
  const now = new Date();
  return {
    version: '2.0',
    routeKey: '$default',
    rawPath,
    rawQueryString,
    headers: { ...request.headers },
    isBase64Encoded: false,
    requestContext: {
      accountId: 'anonymous',
      apiId: 'local',
      domainName: request.headers.host ?? 'localhost',
      domainPrefix: 'local',
      http: {
        method: request.method.toUpperCase(),
        path: rawPath,
        protocol: 'HTTP/1.1',
        sourceIp: '127.0.0.1',
        userAgent: request.headers['user-agent'] ?? '',
      },
      requestId: randomUUID(),
      routeKey: '$default',
      stage: '$default',
      time: now.toISOString(),
      timeEpoch: now.getTime(),
    },
  };
}
