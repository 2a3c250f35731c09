/**
 * A deterministic scheduler for real async code. Every I/O call of every actor stops at a gate;
 * the driver releases one gate at a time and waits until the system settles again (every live
 * actor parked at a gate, finished or dead, nothing in flight). Which gate goes next is chosen by
 * the generated schedule, so fast-check explores (and replays) interleavings of the real code.
 */

interface Gate {
  readonly actor: string;
  readonly seq: number;
  readonly label: string;
  readonly release: () => void;
}

type ActorState = 'live' | 'done' | 'dead';

export class Interleaver {
  readonly #states = new Map<string, ActorState>();
  readonly #seqs = new Map<string, number>();
  readonly #errors = new Map<string, unknown>();
  #gates: Gate[] = [];
  #inFlight = 0;

  /** Starts an actor; it runs until its first gate. */
  start(actor: string, run: () => Promise<unknown>): Promise<unknown> {
    this.#states.set(actor, 'live');
    return run().then(
      (result) => {
        if (this.#states.get(actor) === 'live') this.#states.set(actor, 'done');
        return result;
      },
      (error: unknown) => {
        this.#states.set(actor, 'done');
        this.#errors.set(actor, error);
        return undefined;
      },
    );
  }

  /** Parks the calling actor until the driver picks this gate. */
  gate(actor: string, label: string): Promise<void> {
    if (this.#states.get(actor) !== 'live') return Promise.resolve(); // unmanaged (quiet phase)
    const seq = (this.#seqs.get(actor) ?? 0) + 1;
    this.#seqs.set(actor, seq);
    return new Promise((resolve) => {
      this.#gates.push({ actor, seq, label, release: resolve });
    });
  }

  /** The actor crashed: it never continues, and holds whatever it held. */
  die(actor: string): Promise<never> {
    this.#states.set(actor, 'dead');
    return new Promise<never>(() => undefined);
  }

  /** Counts a released call until its answer is back (wrapped around the real I/O). */
  async inFlight<T>(call: () => Promise<T>): Promise<T> {
    this.#inFlight += 1;
    try {
      return await call();
    } finally {
      this.#inFlight -= 1;
    }
  }

  /** Gates waiting now, in a stable order (by actor, then by the actor's own sequence). */
  waiting(): readonly { actor: string; label: string }[] {
    return this.#sorted();
  }

  hasWaiting(): boolean {
    return this.#gates.length > 0;
  }

  state(actor: string): ActorState | undefined {
    return this.#states.get(actor);
  }

  errorOf(actor: string): unknown {
    return this.#errors.get(actor);
  }

  /** Releases the `index`-th waiting gate (modulo) and waits for the system to settle. */
  async step(index: number): Promise<{ actor: string; label: string }> {
    const gates = this.#sorted();
    const gate = gates[index % gates.length];
    if (gate === undefined) throw new Error('no gate is waiting');
    this.#gates = this.#gates.filter((candidate) => candidate !== gate);
    gate.release();
    await this.settle();
    return { actor: gate.actor, label: gate.label };
  }

  /** Waits until nothing is in flight and every live actor is parked at a gate. */
  async settle(timeoutMs = 20_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    let quietTurns = 0;
    while (quietTurns < 2) {
      await new Promise((resolve) => setImmediate(resolve));
      const parked = [...this.#states].every(
        ([actor, state]) => state !== 'live' || this.#gates.some((gate) => gate.actor === actor),
      );
      quietTurns = this.#inFlight === 0 && parked ? quietTurns + 1 : 0;
      if (quietTurns === 0 && this.#inFlight === 0 && !parked) {
        await new Promise((resolve) => setTimeout(resolve, 1)); // an actor sleeps on a timer
      }
      if (Date.now() > deadline) {
        const live = [...this.#states]
          .filter(([, state]) => state === 'live')
          .map(([actor]) => actor);
        throw new Error(
          `interleaver did not settle: in flight ${this.#inFlight}, live ${live.join(', ')}`,
        );
      }
    }
  }

  #sorted(): Gate[] {
    return [...this.#gates].sort((a, b) =>
      a.actor < b.actor ? -1 : a.actor > b.actor ? 1 : a.seq - b.seq,
    );
  }
}
