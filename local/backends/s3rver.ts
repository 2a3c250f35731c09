import { mkdirSync } from 'node:fs';
import S3rver from 's3rver';
import type { RunningBackend } from './dynamodb-local.js';

export interface S3rverOptions {
  /** @default a free port */
  readonly port?: number;
  /** Folder that holds the buckets. */
  readonly directory: string;
}

/** Runs s3rver in this process. */
export async function startS3rver(options: S3rverOptions): Promise<RunningBackend> {
  mkdirSync(options.directory, { recursive: true });
  const server = new S3rver({
    port: options.port ?? 0,
    address: '127.0.0.1',
    silent: true,
    directory: options.directory,
  });
  const address = await server.run();
  return {
    endpoint: `http://127.0.0.1:${address.port}`,
    stop: () => server.close(),
  };
}
