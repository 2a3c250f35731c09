import { DeleteItemCommand } from '@aws-sdk/client-dynamodb';
import type { VersionRows } from '../../core/page/ports.js';
import { keyOf, str } from '../shared/dynamodb/items.js';
import { DynamoTableAdapter } from '../shared/dynamodb/table.js';

/**
 * VER# rows as a publisher needs them: the few a publish dropped from META's list are deleted
 * (the publish transaction writes new ones). Kept apart from the operator's `DynamoPageHistory`,
 * so the functions bundle only this.
 */
export class DynamoVersionRows extends DynamoTableAdapter implements VersionRows {
  async forget(pk: string, sks: readonly string[]): Promise<string[]> {
    const deleted = await Promise.all(
      sks.map(async (sk) => {
        const { Attributes } = await this.db.send(
          new DeleteItemCommand({
            TableName: this.table,
            Key: keyOf(pk, sk),
            ReturnValues: 'ALL_OLD',
          }),
        );
        return Attributes === undefined ? undefined : str(Attributes, 's3_key');
      }),
    );
    return deleted.filter((key): key is string => key !== undefined);
  }
}
