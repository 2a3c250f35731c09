import { GetItemCommand, PutItemCommand, type DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SweepCursor } from '../../core/operate/ports.js';
import { SweepCursorKey } from '../../core/page/rows.js';
import { keyOf, str } from '../shared/dynamodb/items.js';

const { pk: SWEEP_CURSOR_PK, sk: SWEEP_CURSOR_SK } = SweepCursorKey;

export interface DynamoSweepCursorOptions {
  readonly client: DynamoDBClient;
  readonly tableName: string;
}

/** The orphan sweep's ListObjectsV2 continuation token, kept in the cache table. */
export class DynamoSweepCursor implements SweepCursor {
  readonly #client: DynamoDBClient;
  readonly #tableName: string;

  constructor(options: DynamoSweepCursorOptions) {
    this.#client = options.client;
    this.#tableName = options.tableName;
  }

  async load(): Promise<string | undefined> {
    const { Item } = await this.#client.send(
      new GetItemCommand({
        TableName: this.#tableName,
        Key: keyOf(SWEEP_CURSOR_PK, SWEEP_CURSOR_SK),
        ConsistentRead: true,
      }),
    );
    return Item === undefined ? undefined : str(Item, 'continuation');
  }

  /** A Put either way (no DeleteItem to grant): a lap's end is a row without a token. */
  async save(cursor: string | undefined): Promise<void> {
    await this.#client.send(
      new PutItemCommand({
        TableName: this.#tableName,
        Item: {
          ...keyOf(SWEEP_CURSOR_PK, SWEEP_CURSOR_SK),
          ...(cursor === undefined ? {} : { continuation: { S: cursor } }),
        },
      }),
    );
  }
}
