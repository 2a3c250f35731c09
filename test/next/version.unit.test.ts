/**
 * The supported Next.js range, and the check the handler makes when Next first constructs it:
 * read from the app's own node_modules (a folder here with a made-up next/package.json).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from '@jest/globals';
import { createCacheHandler } from '../../next/cache-handler.js';
import {
  checkNextVersion,
  installedNextVersion,
  nextVersionCheck,
  SUPPORTED_NEXT,
  SUPPORTED_NEXT_RANGE,
  UnsupportedNextVersionError,
} from '../../next/version.js';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const folder = mkdtempSync(join(tmpdir(), 'isr-next-version-'));
afterAll(() => rmSync(folder, { recursive: true, force: true }));

/** An app folder whose node_modules holds Next `version`; its build's serverDistDir. */
function appWithNext(version: string): { serverDistDir: string } {
  const app = mkdtempSync(join(folder, 'app-'));
  mkdirSync(join(app, 'node_modules', 'next'), { recursive: true });
  writeFileSync(join(app, 'node_modules', 'next', 'package.json'), JSON.stringify({ version }));
  mkdirSync(join(app, '.next', 'server'), { recursive: true });
  return { serverDistDir: join(app, '.next', 'server') };
}

describe('checkNextVersion', () => {
  it.each(['16.4.0', '16.4.6', '16.5.0-canary.3', '16.10.1'])('supports %s', (version) => {
    expect(checkNextVersion(version)).toBe('supported');
  });

  it.each(['16.3.8', '16.2.6', '16.0.11', '15.5.29', '16.4.0-canary.9'])(
    'refuses %s, saying which versions work and why',
    (version) => {
      expect(() => checkNextVersion(version)).toThrow(UnsupportedNextVersionError);
      expect(() => checkNextVersion(version)).toThrow(
        `facetheory-isr/next supports Next.js >=16.4.0 <17; this app runs ${version}. Upgrade Next.js to 16.4.0 or later: before it, a route with \`dynamicParams = false\` answers 404`,
      );
    },
  );

  it('allows a newer major as untested, and a version it cannot read as unknown', () => {
    expect(checkNextVersion('17.0.0')).toBe('untested');
    expect(checkNextVersion(undefined)).toBe('unknown');
    expect(checkNextVersion('latest')).toBe('unknown');
  });

  it("is package.json's peer range, and its oldest is the next-oldest the tests run", () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
      peerDependencies: Record<string, string>;
      devDependencies: Record<string, string>;
    };
    expect(pkg.peerDependencies.next).toBe(SUPPORTED_NEXT_RANGE);
    expect(pkg.devDependencies['next-oldest']).toBe(`npm:next@${SUPPORTED_NEXT.oldest}`);
    expect(Number(pkg.devDependencies.next?.split('.')[0])).toBe(SUPPORTED_NEXT.major);
  });
});

describe('installedNextVersion', () => {
  it("reads the app's next from its build folder, before the working folder", () => {
    expect(installedNextVersion(appWithNext('16.3.8'), folder)).toBe('16.3.8');
  });

  it('falls back to the working folder, and to undefined when neither has next', () => {
    const cwd = join(appWithNext('16.4.1').serverDistDir, '..', '..');
    expect(installedNextVersion({}, cwd)).toBe('16.4.1');
    expect(installedNextVersion(undefined, folder)).toBeUndefined();
  });
});

describe('the handler checks the Next.js it runs under, once', () => {
  const env = { ISR_REVALIDATE_URL: 'http://127.0.0.1:1/_isr/revalidate' };

  it('constructs on a supported version, logging nothing', () => {
    const logged: unknown[] = [];
    const Handler = createCacheHandler({ env, log: (...line) => logged.push(line) });
    expect(() => new Handler(appWithNext('16.4.0'))).not.toThrow();
    expect(logged).toEqual([]);
  });

  it('refuses an older one on every construction, with the message (negative control)', () => {
    const Handler = createCacheHandler({ env, log: () => undefined });
    const old = appWithNext('16.2.6');
    expect(() => new Handler(old)).toThrow(UnsupportedNextVersionError);
    expect(() => new Handler(old)).toThrow(/this app runs 16\.2\.6/);
  });

  it('logs an untested version once and runs', () => {
    const logged: unknown[] = [];
    const check = nextVersionCheck((...line) => logged.push(line));
    const next17 = appWithNext('17.1.0');
    check(next17);
    check(next17);
    expect(logged).toEqual([
      [
        'warn',
        { message: 'Next.js version untested', version: '17.1.0', supported: '>=16.4.0 <17' },
      ],
    ]);
  });
});
