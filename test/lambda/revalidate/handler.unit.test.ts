import { describe, expect, it } from '@jest/globals';
import { toRevalidateRequest } from '../../../lambda/revalidate/handler.js';
import { functionUrlEvent } from '../../../local/function-url.js';

const event = (init: { body?: string; base64?: boolean; userArn?: string; target?: string }) => {
  const base = functionUrlEvent({
    method: 'post',
    target: init.target ?? '/',
    headers: { 'idempotency-key': 'k1' },
  });
  return {
    ...base,
    body: init.body,
    isBase64Encoded: init.base64 ?? false,
    requestContext: {
      ...base.requestContext,
      ...(init.userArn === undefined ? {} : { authorizer: { iam: { userArn: init.userArn } } }),
    },
  } as typeof base;
};

describe('toRevalidateRequest', () => {
  it('keeps the raw body as sent, decoding a base64 one', () => {
    const body = '{"paths":["/caf\u00e9"]}';
    expect(toRevalidateRequest(event({ body })).rawBody).toBe(body);
    const encoded = Buffer.from(body, 'utf8').toString('base64');
    expect(toRevalidateRequest(event({ body: encoded, base64: true })).rawBody).toBe(body);
    expect(toRevalidateRequest(event({})).rawBody).toBe('');
  });

  it('names the IAM caller the function URL authenticated, and no one otherwise', () => {
    const arn = 'arn:aws:sts::123456789012:assumed-role/cms/session';
    expect(toRevalidateRequest(event({ userArn: arn })).principal).toBe(arn);
    expect(toRevalidateRequest(event({})).principal).toBeUndefined();
    expect(toRevalidateRequest(event({})).method).toBe('POST');
  });

  it('keeps the request target as received, query included: the signature covers it', () => {
    expect(toRevalidateRequest(event({})).target).toBe('/');
    expect(toRevalidateRequest(event({ target: '/_isr/revalidate?effect=rv_1' })).target).toBe(
      '/_isr/revalidate?effect=rv_1',
    );
  });
});
