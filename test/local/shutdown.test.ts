import { describe, expect, it } from '@jest/globals';
import { createShutdown, stopInOrder, type StopStep } from '../../local/shutdown.js';

/** Steps that record when they start and finish, each finishing when the test says so. */
function recordingSteps(results: Record<string, readonly string[] | Error>) {
  const events: string[] = [];
  const finish = new Map<string, () => void>();
  const steps: StopStep[] = Object.entries(results).map(([name, result]) => ({
    name,
    run: async () => {
      events.push(`start ${name}`);
      await new Promise<void>((resolve) => finish.set(name, resolve));
      events.push(`end ${name}`);
      if (result instanceof Error) throw result;
      return result;
    },
  }));
  const finishNext = async () => {
    while (finish.size === 0) await new Promise((resolve) => setImmediate(resolve));
    const [name, resolve] = [...finish.entries()][0] ?? [];
    finish.delete(name ?? '');
    resolve?.();
  };
  return { steps, events, finishNext };
}

function fakeIo(start = 0) {
  const lines: string[] = [];
  const exits: number[] = [];
  let now = start;
  let exited: (code: number) => void = () => undefined;
  const exit = new Promise<number>((resolve) => (exited = resolve));
  return {
    io: {
      log: (line: string) => lines.push(line),
      error: (line: string) => lines.push(`error: ${line}`),
      exit: (code: number) => {
        exits.push(code);
        exited(code);
      },
      now: () => now,
    },
    lines,
    exits,
    exit,
    advance: (ms: number) => (now += ms),
  };
}

describe('stopInOrder', () => {
  it('starts each step only after the previous one finished, and collects what was not clean', async () => {
    const { steps, events, finishNext } = recordingSteps({
      front: ['GET /a answered 503'],
      poller: new Error('queue gone'),
      backends: [],
    });
    const stopping = stopInOrder(steps);
    await finishNext();
    await finishNext();
    await finishNext();
    expect(await stopping).toEqual(['GET /a answered 503', 'poller: queue gone']);
    expect(events).toEqual([
      'start front',
      'end front',
      'start poller',
      'end poller',
      'start backends',
      'end backends',
    ]);
  });
});

describe('createShutdown', () => {
  it('says "stopped cleanly" and exits 0 only when every step was clean', async () => {
    const { steps, finishNext } = recordingSteps({ front: [], backends: [] });
    const { io, lines, exit } = fakeIo();
    createShutdown(steps, io)('SIGINT', { signal: true });
    await finishNext();
    await finishNext();
    expect(await exit).toBe(0);
    expect(lines).toEqual(['SIGINT: finishing in-flight work and stopping...', 'stopped cleanly']);
  });

  it('says what was not clean and exits 1 otherwise', async () => {
    const { steps, finishNext } = recordingSteps({
      front: [],
      backends: ['DynamoDB Local had already exited with signal SIGKILL'],
    });
    const { io, lines, exit } = fakeIo();
    createShutdown(steps, io)('SIGTERM', { signal: true });
    await finishNext();
    await finishNext();
    expect(await exit).toBe(1);
    expect(lines.join('\n')).not.toContain('stopped cleanly');
    expect(lines.at(-1)).toBe(
      'error: stopped, but not cleanly:\n  - DynamoDB Local had already exited with signal SIGKILL',
    );
  });

  it('stops once for a Ctrl-C relayed several times, and exits at once on a deliberate second one', async () => {
    const { steps, events } = recordingSteps({ front: [] });
    const { io, lines, exits, advance } = fakeIo();
    const stop = createShutdown(steps, io);
    stop('SIGINT', { signal: true });
    advance(30);
    stop('SIGINT', { signal: true }); // tsx and npm relaying the same Ctrl-C
    stop('npm start launcher exited');
    await new Promise((resolve) => setImmediate(resolve));
    expect(events).toEqual(['start front']);
    expect(exits).toEqual([]);

    advance(5_000);
    stop('npm start launcher exited'); // not a person: never forces
    expect(exits).toEqual([]);
    stop('SIGINT', { signal: true });
    expect(exits).toEqual([1]);
    expect(lines.at(-1)).toBe('error: SIGINT again: exiting now, without finishing in-flight work');
  });
});
