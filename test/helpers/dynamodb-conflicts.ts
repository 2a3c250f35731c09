/**
 * DynamoDB's transaction conflict rule, which DynamoDB Local does not show (it serialises
 * transactions: 100 concurrent ones on one item all commit). AWS documents the rule in
 * "Transaction conflict handling in DynamoDB",
 * https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/transaction-apis.html#transaction-conflict-handling
 * (and `TransactWriteItems`' errors,
 * https://docs.aws.amazon.com/amazondynamodb/latest/APIReference/API_TransactWriteItems.html):
 * - a PutItem, UpdateItem or DeleteItem of an item an ongoing TransactWriteItems includes fails
 *   with `TransactionConflictException`;
 * - a TransactWriteItems including an item another ongoing TransactWriteItems includes is
 *   cancelled (`TransactionCanceledException`, `TransactionConflict` for that item);
 * - a TransactGetItems including an item an ongoing TransactWriteItems, BatchWriteItem,
 *   PutItem, UpdateItem or DeleteItem includes is cancelled the same way.
 * The SDK retries none of these. `TransactionConflicts` keeps which requests are ongoing and
 * refuses, before it reaches DynamoDB Local, a request the rule cancels; the request that was
 * there first goes on. A request is ongoing from when it is sent until its answer is back
 * (`attach`), or for as long as the model check's schedule holds it (`begin`).
 */
import type { Clock } from '../../lambda/core/clock.js';
import {
  TransactionCanceledException,
  TransactionConflictException,
  type DynamoDBClient,
} from '@aws-sdk/client-dynamodb';

type Kind = 'transaction' | 'write';

/** An item as the rule names it: table and key. */
interface Touched {
  readonly id: string;
  /** Index of the transaction's action (its place in `CancellationReasons`). */
  readonly action: number;
}

interface KeyHolder {
  readonly TableName?: string;
  readonly Key?: Record<string, unknown>;
  readonly Item?: Record<string, unknown>;
}

/** The key attributes of the cache table (every table the service writes). */
const KEY_ATTRIBUTES = ['pk', 'sk'] as const;

const idOf = (holder: KeyHolder): string => {
  const source = holder.Key ?? holder.Item ?? {};
  const key = KEY_ATTRIBUTES.map((name) => JSON.stringify(source[name] ?? null));
  return `${holder.TableName ?? '?'}|${key.join('|')}`;
};

/** The items a request writes (or reads, for TransactGetItems), and what kind of request it is. */
export function touchedBy(
  command: string,
  input: object,
): { kind: Kind | 'read' | undefined; items: Touched[] } {
  const name = command.replace(/Command$/, '');
  if (name === 'TransactWriteItems' || name === 'TransactGetItems') {
    const actions = (input as { TransactItems?: Record<string, KeyHolder | undefined>[] })
      .TransactItems;
    const items = (actions ?? []).map((action, index) => ({
      id: idOf(Object.values(action).find((value) => value !== undefined) ?? {}),
      action: index,
    }));
    return { kind: name === 'TransactWriteItems' ? 'transaction' : 'read', items };
  }
  if (name === 'PutItem' || name === 'UpdateItem' || name === 'DeleteItem') {
    return { kind: 'write', items: [{ id: idOf(input), action: 0 }] };
  }
  if (name === 'BatchWriteItem') {
    const tables = (input as { RequestItems?: Record<string, Record<string, KeyHolder>[]> })
      .RequestItems;
    const items = Object.entries(tables ?? {}).flatMap(([TableName, requests]) =>
      requests.map((request) => {
        const holder = request.PutRequest ?? request.DeleteRequest ?? {};
        return { id: idOf({ TableName, ...holder }), action: 0 };
      }),
    );
    return { kind: 'write', items };
  }
  return { kind: undefined, items: [] };
}

export class TransactionConflicts {
  /** Item -> the kinds of the requests that include it and are ongoing (one entry each). */
  readonly #ongoing = new Map<string, Kind[]>();
  /** Requests sent through `attach`ed clients whose answer is not back yet, of any kind. */
  #inFlight = 0;
  /** Requests refused by the rule, by command: what a test asserts the rule did. */
  readonly refused = new Map<string, number>();

  /**
   * A request starts: refused with the error DynamoDB answers when the rule cancels it, else
   * it is ongoing until the returned function is called.
   * @throws TransactionCanceledException, TransactionConflictException
   */
  begin(command: string, input: object): () => void {
    const { kind, items } = touchedBy(command, input);
    if (kind === undefined) return () => undefined;
    // The rule names a BatchWriteItem only as ongoing (for TransactGetItems), never refused.
    const refusable = !command.startsWith('BatchWriteItem');
    const conflicting = refusable ? items.filter((item) => this.#conflicts(kind, item.id)) : [];
    if (conflicting.length > 0) {
      this.refused.set(command, (this.refused.get(command) ?? 0) + 1);
      throw conflictError(kind, items, conflicting);
    }
    if (kind === 'read') return () => undefined;
    for (const item of items) this.#ongoing.set(item.id, [...this.#kinds(item.id), kind]);
    let ended = false;
    return () => {
      if (ended) return;
      ended = true;
      for (const item of items) {
        const kinds = [...this.#kinds(item.id)];
        kinds.splice(kinds.indexOf(kind), 1);
        if (kinds.length === 0) this.#ongoing.delete(item.id);
        else this.#ongoing.set(item.id, kinds);
      }
    };
  }

  /** Refusals so far, every command together. */
  get refusals(): number {
    return [...this.refused.values()].reduce((sum, count) => sum + count, 0);
  }

  /**
   * Applies the rule to every request `client` sends: each is ongoing from when it is sent
   * until its answer (or its failure) is back.
   */
  attach(client: DynamoDBClient): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const end = this.begin(context.commandName ?? '', args.input);
        this.#inFlight += 1;
        try {
          return await next(args);
        } finally {
          this.#inFlight -= 1;
          end();
        }
      },
      { step: 'initialize', name: 'transaction-conflicts', priority: 'low' },
    );
  }

  /** Resolves once no request of an attached client has been in flight for two turns. */
  async whenQuiet(): Promise<void> {
    for (let quiet = 0; quiet < 2;) {
      await new Promise((resolve) => setImmediate(resolve));
      quiet = this.#inFlight === 0 ? quiet + 1 : 0;
    }
  }

  #kinds(id: string): readonly Kind[] {
    return this.#ongoing.get(id) ?? [];
  }

  /** Whether a new request of `kind` on `id` meets an ongoing one the rule says it conflicts with. */
  #conflicts(kind: Kind | 'read', id: string): boolean {
    const ongoing = this.#kinds(id);
    // A transactional read conflicts with any ongoing write; a write with a transaction's.
    return kind === 'read' ? ongoing.length > 0 : ongoing.includes('transaction');
  }
}

function conflictError(kind: Kind | 'read', items: Touched[], conflicting: Touched[]): Error {
  const message = 'Transaction is ongoing for the item (stand-in for DynamoDB)';
  if (kind === 'write') return new TransactionConflictException({ message, $metadata: {} });
  const codes = new Set(conflicting.map((item) => item.action));
  return new TransactionCanceledException({
    message: `Transaction cancelled, please refer cancellation reasons for specific reasons [${items
      .map((item) => (codes.has(item.action) ? 'TransactionConflict' : 'None'))
      .join(', ')}]`,
    $metadata: {},
    CancellationReasons: items.map((item) =>
      codes.has(item.action)
        ? { Code: 'TransactionConflict', Message: 'Transaction is ongoing for the item' }
        : { Code: 'None' },
    ),
  });
}

/**
 * Virtual time for code run under the rule (a backoff's jitter must spread writers apart, and
 * tests never wait on the wall clock): sleepers wake in the order of their wake-up times, the
 * next only once no request is in flight, so a writer that waited longer meets the writes of
 * those that woke before it as DynamoDB would, done.
 */
export class QuietClock implements Clock {
  #ms: number;
  #sleepers: { wakeAt: number; wake: () => void }[] = [];
  #driving = false;

  constructor(
    readonly rule: TransactionConflicts,
    startSeconds = 1_800_000_000,
  ) {
    this.#ms = startSeconds * 1000;
  }

  now(): number {
    return this.#ms;
  }

  sleep(ms: number): Promise<void> {
    return new Promise<void>((resolve) => {
      this.#sleepers.push({ wakeAt: this.#ms + ms, wake: resolve });
      void this.#drive();
    });
  }

  async #drive(): Promise<void> {
    if (this.#driving) return;
    this.#driving = true;
    try {
      while (this.#sleepers.length > 0) {
        await this.rule.whenQuiet();
        this.#sleepers.sort((a, b) => a.wakeAt - b.wakeAt);
        const wakeAt = this.#sleepers[0]?.wakeAt ?? this.#ms;
        const due = this.#sleepers.filter((sleeper) => sleeper.wakeAt === wakeAt);
        this.#sleepers = this.#sleepers.filter((sleeper) => sleeper.wakeAt !== wakeAt);
        this.#ms = Math.max(this.#ms, wakeAt);
        for (const sleeper of due) sleeper.wake();
      }
    } finally {
      this.#driving = false;
    }
  }
}
