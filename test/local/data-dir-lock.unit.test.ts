import { describe, expect, it } from '@jest/globals';
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  DataDirLockedError,
  lockDataDir,
  lockFileOf,
  type LockOptions,
} from '../../local/data-dir-lock.js';

const server = { host: '127.0.0.1', port: 3000 };
const at = (iso: string) => () => new Date(iso);
const freshDir = () => join(mkdtempSync(join(tmpdir(), 'isr-lock-')), '.local');

/** Processes the test says run: the others are gone. */
const running =
  (...pids: number[]): LockOptions['isAlive'] =>
  (pid) =>
    pids.includes(pid);

const refusal = async (promise: Promise<unknown>): Promise<DataDirLockedError> => {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(DataDirLockedError);
  return error as DataDirLockedError;
};

describe('the data directory lock (issue 19, item 17)', () => {
  it('refuses a second start while the first runs, saying who holds it', async () => {
    const dir = freshDir();
    const first = { pid: 101, now: at('2027-01-15T10:00:00.000Z'), isAlive: running(101, 202) };
    await lockDataDir(dir, server, first);
    const error = await refusal(
      lockDataDir(dir, { ...server, port: 3001 }, { ...first, pid: 202 }),
    );
    expect(error.holder).toEqual({ pid: 101, ...server, since: '2027-01-15T10:00:00.000Z' });
    expect(error.message).toBe(
      `the data directory ${dir} is in use by another npm start (pid 101, port 3000 on ` +
        '127.0.0.1, since 2027-01-15T10:00:00.000Z): stop it, or set ' +
        `ISR_LOCAL_DATA_DIR to another directory (if pid 101 is not an npm start, delete ` +
        `${lockFileOf(dir)})`,
    );
    // the holder's lock is untouched, and nothing else is left behind
    expect(JSON.parse(readFileSync(lockFileOf(dir), 'utf8'))).toMatchObject({ pid: 101 });
    expect(readdirSync(dir)).toEqual(['npm-start.lock']);
  });

  it('is free again once released', async () => {
    const dir = freshDir();
    const options = { isAlive: running(101, 202) };
    const lock = await lockDataDir(dir, server, { ...options, pid: 101 });
    expect(await lock.release()).toEqual([]);
    expect(readdirSync(dir)).toEqual([]);
    const next = await lockDataDir(dir, server, { ...options, pid: 202 });
    expect(next.tookOver).toBeUndefined();
  });

  it('takes over a lock whose process is gone (a killed start)', async () => {
    const dir = freshDir();
    await lockDataDir(dir, server, { pid: 101, now: at('2027-01-15T10:00:00.000Z') });
    const lock = await lockDataDir(dir, server, { pid: 202, isAlive: running(202) });
    expect(lock.tookOver).toMatchObject({ pid: 101, since: '2027-01-15T10:00:00.000Z' });
    expect(JSON.parse(readFileSync(lockFileOf(dir), 'utf8'))).toMatchObject({ pid: 202 });
    expect(readdirSync(dir)).toEqual(['npm-start.lock']);
  });

  it('takes over a lock naming its own pid (a start before a reboot, or in a container)', async () => {
    const dir = freshDir();
    await lockDataDir(dir, server, { pid: 1 });
    const lock = await lockDataDir(dir, server, { pid: 1, isAlive: running(1) });
    expect(lock.tookOver).toMatchObject({ pid: 1 });
  });

  it('takes over a lock file it cannot read', async () => {
    const dir = freshDir();
    await lockDataDir(dir, server, { pid: 101 });
    writeFileSync(lockFileOf(dir), 'garbage');
    await expect(lockDataDir(dir, server, { pid: 202, isAlive: running(202) })).resolves.toEqual(
      expect.objectContaining({ tookOver: undefined }),
    );
  });

  it('leaves a lock another start took to it on release', async () => {
    const dir = freshDir();
    const first = await lockDataDir(dir, server, { pid: 101 });
    await lockDataDir(dir, server, { pid: 202, isAlive: running(202) });
    expect(await first.release()).toEqual([
      `the lock ${lockFileOf(dir)} was taken by pid 202; left to it`,
    ]);
    expect(JSON.parse(readFileSync(lockFileOf(dir), 'utf8'))).toMatchObject({ pid: 202 });
  });

  it('never removes a live lock another start put in place of the stale one it judged', async () => {
    const dir = freshDir();
    await lockDataDir(dir, server, { pid: 101 });
    const live = JSON.stringify({ pid: 202, ...server, since: '2027-01-15T10:00:01.000Z' });
    let swapped = false;
    // Between judging pid 101 gone and moving its lock aside, start 202 replaces it with its own.
    const isAlive = (pid: number) => {
      if (pid === 101 && !swapped) {
        swapped = true;
        writeFileSync(lockFileOf(dir), live);
      }
      return pid === 202 || pid === 303;
    };
    const error = await refusal(lockDataDir(dir, server, { pid: 303, isAlive }));
    expect(error.holder.pid).toBe(202);
    expect(readFileSync(lockFileOf(dir), 'utf8')).toBe(live);
    expect(readdirSync(dir)).toEqual(['npm-start.lock']);
  });
});
