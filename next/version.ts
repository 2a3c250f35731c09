/**
 * The Next.js versions the adapter supports, checked when Next first constructs the handler (in
 * `next build` and `next start` alike), so an app on a version that breaks whole routes fails
 * loudly instead of answering 404s. Before 16.4, Next decided that a page of a
 * `dynamicParams = false` route was not prerendered from a cache miss, and this adapter's `get()`
 * always misses: every prerendered page of such a route answered 404 (15.5, 16.0, 16.2, 16.3).
 */
import { createRequire } from 'node:module';
import type { AdapterLog } from './client.js';
import { hasNodeBuiltins } from './node-builtins.js';

/** The oldest supported Next.js, and the newest major it is tested with. */
export const SUPPORTED_NEXT = { oldest: '16.4.0', major: 16 } as const;
export const SUPPORTED_NEXT_RANGE = `>=${SUPPORTED_NEXT.oldest} <${SUPPORTED_NEXT.major + 1}`;

/** What the check found: a version it runs on, one newer than tested, or none it could read. */
export const NextVersionFinding = {
  Supported: 'supported',
  Untested: 'untested',
  Unknown: 'unknown',
} as const;
export type NextVersionFinding = (typeof NextVersionFinding)[keyof typeof NextVersionFinding];

/** A Next.js older than the adapter supports: the app must upgrade Next. */
export class UnsupportedNextVersionError extends Error {
  override readonly name = 'UnsupportedNextVersionError';
  constructor(readonly version: string) {
    super(
      `facetheory-isr/next supports Next.js ${SUPPORTED_NEXT_RANGE}; this app runs ${version}. ` +
        `Upgrade Next.js to ${SUPPORTED_NEXT.oldest} or later: before it, a route with ` +
        '`dynamicParams = false` answers 404 for its prerendered pages behind this adapter',
    );
  }
}

const VERSION = /^(\d+)\.(\d+)\.(\d+)(-\S+)?$/;

/** Semver order of two versions, a pre-release before its release. */
function compare(a: RegExpExecArray, b: RegExpExecArray): number {
  for (const at of [1, 2, 3]) {
    const delta = Number(a[at]) - Number(b[at]);
    if (delta !== 0) return delta;
  }
  return (a[4] === undefined ? 1 : 0) - (b[4] === undefined ? 1 : 0);
}

/** What `version` means for the adapter. @throws UnsupportedNextVersionError below the oldest */
export function checkNextVersion(version: string | undefined): NextVersionFinding {
  const parsed = version === undefined ? null : VERSION.exec(version);
  if (parsed === null) return NextVersionFinding.Unknown;
  if (compare(parsed, VERSION.exec(SUPPORTED_NEXT.oldest)!) < 0) {
    throw new UnsupportedNextVersionError(version!);
  }
  return Number(parsed[1]) > SUPPORTED_NEXT.major
    ? NextVersionFinding.Untested
    : NextVersionFinding.Supported;
}

/** What Next hands the handler's constructor, as far as the check reads it. */
export interface NextVersionContext {
  /** `<app>/.next/server`: the app's own node_modules are found from there. */
  readonly serverDistDir?: string;
}

/**
 * The version of the Next.js the app resolves, from its build folder (`serverDistDir`, which
 * Next hands the handler) or else the working folder; undefined when neither finds it.
 */
export function installedNextVersion(context: unknown, cwd = process.cwd()): string | undefined {
  const distDir = (context as NextVersionContext | undefined)?.serverDistDir;
  const folders = typeof distDir === 'string' ? [distDir, cwd] : [cwd];
  for (const folder of folders) {
    try {
      const pkg = createRequire(`${folder}/package.json`)('next/package.json') as {
        version?: unknown;
      };
      if (typeof pkg.version === 'string') return pkg.version;
    } catch {
      // not resolvable from this folder: try the next one
    }
  }
  return undefined;
}

/**
 * A check of the app's Next.js that runs once: a version it cannot read or newer than tested is
 * logged and allowed; on the edge runtime (no file system) it does nothing.
 * @throws UnsupportedNextVersionError on every call, once the version was found too old
 */
export function nextVersionCheck(log: AdapterLog): (context: unknown) => void {
  let refused: Error | undefined;
  let done = false;
  return (context) => {
    if (!done && hasNodeBuiltins()) {
      done = true;
      const version = installedNextVersion(context);
      try {
        const finding = checkNextVersion(version);
        if (finding !== NextVersionFinding.Supported) {
          log('warn', {
            message: `Next.js version ${finding}`,
            version,
            supported: SUPPORTED_NEXT_RANGE,
          });
        }
      } catch (error) {
        refused = error as Error;
      }
    }
    if (refused !== undefined) throw refused;
  };
}
