import { afterAll, beforeAll, describe, expect, it } from '@jest/globals';
import { DynamoRenderCounter } from '../../../../lambda/adapters/render-counter/dynamodb.js';
import { DemoRenderer } from '../../../../lambda/adapters/renderer/demo.js';
import { normaliseCacheKey } from '../../../../lambda/core/page/cache-key.js';
import type { AwsClients } from '../../../../lambda/shared/aws-clients.js';
import { createTestTable, testClients } from '../../../helpers/backends.js';
import { TestClock } from '../../../helpers/clock.js';

let clients: AwsClients;
let tableName: string;
beforeAll(async () => {
  clients = testClients();
  tableName = await createTestTable(clients);
});
afterAll(() => clients.dynamodb.destroy());

const renderCount = (html: string) =>
  Number(/<meta name="isr-render-count" content="(\d+)">/.exec(html)?.[1]);

describe('DemoRenderer', () => {
  it('shows the path, the generation time and a render count that survives a new renderer', async () => {
    const clock = new TestClock();
    const make = () =>
      new DemoRenderer({
        counter: new DynamoRenderCounter({ client: clients.dynamodb, tableName }),
        clock,
        revalidateSeconds: 10,
      });
    const cacheKey = normaliseCacheKey({ rawPath: '/hello/<b>' }, { allowedQueryParams: [] });
    const render = async (renderer: DemoRenderer) =>
      new TextDecoder().decode(
        (await renderer.render({ cacheKey, signal: new AbortController().signal })).body,
      );

    const first = await render(make());
    expect(renderCount(first)).toBe(1);
    expect(first).toContain('/hello/&#60;b&#62;');
    expect(first).not.toContain('<b>');
    expect(first).toContain(new Date(clock.now()).toISOString());
    expect(renderCount(await render(make()))).toBe(2);
  });
});
