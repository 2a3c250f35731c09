/**
 * The CLI as the README shows it, end to end: `npm start` writes endpoints.json once ready,
 * `npm run isr -- inspect /hello` and `rollback /hello` (run as processes) find it, the rollback
 * is served at once, and Ctrl-C removes the file.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from '@jest/globals';
import type { Inspection } from '../../cli/commands/inspect.js';
import { endpointsFileOf, readEndpointsFile } from '../../local/endpoints-file.js';
import { ctrlC, npmStart, stopStarted, until } from '../local/npm-start.js';

const root = mkdtempSync(join(tmpdir(), 'isr-cli-e2e-'));
afterAll(async () => {
  await stopStarted(() => true);
  rmSync(root, { recursive: true, force: true });
});

/** `isr <argv>` as a separate process, the way a person runs it. */
async function isr(dataDir: string, ...argv: string[]) {
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import', 'tsx', 'cli/main.ts', ...argv],
    { env: { ...process.env, ISR_LOCAL_DATA_DIR: dataDir, ISR_ACTOR: 'e2e' } },
  );
  return stdout;
}
const inspect = async (dataDir: string) =>
  JSON.parse(await isr(dataDir, 'inspect', '/hello', '--json')) as Inspection;

const etagOf = async (url: string) => (await fetch(url)).headers.get('etag');

describe('isr against npm start', () => {
  it('inspects /hello, rolls it back to the first generation, served at once; Ctrl-C removes endpoints.json', async () => {
    const dataDir = join(root, 'data');
    const started = await npmStart({ dataDir, env: { ISR_REVALIDATE_SECONDS: '2' } });
    expect((await readEndpointsFile(dataDir))?.httpUrl).toBe(started.url);

    const firstEtag = await etagOf(`${started.url}/hello`);
    const first = await inspect(dataDir);
    expect(first.meta?.etag).toBe(firstEtag);
    expect(first.versions).toHaveLength(1);

    // Stale after 2 s: the next request queues a regeneration, which the worker publishes.
    const second = await until(
      async () => {
        await etagOf(`${started.url}/hello`);
        return inspect(dataDir);
      },
      (found) => found.versions.length === 2,
      30_000,
    );
    expect(second.meta?.etag).not.toBe(firstEtag);

    await isr(dataDir, 'rollback', '/hello', '--hold', '5m');
    expect(await etagOf(`${started.url}/hello`)).toBe(firstEtag);
    const after = await inspect(dataDir);
    expect(after.versions.find((v) => v.live)?.id).toBe(first.versions[0]?.id);
    expect(after.meta?.rolledBack?.by).toBe('e2e');

    expect(await ctrlC(started)).toContain('stopped cleanly');
    expect(existsSync(endpointsFileOf(dataDir))).toBe(false);
  }, 180_000);
});
