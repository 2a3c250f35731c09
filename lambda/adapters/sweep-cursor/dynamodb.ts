import { GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import type { SweepCursor } from '../../core/operate/ports.js';
import { SweepCursorKey } from '../../core/page/rows.js';
import { keyOf, str } from '../shared/dynamodb/items.js';
import { DynamoTableAdapter } from '../shared/dynamodb/table.js';

const { pk: SWEEP_CURSOR_PK, sk: SWEEP_CURSOR_SK } = SweepCursorKey;

/** The orphan sweep's ListObjectsV2 continuation token, kept in the cache table. */
export class DynamoSweepCursor extends DynamoTableAdapter implements SweepCursor {
  async load(): Promise<string | undefined> {
    const { Item } = await this.db.send(
      new GetItemCommand({
        TableName: this.table,
        Key: keyOf(SWEEP_CURSOR_PK, SWEEP_CURSOR_SK),
        ConsistentRead: true,
      }),
    );
    return Item === undefined ? undefined : str(Item, 'continuation');
  }

  /** A Put either way (no DeleteItem to grant): a lap's end is a row without a token. */
  async save(cursor: string | undefined): Promise<void> {
    await this.db.send(
      new PutItemCommand({
        TableName: this.table,
        Item: {
          ...keyOf(SWEEP_CURSOR_PK, SWEEP_CURSOR_SK),
          ...(cursor === undefined ? {} : { continuation: { S: cursor } }),
        },
      }),
    );
  }
}
