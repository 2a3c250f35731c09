import { InMemoryFanOutProgressRows } from '../../lambda/adapters/fan-out-progress/memory.js';
import { htmlPage } from '../../lambda/adapters/renderer/module.js';
import { InMemoryRevalidationsInProgress } from '../../lambda/adapters/revalidations-in-progress/memory.js';
import { InMemoryRevalidationStatuses } from '../../lambda/adapters/revalidation-status/memory.js';
import type { CdnPurge } from '../../lambda/core/page/ports.js';
import { markBatch, type FanOutDeps } from '../../lambda/core/revalidate/fan-out.js';
import { parseFanOut } from '../../lambda/core/revalidate/fan-out-message.js';
import { InProgressReader } from '../../lambda/core/page/in-progress.js';
import type { Revalidation } from '../../lambda/core/revalidate/model.js';
import type { SoftPurgeDeps } from '../../lambda/core/revalidate/soft-purge.js';
import { servePage } from '../../lambda/core/serve/serve.js';
import { TestClock } from './clock.js';
import { memoryService } from './memory-service.js';
import { countingRenderer } from './renderers.js';

/** Every call made to `target`'s methods, as `<name>.<method>`, in `calls`. */
export function counted<T extends object>(name: string, target: T, calls: string[]): T {
  return new Proxy(target, {
    get(object, property, receiver) {
      const value: unknown = Reflect.get(object, property, receiver);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        calls.push(`${name}.${String(property)}`);
        return (value as (...a: unknown[]) => unknown).apply(object, args);
      };
    },
  });
}

/**
 * The in-memory service with background revalidation: fan-out deps over its rows, an origin
 * that honours in-progress rows (`withCheck: false` drops the check: the negative control), and
 * `drain` running queued fan-out steps the way the worker does.
 */
export function backgroundService(
  options: {
    tagsOf?: (path: string) => string[];
    withCheck?: boolean;
    batchSize?: number;
    /** Soft purges (`regenerate: true` defers the CDN purge). @default - none */
    softPurge?: SoftPurgeDeps;
  } = {},
) {
  const clock = new TestClock();
  // The revalidate function's own wait moves time on at once (the origin's render timers do not).
  const revalidateClock = {
    now: () => clock.now(),
    sleep: (ms: number) => Promise.resolve(clock.advanceMs(ms)),
  };
  const tagsOf = options.tagsOf ?? (() => ['post']);
  const counter = countingRenderer((request, call) => ({
    ...htmlPage(`<p>${request.cacheKey.key} #${call}</p>`, { revalidateSeconds: 600 }),
    tags: tagsOf(request.cacheKey.path),
  }));
  const service = memoryService({ renderer: counter.renderer, clock });
  const inProgress = new InMemoryRevalidationsInProgress(service.state);
  const purges: string[][] = [];
  const statuses = new InMemoryRevalidationStatuses();
  const deps: FanOutDeps = {
    marks: service.marks,
    tagIndex: service.tagIndex,
    queue: service.queue,
    cdn: {
      invalidateTags: (tags: readonly string[]): Promise<CdnPurge> => {
        purges.push([...tags]);
        return Promise.resolve({ status: 'submitted', invalidationIds: ['I1'] });
      },
    },
    clock: revalidateClock,
    deployId: 'd1',
    inProgress,
    shards: 4,
    progress: new InMemoryFanOutProgressRows(service.state, statuses),
    fanOutQueue: service.queue,
    statuses,
    batchSize: options.batchSize ?? 100,
    inProgressCacheMs: 250,
    softPurge: options.softPurge,
  };
  const reader = new InProgressReader({ rows: inProgress, shards: 4, cacheMs: 250 }, clock);
  const originDeps = {
    ...service.originDeps,
    ...(options.withCheck === false ? {} : { inProgress: reader }),
  };
  const get = (path: string) =>
    servePage(originDeps, {
      method: 'GET',
      rawPath: path,
      rawQueryString: '',
      tenant: undefined,
      ifNoneMatch: undefined,
    });
  let effects = 0;
  const revalidation = (r: Partial<Revalidation> = {}): Revalidation => ({
    tenant: undefined,
    keys: [],
    tags: ['post'],
    mode: 'stale',
    regenerate: false,
    effectId: `rv_${String(++effects).padStart(32, '0')}`,
    ...r,
  });
  /** Runs queued fan-out steps (and the steps they queue) until none is left. */
  const drain = async (limit = Number.POSITIVE_INFINITY) => {
    const steps = [];
    while (service.queue.fanOuts.length > 0 && steps.length < limit) {
      const queued = service.queue.fanOuts.shift();
      if (queued !== undefined) steps.push(await markBatch(deps, parseFanOut(queued.body)));
    }
    return steps;
  };
  return { ...service, counter, deps, inProgress, reader, get, revalidation, drain, purges };
}
