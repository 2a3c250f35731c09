import { runViewerRequest } from '../../lib/edge/cloudfront-functions-runtime.js';

/**
 * Runs a CloudFront Function's source on a GET viewer request through the runtime emulation,
 * and returns the request headers it lets through (lower-case names) or its own answer's status.
 */
export function viewerRequest(
  source: string,
  headers: Readonly<Record<string, string>>,
): { readonly status: number } | { readonly headers: Record<string, string> } {
  const result = runViewerRequest(source, { method: 'GET', uri: '/', querystring: '', headers });
  if ('response' in result) return { status: result.response.status };
  return {
    headers: Object.fromEntries(
      Object.entries(result.request.headers).map(([name, value]) => [name, String(value)]),
    ),
  };
}
