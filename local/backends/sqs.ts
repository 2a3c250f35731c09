import type { AddressInfo } from 'node:net';
import { createSqsServer } from 'local-aws-sqs';
import { describeError, LOOPBACK, type RunningBackend } from './backend.js';

export interface LocalSqsOptions {
  /** @default a free port */
  readonly port?: number;
}

/** Runs local-aws-sqs in this process, on 127.0.0.1 (queues are in memory). */
export async function startLocalSqs(options: LocalSqsOptions = {}): Promise<RunningBackend> {
  const server = await createSqsServer({
    port: options.port ?? 0,
    hostname: LOOPBACK,
    emulateQueueCreationLifecycle: false,
  });
  const { port } = server.address() as AddressInfo;
  return {
    name: 'local-aws-sqs',
    endpoint: `http://${LOOPBACK}:${port}`,
    stop: () =>
      new Promise((resolve) => {
        server.closeAllConnections?.();
        server.close((error) =>
          resolve(
            error === undefined ? [] : [`local-aws-sqs did not close: ${describeError(error)}`],
          ),
        );
      }),
  };
}
