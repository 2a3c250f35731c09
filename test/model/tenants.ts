/**
 * Two tenants with the same paths (issue 33): the model's service in multi-tenant mode, and the
 * invariant that a tenant never reads, marks, purges or passes another tenant's rows or pages.
 * Held two ways: on the wire (every DynamoDB, S3 and CloudFront request an actor sends names one
 * tenant's partitions, bodies and CDN tags only), and by what viewers get (every body was made for their tenant:
 * the model's upstream stamps the tenant it rendered or passed for). The model has no purge
 * queue (`ISR_PURGE_QUEUE_URL` unset), so its purges are the CloudFront calls and pending rows.
 */
import type { CloudFrontClient } from '@aws-sdk/client-cloudfront';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { S3Client } from '@aws-sdk/client-s3';
import type { CacheKey } from '../../lambda/core/page/model.js';
import type { TagRevalidations } from '../../lambda/core/revalidate/ports.js';
import type { PassThrough } from '../../lambda/core/serve/ports.js';
import type { ModelContext } from './context.js';
import type { ModelEvent } from './world.js';

/** The two tenants of a multi-tenant run, and the header the edge names them in. */
export const TENANTS = ['ta', 'tb'] as const;
export const TENANT_HEADER = 'x-tenant';

/** The tenants whose rows a run reads whole (`undefined`: the single-tenant service's). */
export const tenantsOf = (context: ModelContext): readonly (string | undefined)[] =>
  context.originConfig.tenants ?? [undefined];

/** A body's mark of the tenant it was made for ('' single-tenant: single-tenant logs unchanged). */
export const stampOf = (tenant: string | undefined): string =>
  tenant === undefined ? '' : ` [t=${tenant}]`;

/** The tenant a cache entry's partition belongs to (`TENANT#<t>#CACHE#<hash>`). */
export const tenantOfPk = (pk: string): string | undefined =>
  /^TENANT#([^#]+)#CACHE#/.exec(pk)?.[1];

/** The partition of the entry a body belongs to: `pages/<tenant or _>/<hash>/...` (`bodyKeyOf`). */
export function pkOfBody(s3Key: string): string {
  const [, tenant, hash] = s3Key.split('/');
  return tenant === undefined || tenant === '_'
    ? `CACHE#${hash ?? ''}`
    : `TENANT#${tenant}#CACHE#${hash ?? ''}`;
}

/**
 * Where a partition key, sort key or body key names a tenant (`_`: the single-tenant rows,
 * nobody's in multi-tenant mode): cache entries, tag rows, in-progress rows, revalidation
 * requests, fan-out progress rows, bodies (`bodyKeyOf`), and CDN tags (`cdnTagOf`,
 * `cdnKeyTagOf`: `<tenant or _>/<tag>`, `#`-prefixed in an invalidation, listed in a pending
 * purge's row).
 */
const TENANT_NAMES = [
  /^TENANT#([^#]+)#CACHE#/,
  /^PAGE#TENANT#([^#]+)#CACHE#/,
  /^CACHE#/,
  /^PAGE#CACHE#/,
  /^TAG#([^#]+)#/,
  /^REVALIDATING#([^#]+)#/,
  /^REVALIDATE#(.+)$/,
  /^pages\/([^/]+)\//,
  // A fan-out's progress row: `<tenant or _>#<effect id>#...` (the model's effect ids: `rv_`).
  new RegExp(`^(${[...TENANTS, '_'].join('|')})#rv_`),
  new RegExp(`^#?(${[...TENANTS, '_'].join('|')})/`),
];
function tenantNamed(value: string): string | undefined {
  for (const pattern of TENANT_NAMES) {
    const match = pattern.exec(value);
    if (match !== null) return match[1] ?? '_';
  }
  return undefined;
}

/** Every string of a request's input that names a tenant, with the tenant it names. */
function namedIn(input: unknown, found: [string, string][] = []): [string, string][] {
  if (typeof input === 'string') {
    const tenant = tenantNamed(input);
    if (tenant !== undefined) found.push([input, tenant]);
  } else if (Array.isArray(input)) {
    for (const item of input) namedIn(item, found);
  } else if (typeof input === 'object' && input !== null && !(input instanceof Uint8Array)) {
    for (const value of Object.values(input)) namedIn(value, found);
  }
  return found;
}

/** The clients of an actor the watch hooks: every request they send is checked as sent. */
export interface WatchedClients {
  readonly dynamodb?: DynamoDBClient;
  readonly s3?: S3Client;
  readonly cloudfront?: CloudFrontClient;
}

/**
 * Watches what each actor of a multi-tenant run sends: an actor acts for one tenant (its
 * viewer's, message's or revalidation's, or else the first it names), and any row, body or CDN
 * tag of another tenant (or of none) it names is a violation. The sweeper works for every
 * tenant, but each single request of its names one.
 */
export class TenantWatch {
  readonly problems: string[] = [];
  readonly #tenantOf = new Map<string, string>();

  /** `actor` acts for `tenant` alone (a viewer's request, a message, a revalidation). */
  expect(actor: string, tenant: string | undefined): void {
    if (tenant !== undefined) this.#tenantOf.set(actor, tenant);
  }

  /** `actor` acts for the tenant `other` acts for (a fan-out step, for its revalidation). */
  expectAs(actor: string, other: string): void {
    this.expect(actor, this.#tenantOf.get(other));
  }

  /** Checks every request of `actor`'s clients as sent (after any control's rewrite). */
  watch(actor: string, clients: WatchedClients): void {
    const sweeper = /^s\d+$/.test(actor);
    const check =
      (next: (args: { input: object }) => Promise<unknown>) =>
      (args: { input: object }): Promise<unknown> => {
        let own = sweeper ? undefined : this.#tenantOf.get(actor);
        for (const [value, tenant] of namedIn(args.input)) {
          own ??= tenant;
          if (!sweeper) this.#tenantOf.set(actor, own);
          if (tenant !== own || !(TENANTS as readonly string[]).includes(tenant)) {
            const whose = sweeper ? 'in a request for tenant' : 'acting for tenant';
            this.problems.push(`${actor}, ${whose} ${own}, sent ${value} (${tenant}'s)`);
          }
        }
        return next(args);
      };
    const options = { step: 'build', name: 'model-tenant-watch' } as const;
    clients.dynamodb?.middlewareStack.add(check as never, options);
    clients.s3?.middlewareStack.add(check as never, options);
    // The model's CloudFront answers at `initialize` (`FakeCdn`): the watch goes first.
    const first = { step: 'initialize', priority: 'high', name: 'model-tenant-watch' } as const;
    clients.cloudfront?.middlewareStack.add(check as never, first);
  }
}

/** The other of the two tenants. */
export const otherTenant = (tenant: string | undefined) =>
  tenant === TENANTS[0] ? TENANTS[1] : TENANTS[0];

/**
 * The upstream a multi-tenant origin passes to: it answers `private`, its body stamped with the
 * tenant the pass named (the header the service sets, `passHeaders`), and logs what it got.
 * `crossed` (negative control): the pass arrives naming the other tenant.
 */
export function modelPassThrough(log: ModelEvent[], actor: string, crossed = false): PassThrough {
  return {
    forward: (sent) => {
      const request = crossed
        ? {
            ...sent,
            headers: sent.headers.map(([name, value]): readonly [string, string] =>
              name === TENANT_HEADER ? [name, otherTenant(value)] : [name, value],
            ),
          }
        : sent;
      const named = request.headers.filter(([name]) => name === TENANT_HEADER);
      const tenant = named.length === 1 ? named[0][1] : `${named.length} tenants`;
      log.push({ kind: 'passed', actor, path: request.path, tenant });
      const body = new TextEncoder().encode(`pass ${request.path} by ${actor}${stampOf(tenant)}`);
      return Promise.resolve({
        status: 200,
        headers: [['cache-control', 'private']],
        body: [body],
      });
    },
  };
}

/**
 * Every body a viewer of a multi-tenant run got was made for its own tenant (rendered, passed
 * or seeded with its stamp). @returns the first violation
 */
export function checkServedTenants(log: readonly ModelEvent[]): string | undefined {
  for (const [index, event] of log.entries()) {
    if (event.kind !== 'served' || event.content === undefined) continue;
    const tenant = tenantOfPk(event.pk);
    const stamps = event.content.match(/ \[t=[^\]]*\]/g) ?? [];
    if (stamps.length !== 1 || stamps[0] !== stampOf(tenant)) {
      return `${event.actor}, a viewer of tenant ${tenant}, got ${JSON.stringify(event.content)} (log ${index})`;
    }
  }
  return undefined;
}

/** The keys of a revalidation's tenant (all of them single-tenant). */
export const keysOfTenant = (keys: readonly CacheKey[], tenant: string | undefined) =>
  keys.filter((key) => key.tenant === tenant);

/**
 * Negative control: the accept records a tag's revalidation time under the other tenant (its
 * tenant crossed on the tag-time row), as a tag index keyed without care for tenants would.
 */
export function crossedTagTimes(tagIndex: TagRevalidations): TagRevalidations {
  const recordRevalidation: TagRevalidations['recordRevalidation'] = (tenant, tag, at) =>
    tagIndex.recordRevalidation(otherTenant(tenant), tag, at);
  return new Proxy(tagIndex, {
    get: (target, property) => {
      if (property === 'recordRevalidation') return recordRevalidation;
      const value: unknown = Reflect.get(target, property);
      return typeof value === 'function' ? (value as () => unknown).bind(target) : value;
    },
  });
}

/**
 * Negative control: a revalidation's purge names the other tenant's CDN tags (its own tenant
 * swapped in each `<tenant>/<tag>`), as a purge keyed without care for tenants would.
 */
export const crossedCdnTags = (tags: readonly string[]): string[] =>
  tags.map((tag) => {
    const slash = tag.indexOf('/');
    return `${otherTenant(tag.slice(0, slash))}${tag.slice(slash)}`;
  });
