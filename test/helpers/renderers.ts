import type { RenderRequest, RenderResult } from '../../lambda/core/ports.js';
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

/** Waits; stops early (rejecting) when `signal` aborts, like a renderer that honours it. */
export const sleep = (ms: number, signal?: AbortSignal): Promise<void> =>
  new Promise((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      reject(new Error('aborted'));
    });
  });
