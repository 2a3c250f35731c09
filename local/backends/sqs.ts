import type { AddressInfo } from 'node:net';
import { createSqsServer } from 'local-aws-sqs';
import type { RunningBackend } from './dynamodb-local.js';

export interface LocalSqsOptions {
  /** @default a free port */
  readonly port?: number;
}

/** Runs local-aws-sqs in this process (queues are in memory). */
export async function startLocalSqs(options: LocalSqsOptions = {}): Promise<RunningBackend> {
  const server = await createSqsServer({
    port: options.port ?? 0,
    hostname: '127.0.0.1',
    emulateQueueCreationLifecycle: false,
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    stop: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections?.();
        server.close(() => resolve());
      }),
  };
}
