/**
 * The plumbing every DynamoDB adapter shares, in one base as Powertools' `BasePersistenceLayer`
 * holds its own (CONVENTIONS 3): the client and the table; an adapter only writes its commands.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';

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
