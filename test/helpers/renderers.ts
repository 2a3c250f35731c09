import type { RenderRequest } from '../../lambda/core/regenerate/ports.js';
import type { RenderResult } from '../../lambda/core/page/model.js';
import { htmlPage, ModuleRenderer } from '../../lambda/adapters/renderer/module.js';

export type PageFunction = (
  request: RenderRequest,
  call: number,
) => Promise<RenderResult> | RenderResult;

/** A module renderer that counts its calls, per path and in all. */
export function countingRenderer(page: PageFunction = defaultPage) {
  const byPath = new Map<string, number>();
  const lastPage = new Map<string, string>();
  let calls = 0;
  const renderer = new ModuleRenderer(async (request) => {
    calls += 1;
    byPath.set(request.cacheKey.key, (byPath.get(request.cacheKey.key) ?? 0) + 1);
    const result = await page(request, calls);
    lastPage.set(request.cacheKey.key, new TextDecoder().decode(result.body));
    return result;
  });
  return {
    renderer,
    get calls() {
      return calls;
    },
    callsFor: (key: string) => byPath.get(key) ?? 0,
    /** The text of the last page rendered for a cache key. */
    lastPageFor: (key: string) => lastPage.get(key),
  };
}

export const defaultPage: PageFunction = (request, call) =>
  htmlPage(`<p>${request.cacheKey.key} render ${call}</p>`, { revalidateSeconds: 60 });

/** A render that never finishes on its own: it rejects once `signal` aborts, as a renderer honouring it does. */
export const untilAborted = (signal: AbortSignal): Promise<never> =>
  new Promise((_resolve, reject) => {
    if (signal.aborted) reject(new Error('aborted'));
    signal.addEventListener('abort', () => reject(new Error('aborted')), { once: true });
  });

/**
 * A gate a test opens by hand: `wait()` resolves once `open()` was called. Lets a test hold a
 * render, a publish or a request at a chosen point instead of racing it against the wall clock.
 */
export function gate() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => (open = resolve));
  return { open, wait: () => opened };
}
