/**
 * The plumbing every DynamoDB adapter shares, in one base as Powertools' `BasePersistenceLayer`
 * holds its own (CONVENTIONS 3): the client and the table; an adapter only writes its commands.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DEFAULT_ROW_TTL_SECONDS } from './items.js';

/** Where an adapter's rows are: the client and the table every function's wiring hands it. */
export interface TableOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
}

/** A port's adapter over the service's one table. */
export abstract class DynamoTableAdapter {
  /** The DynamoDB client. */
  protected readonly db: DynamoDBClient;
  /** The table's name. */
  protected readonly table: string;

  constructor(options: TableOptions) {
    this.db = options.client;
    this.table = options.tableName;
  }
}

/** An adapter whose rows DynamoDB's TTL removes `ttlSeconds` after what they record happened. */
export abstract class ExpiringRowsAdapter extends DynamoTableAdapter {
  readonly #ttlSeconds: number;

  /** `ttlSeconds`: how long a row is kept. @default DEFAULT_ROW_TTL_SECONDS (7 days) */
  constructor(options: TableOptions & { readonly ttlSeconds?: number | undefined }) {
    super(options);
    this.#ttlSeconds = options.ttlSeconds ?? DEFAULT_ROW_TTL_SECONDS;
  }

  /** The TTL (epoch seconds) of a row about something that happened at `atMs`. */
  protected ttlAfter(atMs: number): number {
    return Math.floor(atMs / 1000) + this.#ttlSeconds;
  }
}
