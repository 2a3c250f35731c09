import { mkdirSync } from 'node:fs';
import S3rver from 's3rver';
import { describeError, LOOPBACK, type RunningBackend } from './backend.js';

export interface S3rverOptions {
  /** @default a free port */
  readonly port?: number;
  /** Folder that holds the buckets. */
  readonly directory: string;
}

/** Runs s3rver in this process, on 127.0.0.1. */
export async function startS3rver(options: S3rverOptions): Promise<RunningBackend> {
  mkdirSync(options.directory, { recursive: true });
  const server = new S3rver({
    port: options.port ?? 0,
    address: LOOPBACK,
    silent: true,
    directory: options.directory,
  });
  const address = await server.run();
  return {
    name: 's3rver',
    endpoint: `http://${LOOPBACK}:${address.port}`,
    stop: () =>
      server.close().then(
        () => [],
        (error: unknown) => [`s3rver did not close: ${describeError(error)}`],
      ),
  };
}
