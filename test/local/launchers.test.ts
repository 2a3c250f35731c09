import { spawn } from 'node:child_process';
import { describe, expect, it } from '@jest/globals';
import { npmLaunchers, procInfo, watchLaunchers, type ProcessInfo } from '../../local/launchers.js';

const script = { npm_lifecycle_event: 'start', npm_lifecycle_script: 'tsx local/start.ts' };

/** A process table: pid → parent and initial environment. */
const table =
  (rows: Record<number, { ppid: number; env: Record<string, string> }>) =>
  (pid: number): ProcessInfo | undefined => {
    const row = rows[pid];
    return row && { ppid: row.ppid, environ: new Map(Object.entries(row.env)) };
  };

describe('npmLaunchers', () => {
  it('finds tsx, the shell and npm above the service, and nothing above npm', () => {
    const info = table({
      40: { ppid: 30, env: script }, // tsx
      30: { ppid: 20, env: script }, // sh -c
      20: { ppid: 10, env: {} }, // npm start
      10: { ppid: 1, env: {} }, // the user's shell
    });
    expect(npmLaunchers(script, 40, info)).toEqual([40, 30, 20]);
  });

  it('stops at the npm that runs this script when npm start runs inside another npm script', () => {
    const outer = { npm_lifecycle_event: 'dev', npm_lifecycle_script: 'npm start' };
    const info = table({
      40: { ppid: 30, env: script },
      30: { ppid: 20, env: script },
      20: { ppid: 15, env: outer }, // the inner npm, started by the outer script
      15: { ppid: 10, env: outer },
      10: { ppid: 1, env: {} },
    });
    expect(npmLaunchers(script, 40, info)).toEqual([40, 30, 20]);
  });

  it('watches nothing when not run by npm, or when the process tree cannot be read', () => {
    const info = table({ 40: { ppid: 1, env: {} } });
    expect(npmLaunchers({}, 40, info)).toEqual([]);
    expect(npmLaunchers(script, 40, () => undefined)).toEqual([]);
  });

  it('reads a real process: this one, with its parent', () => {
    expect(procInfo(process.pid)?.ppid).toBe(process.ppid);
    expect(procInfo(process.pid)?.environ.get('PATH')).toBe(process.env.PATH);
  });
});

describe('watchLaunchers', () => {
  it('reports the launcher that exited', async () => {
    const launcher = spawn('sleep', ['30'], { stdio: 'ignore' });
    const pid = launcher.pid ?? 0;
    const gone = new Promise<number>((resolve) => watchLaunchers([process.pid, pid], resolve, 20));
    const exited = new Promise((resolve) => launcher.once('exit', resolve));
    launcher.kill('SIGTERM');
    await exited;
    expect(await gone).toBe(pid);
  });
});
