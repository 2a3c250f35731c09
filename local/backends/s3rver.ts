import { mkdirSync } from 'node:fs';
import { createRequire } from 'node:module';
import S3rver from 's3rver';
import { describeError, LOOPBACK, type RunningBackend } from './backend.js';

export interface S3rverOptions {
  /** @default a free port */
  readonly port?: number;
  /** Folder that holds the buckets. */
  readonly directory: string;
}

type CipherFactory = (algorithm: string, key: Buffer, iv: Buffer | null) => unknown;
let desShimmed = false;

/**
 * s3rver seals ListObjectsV2 continuation tokens with single DES (`'des'`), which OpenSSL 3
 * (Node 17+) no longer offers, so every truncated listing failed with InternalError. Three-key
 * DES with the one key repeated three times is single DES, and OpenSSL 3 still has it: the one
 * cipher name s3rver uses is mapped to it, in this process only (s3rver runs in it).
 */
function shimS3rverContinuationTokens(): void {
  if (desShimmed) return;
  desShimmed = true;
  const crypto = createRequire(import.meta.url)('node:crypto') as Record<string, CipherFactory>;
  for (const name of ['createCipheriv', 'createDecipheriv']) {
    const original = crypto[name];
    if (original === undefined) continue;
    crypto[name] = (algorithm, key, iv) =>
      algorithm === 'des' && key.length === 8
        ? original('des-ede3-cbc', Buffer.concat([key, key, key]), iv)
        : original(algorithm, key, iv);
  }
}

/** Runs s3rver in this process, on 127.0.0.1. */
export async function startS3rver(options: S3rverOptions): Promise<RunningBackend> {
  mkdirSync(options.directory, { recursive: true });
  shimS3rverContinuationTokens();
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
