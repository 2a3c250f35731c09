import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { S3Client } from '@aws-sdk/client-s3';
import { SQSClient } from '@aws-sdk/client-sqs';

export interface AwsClients {
  readonly dynamodb: DynamoDBClient;
  readonly s3: S3Client;
  readonly sqs: SQSClient;
}

/** Endpoint overrides for local backends, one per client; in AWS all three are left unset. */
export type AwsEndpoints = { readonly [client in keyof AwsClients]?: string | undefined };

export interface AwsClientOptions {
  readonly region?: string | undefined;
  readonly endpoints?: AwsEndpoints | undefined;
  /** Static credentials for local backends, which accept any. */
  readonly credentials?: { accessKeyId: string; secretAccessKey: string } | undefined;
  readonly maxAttempts?: number | undefined;
}

/**
 * One place that builds the SDK clients. Against a local S3 (s3rver) the client uses path-style
 * addressing and checksums only when required: s3rver corrupts uploads sent with the default
 * streaming checksum trailers.
 */
export function createAwsClients(options: AwsClientOptions = {}): AwsClients {
  const endpoints = options.endpoints ?? {};
  const common = {
    ...(options.region === undefined ? {} : { region: options.region }),
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
    ...(options.maxAttempts === undefined ? {} : { maxAttempts: options.maxAttempts }),
  };
  return {
    dynamodb: new DynamoDBClient({ ...common, endpoint: endpoints.dynamodb }),
    s3: new S3Client({
      ...common,
      ...(endpoints.s3 === undefined
        ? {}
        : {
            endpoint: endpoints.s3,
            forcePathStyle: true,
            requestChecksumCalculation: 'WHEN_REQUIRED',
            responseChecksumValidation: 'WHEN_REQUIRED',
          }),
    }),
    sqs: new SQSClient({ ...common, endpoint: endpoints.sqs }),
  };
}
