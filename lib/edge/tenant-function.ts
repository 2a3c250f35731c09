/**
 * The CloudFront Function (viewer request, JS 2.0) that makes the tenant a fact of the edge, not
 * a claim of the viewer: it maps the request's `Host` to its tenant through a table fixed at
 * deploy time and overwrites any tenant header the viewer sent; a host not in the table gets 421
 * Misdirected Request and never reaches the origin. It runs before the cache lookup, so the
 * cache key's tenant header is the one it set. Local mode runs the same source in front of the
 * origin, so `npm start` behaves as deployed.
 */
import { TENANT_PATTERN } from '../../lambda/core/rows.js';

/** CloudFront Functions' code size quota. */
export const MAX_FUNCTION_CODE_BYTES = 10 * 1024;
const HOST =
  /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

export interface TenantFunctionOptions {
  /** Lower-case name of the tenant header the origin reads. */
  readonly tenantHeader: string;
  /** Host name (lower-case, no port) -> tenant. */
  readonly tenantsByHost: Readonly<Record<string, string>>;
}

/** Every problem of a host table, named as the construct prop is. */
export function tenantTableProblems(options: TenantFunctionOptions): string[] {
  const problems: string[] = [];
  const entries = Object.entries(options.tenantsByHost);
  if (entries.length === 0) problems.push('tenantsByHost must map at least one host');
  for (const [host, tenant] of entries) {
    if (!HOST.test(host)) {
      problems.push(`tenantsByHost: ${JSON.stringify(host)} is not a lower-case host name`);
    }
    if (!TENANT_PATTERN.test(tenant)) {
      problems.push(
        `tenantsByHost: tenant ${JSON.stringify(tenant)} of ${host} is not a tenant name`,
      );
    }
  }
  const size = Buffer.byteLength(tenantFunctionSource(options));
  if (size > MAX_FUNCTION_CODE_BYTES) {
    problems.push(
      `tenantsByHost makes a ${size}-byte CloudFront Function, over CloudFront's ${MAX_FUNCTION_CODE_BYTES}-byte limit`,
    );
  }
  return problems;
}

/** The function's source: plain ES5-style JavaScript, as the CloudFront runtime runs it. */
export function tenantFunctionSource(options: TenantFunctionOptions): string {
  const table = JSON.stringify(options.tenantsByHost);
  const header = JSON.stringify(options.tenantHeader);
  const refusal = JSON.stringify(
    JSON.stringify({ error: 'unknown-host', message: 'this host is not served here' }),
  );
  return `// facetheory-isr: the tenant comes from Host, never from the viewer.
var TENANTS = ${table};
function handler(event) {
  var request = event.request;
  var host = request.headers.host ? request.headers.host.value.toLowerCase() : '';
  host = host.replace(/:[0-9]+$/, '').replace(/\\.$/, '');
  if (!Object.prototype.hasOwnProperty.call(TENANTS, host)) {
    return {
      statusCode: 421,
      statusDescription: 'Misdirected Request',
      headers: {
        'content-type': { value: 'application/json' },
        'cache-control': { value: 'no-store' }
      },
      body: { encoding: 'text', data: ${refusal} }
    };
  }
  request.headers[${header}] = { value: TENANTS[host] };
  return request;
}
`;
}
