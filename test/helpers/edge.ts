import { runInNewContext } from 'node:vm';

type CloudFrontHeaders = Record<string, { value: string }>;
interface ViewerRequestResult {
  readonly statusCode?: number;
  readonly headers: CloudFrontHeaders;
}

/**
 * Runs a CloudFront Function's source on a viewer request, as CloudFront does, and returns the
 * request headers it lets through (lower-case names) or its own answer's status.
 */
export function viewerRequest(
  source: string,
  headers: Readonly<Record<string, string>>,
): { readonly status: number } | { readonly headers: Record<string, string> } {
  const sandbox: { handler?: (event: unknown) => ViewerRequestResult } = {};
  runInNewContext(`${source}\nthis.handler = handler;`, sandbox);
  const event = {
    request: {
      method: 'GET',
      uri: '/',
      headers: Object.fromEntries(
        Object.entries(headers).map(([name, value]) => [name.toLowerCase(), { value }]),
      ),
    },
  };
  const result = sandbox.handler?.(event);
  if (result === undefined) throw new Error('the function returned nothing');
  if (result.statusCode !== undefined) return { status: result.statusCode };
  return {
    headers: Object.fromEntries(
      Object.entries(result.headers).map(([name, header]) => [name, header.value]),
    ),
  };
}
