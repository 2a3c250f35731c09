/**
 * The Node.js built-ins the shipped adapter uses, taken from the running Node on first call
 * (`process.getBuiltinModule`, Node 20.16+) instead of imported. Next bundles the `cacheHandler`
 * into an app's edge middleware, and its bundlers refuse any `node:` import there (webpack:
 * `UnhandledSchemeError`); next/build.ts maps the adapter's `node:` imports to this file, so the
 * sources keep plain imports and the bundle holds none. On the edge, a call throws, naming why.
 */
import type * as Crypto from 'node:crypto';
import type * as Module from 'node:module';
import type * as TimersPromises from 'node:timers/promises';

/** The built-ins this file stands in for: next/build.ts refuses any other `node:` import. */
export const MAPPED_BUILTINS = ['node:crypto', 'node:module', 'node:timers/promises'] as const;

/**
 * Whether this is Node.js, not the edge runtime. The edge sandbox of `next start` stands in for
 * every `process` member with a function that throws, so it is told by the `NEXT_RUNTIME=edge`
 * it sets (https://nextjs.org/docs/api-reference/edge-runtime, "Environment Variables") or the
 * `EdgeRuntime` global its VM defines.
 */
export function hasNodeBuiltins(): boolean {
  const edge =
    typeof (globalThis as { EdgeRuntime?: unknown }).EdgeRuntime === 'string' ||
    globalThis.process?.env?.NEXT_RUNTIME === 'edge';
  return !edge && typeof globalThis.process?.getBuiltinModule === 'function';
}

/** A built-in of the running Node. @throws Error on the edge runtime, naming the module */
function builtin<T>(id: (typeof MAPPED_BUILTINS)[number]): T {
  const module = hasNodeBuiltins() ? globalThis.process.getBuiltinModule(id) : undefined;
  if (module === undefined) {
    throw new Error(
      `facetheory-isr/next: ${id} is not available in this runtime (the edge runtime?): ` +
        'revalidate from a Node.js route handler or Server Action',
    );
  }
  return module as T;
}

const nodeCrypto = () => builtin<typeof Crypto>('node:crypto');

export function createHash(...args: Parameters<typeof Crypto.createHash>): Crypto.Hash {
  return nodeCrypto().createHash(...args);
}

export function createHmac(...args: Parameters<typeof Crypto.createHmac>): Crypto.Hmac {
  return nodeCrypto().createHmac(...args);
}

export function randomUUID(...args: Parameters<typeof Crypto.randomUUID>): string {
  return nodeCrypto().randomUUID(...args);
}

export function timingSafeEqual(...args: Parameters<typeof Crypto.timingSafeEqual>): boolean {
  return nodeCrypto().timingSafeEqual(...args);
}

export function createRequire(...args: Parameters<typeof Module.createRequire>): NodeJS.Require {
  return builtin<typeof Module>('node:module').createRequire(...args);
}

/** `setTimeout` of `node:timers/promises` (the adapter's retry sleep), not the global one. */
function sleep<T = void>(...args: Parameters<typeof TimersPromises.setTimeout<T>>): Promise<T> {
  return builtin<typeof TimersPromises>('node:timers/promises').setTimeout<T>(...args);
}
export { sleep as setTimeout };
