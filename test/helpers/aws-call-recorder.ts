/**
 * A recording front for the local backends: the prebuilt bundles' SDKs are pointed at it (their
 * `AWS_ENDPOINT_URL_*`), it notes each API call with what IAM checks for it (`aws-calls.ts`) and
 * the caller its session token names, and forwards the request as sent (signature, Host and all)
 * to DynamoDB Local, s3rver or local-aws-sqs. On the wire, so nothing in a bundle is changed.
 */
import { createServer, request as httpRequest, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  dynamodbRequests,
  s3Requests,
  sqsRequests,
  type ArnScope,
  type AwsCall,
} from './aws-calls.js';

export type RecordedService = 'dynamodb' | 's3' | 'sqs';

export interface AwsCallRecorder {
  /** Where each service's SDK is pointed instead of the backend. */
  readonly endpoints: Readonly<Record<RecordedService, string>>;
  /** Every call so far, oldest first; a call the recorder could not read names why. */
  readonly calls: readonly AwsCall[];
  readonly unread: readonly string[];
  close(): Promise<void>;
}

/** The function a request comes from: its session token is `session-of-<name>` in the tests. */
const callerOf = (request: IncomingMessage) =>
  String(request.headers['x-amz-security-token'] ?? 'unknown').replace(/^session-of-/, '');

function readCall(
  service: RecordedService,
  scope: ArnScope,
  request: IncomingMessage,
  body: Buffer,
): Omit<AwsCall, 'caller'> {
  if (service === 's3') {
    const url = new URL(request.url ?? '/', 'http://recorder');
    return s3Requests(request.method ?? 'GET', url, body.toString('utf8'));
  }
  const target = String(request.headers['x-amz-target'] ?? '');
  const operation = target.split('.').at(-1) ?? '';
  if (operation === '') throw new Error(`a ${service} request without X-Amz-Target`);
  const input = JSON.parse(body.toString('utf8')) as Record<string, unknown>;
  const requests =
    service === 'dynamodb'
      ? dynamodbRequests(scope, operation, input)
      : sqsRequests(scope, operation, input);
  return { operation, requests };
}

async function listen(server: Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

/** Starts one front per service, in front of `targets` (the backends' endpoints). */
export async function startAwsCallRecorder(
  targets: Readonly<Record<RecordedService, string>>,
  scope: ArnScope,
): Promise<AwsCallRecorder> {
  const calls: AwsCall[] = [];
  const unread: string[] = [];
  const servers = (Object.keys(targets) as RecordedService[]).map((service) => {
    const target = new URL(targets[service]);
    const server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (chunk: Buffer) => chunks.push(chunk));
      request.on('end', () => {
        const body = Buffer.concat(chunks);
        try {
          calls.push({ caller: callerOf(request), ...readCall(service, scope, request, body) });
        } catch (error) {
          unread.push(`${service} ${request.method} ${request.url}: ${String(error)}`);
        }
        const upstream = httpRequest(
          {
            host: target.hostname,
            port: target.port,
            method: request.method,
            path: request.url,
            headers: request.headers,
          },
          (answer) => {
            response.writeHead(answer.statusCode ?? 502, answer.headers);
            answer.pipe(response);
          },
        );
        upstream.on('error', (error) => response.destroy(error));
        upstream.end(body);
      });
    });
    return { service, server };
  });
  const urls = await Promise.all(servers.map(({ server }) => listen(server)));
  const endpoints = Object.fromEntries(
    servers.map(({ service }, i) => [service, urls[i] ?? '']),
  ) as Record<RecordedService, string>;
  return {
    endpoints,
    calls,
    unread,
    close: async () => {
      await Promise.all(
        servers.map(
          ({ server }) =>
            new Promise<void>((resolve) => {
              server.closeAllConnections();
              server.close(() => resolve());
            }),
        ),
      );
    },
  };
}
