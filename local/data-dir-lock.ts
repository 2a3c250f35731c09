/**
 * One `npm start` per data directory. Two on one directory would share DynamoDB Local's file and
 * s3rver's folder, steal each other's LOCKs and overwrite `endpoints.json`; the second is refused
 * at once, told who holds the directory. The lock is a file naming its holder: created whole and
 * atomically (a draft hard-linked into place), judged stale only when its process is gone, so a
 * lock left by a killed start is taken over and no pause (a debugger, a laptop asleep) loses it.
 */
import { link, mkdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

/** Who holds a data directory. */
export interface LockHolder {
  readonly pid: number;
  /** Where its HTTP server listens. */
  readonly host: string;
  readonly port: number;
  /** When it took the lock (ISO 8601). */
  readonly since: string;
}

/** Another `npm start` holds the directory; the message says who and what to do. */
export class DataDirLockedError extends Error {
  override readonly name = 'DataDirLockedError';
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder,
  ) {
    const { pid, host, port, since } = holder;
    super(
      `the data directory ${dataDir} is in use by another npm start (pid ${pid}, port ${port} ` +
        `on ${host}, since ${since}): stop it, or set ISR_LOCAL_DATA_DIR to another directory ` +
        `(if pid ${pid} is not an npm start, delete ${lockFileOf(dataDir)})`,
    );
  }
}

export interface DataDirLock {
  /** The holder whose lock was taken over because its process is gone, if any. */
  readonly tookOver: LockHolder | undefined;
  /** Removes the lock if it is still ours; says so when it is not (a stop step). */
  release(): Promise<readonly string[]>;
}

export interface LockOptions {
  readonly pid?: number;
  readonly now?: () => Date;
  /** Whether a process runs; `process.kill(pid, 0)` by default. */
  readonly isAlive?: (pid: number) => boolean;
}

export const lockFileOf = (dataDir: string): string => join(dataDir, 'npm-start.lock');

/** Where the locking start's HTTP server listens. */
export interface ListenAddress {
  readonly host: string;
  readonly port: number;
}

/**
 * Takes `dataDir` for this process, whose server listens at `address`.
 * @throws DataDirLockedError when a running process holds it
 */
export async function lockDataDir(
  dataDir: string,
  address: ListenAddress,
  options: LockOptions = {},
): Promise<DataDirLock> {
  const { pid = process.pid, now = () => new Date(), isAlive = processIsAlive } = options;
  const path = lockFileOf(dataDir);
  const mine: LockHolder = { pid, ...address, since: now().toISOString() };
  await mkdir(dataDir, { recursive: true });
  const draft = `${path}.${pid}`;
  await writeFile(draft, JSON.stringify(mine));
  // our own pid cannot hold it yet: a start before a reboot, or in a container, had it
  const stale = (holder: LockHolder) => holder.pid === pid || !isAlive(holder.pid);
  let tookOver: LockHolder | undefined;
  try {
    for (let attempt = 0; attempt < 5; attempt++) {
      if (await linked(draft, path)) return { tookOver, release: () => release(path, mine) };
      const holder = await readHolder(path);
      if (holder === 'gone') continue;
      if (holder !== undefined && !stale(holder)) throw new DataDirLockedError(dataDir, holder);
      if (await removeStale(path, `${path}.stale.${pid}`, stale)) tookOver = holder;
    }
    throw new Error(`could not lock ${dataDir}: other starts keep taking it; try again`);
  } finally {
    await rm(draft, { force: true });
  }
}

/** Creates `path` as `draft`, whole, unless it exists. */
async function linked(draft: string, path: string): Promise<boolean> {
  try {
    await link(draft, path);
    return true;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw error;
  }
}

/** The holder a lock file names; undefined when unreadable (stale), `gone` when there is none. */
async function readHolder(path: string): Promise<LockHolder | undefined | 'gone'> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return 'gone';
    throw error;
  }
  try {
    const holder = JSON.parse(text) as Partial<LockHolder>;
    return typeof holder.pid === 'number' && Number.isInteger(holder.pid)
      ? (holder as LockHolder)
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Moves a stale lock aside (a rename: of two starts taking it over, one moves it). If what was
 * moved is a live lock another start took meanwhile, it is put back. Says whether a stale lock
 * was removed.
 */
async function removeStale(
  path: string,
  aside: string,
  stale: (holder: LockHolder) => boolean,
): Promise<boolean> {
  try {
    await rename(path, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw error;
  }
  const moved = await readHolder(aside);
  const wasStale = typeof moved !== 'object' || stale(moved);
  if (!wasStale) await linked(aside, path);
  await rm(aside, { force: true });
  return wasStale;
}

/** Removes the lock if it still names this process. */
async function release(path: string, mine: LockHolder): Promise<readonly string[]> {
  const holder = await readHolder(path);
  if (holder === 'gone') return [`the lock ${path} was removed while this start held it`];
  if (holder?.pid !== mine.pid || holder.since !== mine.since) {
    return [`the lock ${path} was taken by pid ${holder?.pid ?? 'unknown'}; left to it`];
  }
  await rm(path, { force: true });
  return [];
}

/** `kill -0`: no such process is ESRCH; EPERM means it runs as another user. */
function processIsAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}
