/**
 * The ports only serving needs: the regeneration a MISS runs in the request, and the upstream a
 * pass-through reaches with the viewer's own request. The ports every use case shares are in
 * `core/page/ports.ts`.
 */
import type { RegenerateInput, RegenerateOutcome } from '../page/regeneration.js';

/**
 * A viewer's request as the upstream gets it on a pass-through: method, path and query as
 * received, headers already filtered (`core/forwarding.ts`), the body as bytes.
 */
export interface PassRequest {
  readonly method: string;
  /** The path as received (percent-encoded), without the query. */
  readonly path: string;
  /** The raw query string, without `?`; `''` when none. */
  readonly query: string;
  /** Lower-case names; a repeated header as several entries. */
  readonly headers: readonly (readonly [string, string])[];
  readonly body: Uint8Array | AsyncIterable<Uint8Array> | undefined;
  /** Aborted when the caller gives up (the pass timeout, the viewer gone). */
  readonly signal?: AbortSignal | undefined;
}

/** The upstream's answer, untouched: status, headers (Set-Cookie repeated), body bytes. */
export interface PassAnswer {
  readonly status: number;
  /** Lower-case names, in the upstream's order; a repeated header as several entries. */
  readonly headers: readonly (readonly [string, string])[];
  /** The body as it came, never decompressed or re-encoded. */
  readonly body: AsyncIterable<Uint8Array> | Iterable<Uint8Array>;
}

/**
 * The upstream reached with the viewer's own request (pass-through). Implementations never
 * decode Content-Encoding and stream both ways.
 * @throws PassThroughError when the upstream cannot be reached
 */
export interface PassThrough {
  forward(request: PassRequest): Promise<PassAnswer>;
}

/**
 * A MISS renders in the request under the same lease and publish protocol as the worker: the
 * regenerate use case, which serving is given rather than imports (one use case never imports
 * another). Called as a method of the deps it sits on, so it renders with those deps' ports.
 */
export interface InRequestRegeneration {
  regenerate(input: RegenerateInput): Promise<RegenerateOutcome>;
}
