import { afterEach, describe, expect, it } from '@jest/globals';
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fixtureStamp, NEXT_APP_DIR } from '../helpers/next-build.js';

const copies: string[] = [];
afterEach(() => copies.splice(0).forEach((dir) => rmSync(dir, { recursive: true, force: true })));

/** The fixture's sources (no build output) in a fresh folder. */
function copyOfFixture(): string {
  const dir = mkdtempSync(join(tmpdir(), 'next-stamp-'));
  copies.push(dir);
  cpSync(NEXT_APP_DIR, dir, { recursive: true, filter: (path) => !path.includes('.next') });
  return dir;
}

describe('fixtureStamp', () => {
  it('is the same for the same sources, wherever they are', () => {
    expect(fixtureStamp(copyOfFixture())).toBe(fixtureStamp(copyOfFixture()));
  });

  it('changes when a source byte changes, so a stale build is never reused', () => {
    const dir = copyOfFixture();
    const before = fixtureStamp(dir);
    writeFileSync(join(dir, 'app/page.jsx'), '// changed\n', { flag: 'a' });
    expect(fixtureStamp(dir)).not.toBe(before);
  });

  it('changes when a source file is added', () => {
    const dir = copyOfFixture();
    const before = fixtureStamp(dir);
    writeFileSync(join(dir, 'app/extra.js'), '');
    expect(fixtureStamp(dir)).not.toBe(before);
  });

  it('ignores the build output, the build lock and the README', () => {
    const dir = copyOfFixture();
    const before = fixtureStamp(dir);
    mkdirSync(join(dir, '.next'));
    writeFileSync(join(dir, '.next/BUILD_ID'), 'x');
    writeFileSync(join(dir, '.build.lock'), '1');
    writeFileSync(join(dir, 'README.md'), 'other prose');
    expect(fixtureStamp(dir)).toBe(before);
  });
});
