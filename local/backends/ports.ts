import { createServer } from 'node:net';

/** A port the OS says is free right now (for child processes that need a number up front). */
export const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() =>
        typeof address === 'object' && address !== null
          ? resolve(address.port)
          : reject(new Error('no port')),
      );
    });
  });

/** Fails with a message that says what to do when a fixed port is already taken. */
export const assertPortFree = (port: number, what: string, host = '127.0.0.1'): Promise<void> =>
  new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', (error: NodeJS.ErrnoException) =>
      reject(
        error.code === 'EADDRINUSE'
          ? new Error(
              `port ${port} (${what}) is already in use: stop what holds it or pick another port`,
            )
          : error,
      ),
    );
    server.listen(port, host, () => server.close(() => resolve()));
  });
