/**
 * Each tenant's public origin (`tenantOrigins`), so a tenant's render or pass tells the upstream
 * that tenant's host in X-Forwarded-Host/-Proto: never another tenant's, never a viewer's.
 */
import { publicOriginOf, type PublicOrigin } from './forwarding.js';
import { TENANT_PATTERN } from './page/rows.js';

/** Tenant -> origin (`https://acme.example.com`), as the setting holds it. */
export type TenantOrigins = Readonly<Record<string, string>>;

/** The setting's JSON shape: an object of strings; its values are checked by `tenantOriginProblems`. */
export function parseTenantOrigins(value: unknown): TenantOrigins {
  const must = 'must be a JSON object of tenant -> origin';
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(must);
  const entries = Object.entries(value as Record<string, unknown>);
  if (!entries.every(([, origin]) => typeof origin === 'string')) throw new Error(must);
  return Object.fromEntries(entries) as TenantOrigins;
}

/** Why the map cannot be used, one sentence per entry refused: tenant names, http(s) origins alone. */
export function tenantOriginProblems(origins: TenantOrigins, name: string): string[] {
  return Object.entries(origins).flatMap(([tenant, origin]) => [
    ...(TENANT_PATTERN.test(tenant)
      ? []
      : [`${name}: ${JSON.stringify(tenant)} is not a tenant name`]),
    ...(isPlainOrigin(origin)
      ? []
      : [`${name}: ${JSON.stringify(origin)} of ${tenant} must be an http(s) origin alone`]),
  ]);
}

/** An http(s) origin and nothing else: no path, query, fragment or credentials. */
export function isPlainOrigin(origin: string): boolean {
  let parsed: URL;
  try {
    parsed = new URL(origin);
  } catch {
    return false;
  }
  return (
    (parsed.protocol === 'https:' || parsed.protocol === 'http:') &&
    parsed.origin === origin.replace(/\/$/, '')
  );
}

/** The map derived from `tenantsByHost`: each tenant's first host in the table, over https. */
export function tenantOriginsByHost(
  tenantsByHost: Readonly<Record<string, string>>,
): TenantOrigins {
  const origins: Record<string, string> = {};
  for (const [host, tenant] of Object.entries(tenantsByHost)) {
    if (!Object.hasOwn(origins, tenant)) origins[tenant] = `https://${host}`;
  }
  return origins;
}

/** The validated map as the adapters use it; undefined: none configured. */
export function publicOriginsOf(
  origins: TenantOrigins | undefined,
): ReadonlyMap<string, PublicOrigin> | undefined {
  if (origins === undefined) return undefined;
  return new Map(
    Object.entries(origins).map(([tenant, origin]) => [tenant, publicOriginOf(origin)!]),
  );
}
