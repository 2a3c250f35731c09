import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { describe, expect, it } from '@jest/globals';
import { conditionalWrite } from '../../../../../lambda/adapters/shared/dynamodb/conditional-write.js';

const refused = () =>
  new ConditionalCheckFailedException({ message: 'The conditional request failed', $metadata: {} });

describe('conditionalWrite', () => {
  it("answers the write's output when it was written", async () => {
    expect(await conditionalWrite(Promise.resolve({ Attributes: {} }))).toEqual({ Attributes: {} });
  });

  it('answers undefined when its condition did not hold', async () => {
    expect(await conditionalWrite(Promise.reject(refused()))).toBeUndefined();
  });

  it('throws anything else as is', async () => {
    const throttled = new Error('ProvisionedThroughputExceededException');
    await expect(conditionalWrite(Promise.reject(throttled))).rejects.toBe(throttled);
  });
});
