/**
 * When tags were last revalidated, as this Next instance knows it: the service's record (`POST
 * <revalidate URL>/tag-times`, read in batches and reused for as briefly as the service says, 250
 * ms by default), and this instance's own revalidations at once. A data cache entry is current
 * while none of its tags was revalidated since it was made. The service's 202 waits out that
 * reuse after writing the times, so a request that starts after a 202 never trusts a read from
 * before it; a render the service asks for trusts no read that started before the render did.
 */
import { signedHeadersFor, type ClientDeps } from './client.js';
import { MAX_PER_REQUEST } from './revalidations.js';
import { serviceTagOf } from './tags.js';

/** The service's answer (`lambda/core/revalidate/tag-times.ts`, `TagTimesAnswer`). */
export interface ServiceTagTimes {
  readonly revalidated_at_ms: Readonly<Record<string, number | undefined>>;
  readonly cache_ms: number;
  readonly skew_margin_ms: number;
  readonly kept_ms: number;
}

/** Reads the service's times of up to `MAX_PER_REQUEST` service tags. @throws on any failure */
export type TagTimesRead = (tags: readonly string[]) => Promise<ServiceTagTimes>;

/** The longest reuse of a read, whatever the service says: its default in-progress cache. */
export const MAX_REUSE_MS = 250;
/** One read's time limit: a render waits for it, so a slow service costs a refetch, not a hang. */
export const READ_TIMEOUT_MS = 2_000;
/** Known tags kept before the expired ones are dropped. */
const PRUNE_AT = 10_000;

/** The signed read of the service's tag times, over the adapter's client configuration. */
export function serviceTagTimesRead(deps: ClientDeps): TagTimesRead {
  const url = new URL(`${deps.config.url.pathname.replace(/\/$/, '')}/tag-times`, deps.config.url);
  return async (tags) => {
    const tenant = deps.config.tenant;
    const body = JSON.stringify({ tags, ...(tenant === undefined ? {} : { tenant }) });
    const headers = await signedHeadersFor(deps, { url, key: undefined, body });
    delete headers.host; // fetch sets Host itself
    const response = await deps.fetch(url, {
      method: 'POST',
      headers,
      body,
      signal: AbortSignal.timeout(READ_TIMEOUT_MS),
    });
    const text = await response.text();
    if (response.status !== 200) {
      throw new Error(`tag times answered ${response.status}: ${text.slice(0, 200)}`);
    }
    return answerOf(text);
  };
}

/** The answer, checked: anything else is a failed read (its entries are treated as stale). */
function answerOf(text: string): ServiceTagTimes {
  const answer = JSON.parse(text) as Partial<ServiceTagTimes> | null;
  const times = answer?.revalidated_at_ms;
  const numbers = [answer?.cache_ms, answer?.skew_margin_ms, answer?.kept_ms];
  if (
    typeof times !== 'object' ||
    times === null ||
    !Object.values(times).every((at) => Number.isFinite(at)) ||
    !numbers.every((value) => Number.isFinite(value))
  ) {
    throw new Error(`tag times: not an answer: ${text.slice(0, 200)}`);
  }
  return answer as ServiceTagTimes;
}

/** When a read started: this instance's clock, and its place in the order reads started in. */
interface ReadStart {
  readonly ms: number;
  readonly seq: number;
}

interface Known {
  /** The service's time (its clock), or undefined: never revalidated. */
  readonly atMs: number | undefined;
  readonly read: ReadStart;
}

interface Read {
  readonly started: ReadStart;
  readonly done: Promise<void>;
}

export interface TagTimesOptions {
  readonly read: TagTimesRead;
  /** This instance's clock, epoch ms. */
  readonly now: () => number;
  /** Failed reads are logged here; the entries they were for are treated as stale. */
  readonly onReadError?: (error: unknown) => void;
  /** No service to ask (`next build`): only this instance's own revalidations count. */
  readonly offline?: boolean;
  /**
   * How long a read is reused, whatever the service says (a test's control: longer than the
   * 202 waits). @default - the service's `cache_ms`, at most MAX_REUSE_MS
   */
  readonly reuseMs?: number;
}

/** The tag-time state of one process: module scope, shared by every handler Next builds. */
export class TagTimes {
  readonly #options: TagTimesOptions;
  readonly #known = new Map<string, Known>();
  readonly #local = new Map<string, number>();
  readonly #inFlight = new Map<string, Read>();
  #queued: { tags: Set<string>; done: Promise<void> } | undefined;
  /** Reads that started before this one (by `seq`) are not trusted any more. */
  #freshFromSeq = 0;
  #nextSeq = 0;
  #reuseMs = MAX_REUSE_MS;
  #skewMs = 2_000;
  #keptMs = 7 * 86_400_000;

  constructor(options: TagTimesOptions) {
    this.#options = options;
    this.#reuseMs = options.reuseMs ?? MAX_REUSE_MS;
  }

  /** A render the service asked for started: from now on, no read that started before counts. */
  requireFreshReads(): void {
    this.#freshFromSeq = this.#nextSeq;
  }

  /** This instance revalidated `tags` (before the service has it): entries made before are stale. */
  recordLocal(tags: readonly string[], atMs: number): void {
    for (const tag of new Set(tags.map(keyOf))) {
      this.#local.set(tag, Math.max(this.#local.get(tag) ?? 0, atMs));
    }
    if (this.#local.size > PRUNE_AT) prune(this.#local, (at) => atMs - at > this.#keptMs);
  }

  /**
   * Whether an entry made at `madeAtMs` (this instance's clock) with `tags` may still be used:
   * younger than the service keeps tag times, and none of its tags revalidated at or after it
   * (the service's time plus its clock skew margin). A failed read says no.
   */
  async isCurrent(tags: readonly string[], madeAtMs: number): Promise<boolean> {
    if (this.#options.now() - madeAtMs >= this.#keptMs) return false;
    const keys = [...new Set(tags.map(keyOf))];
    if (keys.some((tag) => (this.#local.get(tag) ?? Number.NEGATIVE_INFINITY) >= madeAtMs)) {
      return false;
    }
    if (this.#options.offline === true || keys.length === 0) return true;
    try {
      await this.#ensureKnown(keys);
    } catch (error) {
      this.#options.onReadError?.(error);
      return false;
    }
    return keys.every((tag) => {
      const atMs = this.#known.get(tag)?.atMs;
      return atMs === undefined || atMs + this.#skewMs < madeAtMs;
    });
  }

  /** Reads the tags whose known time is too old, joining reads in flight and queued ones. */
  async #ensureKnown(keys: readonly string[]): Promise<void> {
    const now = this.#options.now();
    const waits = new Set<Promise<void>>();
    const missing: string[] = [];
    for (const tag of keys) {
      const known = this.#known.get(tag);
      if (known !== undefined && this.#usable(known.read, now)) continue;
      const flight = this.#inFlight.get(tag);
      if (flight !== undefined && this.#usable(flight.started, now)) waits.add(flight.done);
      else missing.push(tag);
    }
    if (missing.length > 0) waits.add(this.#enqueue(missing));
    await Promise.all(waits);
    if (keys.some((tag) => !this.#known.has(tag))) throw new Error('tag times not read');
  }

  #usable(started: ReadStart, now: number): boolean {
    return started.seq >= this.#freshFromSeq && now - started.ms < this.#reuseMs;
  }

  /** Tags asked for in one turn of the event loop go in one read (chunks of 100). */
  #enqueue(tags: readonly string[]): Promise<void> {
    if (this.#queued === undefined) {
      const queued = { tags: new Set<string>(), done: Promise.resolve() };
      queued.done = new Promise<void>((resolve) => setImmediate(resolve)).then(() => {
        if (this.#queued === queued) this.#queued = undefined;
        return this.#readAll([...queued.tags]);
      });
      this.#queued = queued;
    }
    for (const tag of tags) this.#queued.tags.add(tag);
    return this.#queued.done;
  }

  async #readAll(tags: readonly string[]): Promise<void> {
    const chunks: string[][] = [];
    for (let at = 0; at < tags.length; at += MAX_PER_REQUEST) {
      chunks.push(tags.slice(at, at + MAX_PER_REQUEST));
    }
    await Promise.all(chunks.map((chunk) => this.#readOne(chunk)));
  }

  async #readOne(tags: readonly string[]): Promise<void> {
    const started = { ms: this.#options.now(), seq: this.#nextSeq++ };
    const done = this.#options.read(tags).then((answer) => this.#learn(tags, answer, started));
    const flight = { started, done };
    for (const tag of tags) this.#inFlight.set(tag, flight);
    try {
      await done;
    } finally {
      for (const tag of tags) if (this.#inFlight.get(tag) === flight) this.#inFlight.delete(tag);
    }
  }

  #learn(tags: readonly string[], answer: ServiceTagTimes, read: ReadStart): void {
    this.#reuseMs = this.#options.reuseMs ?? Math.min(MAX_REUSE_MS, Math.max(0, answer.cache_ms));
    this.#skewMs = Math.max(0, answer.skew_margin_ms);
    this.#keptMs = answer.kept_ms;
    for (const tag of tags) {
      const known = this.#known.get(tag);
      if (known !== undefined && known.read.seq > read.seq) continue;
      this.#known.set(tag, { atMs: answer.revalidated_at_ms[tag], read });
    }
    if (this.#known.size > PRUNE_AT) {
      prune(this.#known, (known) => read.ms - known.read.ms >= this.#reuseMs);
    }
  }
}

/** A Next tag as the service keys its time: mapped as on pages, lower-cased as the service does. */
const keyOf = (tag: string): string => serviceTagOf(tag).toLowerCase();

function prune<V>(map: Map<string, V>, expired: (value: V) => boolean): void {
  for (const [key, value] of map) if (expired(value)) map.delete(key);
}
