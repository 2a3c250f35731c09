/** Every local backend listens here unless told otherwise: nothing on the LAN reaches it. */
export const LOOPBACK = '127.0.0.1';

/**
 * A backend the local service runs. `stop` resolves with what was not clean (empty when it
 * stopped on its own when asked), so the caller can say so instead of claiming a clean stop.
 */
export interface RunningBackend {
  readonly name: string;
  readonly endpoint: string;
  stop(): Promise<readonly string[]>;
}

/** What an error says, for a one-line report. */
export const describeError = (error: unknown): string =>
  error instanceof Error ? error.message : String(error);
