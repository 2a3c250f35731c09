/**
 * The deployable stack: one IsrService and its outputs. Settings come from the stack props,
 * else from CDK context (`-c renderOriginUrl=...`, `-c allowedQueryParams=page,lang`,
 * `-c tenantHeader=x-tenant`, `-c tenants=acme,globex`,
 * `-c tenantsByHost=acme.example.com=acme,globex.example=globex`, `-c deployId=...`); props win.
 */
import { CfnOutput, Stack, type StackProps } from 'aws-cdk-lib';
import type { Construct } from 'constructs';
import { IsrService } from './isr-service.js';
import type { IsrServiceProps } from './isr-service-props.js';

export interface IsrStackProps extends StackProps {
  /** @default - read from CDK context, then the construct's defaults */
  readonly service?: IsrServiceProps;
}

export class IsrStack extends Stack {
  readonly service: IsrService;

  constructor(scope: Construct, id: string, props: IsrStackProps = {}) {
    super(scope, id, props);
    this.service = new IsrService(this, 'Isr', { ...serviceContext(this), ...props.service });

    const outputs = {
      DistributionDomainName: this.service.distribution.distributionDomainName,
      TableName: this.service.table.tableName,
      BucketName: this.service.bucket.bucketName,
      QueueName: this.service.queue.queueName,
      DeadLetterQueueName: this.service.deadLetterQueue.queueName,
      // What the ops CLI (`isr --stack <name>`) reads: where to redrive, and how keys are made.
      QueueUrl: this.service.queue.queueUrl,
      DeadLetterQueueUrl: this.service.deadLetterQueue.queueUrl,
      // The purge DLQ's runbook (docs/OPERATIONS.md): read its letters, redrive them by ARN.
      PurgeDeadLetterQueueUrl: this.service.purgeDeadLetterQueue.queueUrl,
      PurgeDeadLetterQueueArn: this.service.purgeDeadLetterQueue.queueArn,
      OpsSettings: opsSettingsOf(this.service),
      // The distribution a rollback purges by cache tag, with the operator's own credentials.
      DistributionId: this.service.distribution.distributionId,
      /** Where `POST` revalidation requests go (the CLI reads it from the stack outputs). */
      RevalidateUrl: this.service.revalidateUrl.url,
    };
    for (const [name, value] of Object.entries(outputs)) new CfnOutput(this, name, { value });
  }
}

/**
 * The settings the ops CLI needs to turn a URL into a cache key and to take an operator's lease
 * exactly as the functions do, as JSON (`cli/target.ts` parses it).
 */
function opsSettingsOf(service: IsrService): string {
  const s = service.settings;
  return JSON.stringify({
    allowedQueryParams: s.allowedQueryParams,
    renderPaths: s.renderPaths,
    tenantHeader: s.tenantHeader,
    tenants: s.tenants,
    leaseSeconds: s.leaseSeconds,
    retention: { idleSeconds: s.metaTtlSeconds, goneSeconds: s.goneTtlSeconds },
    regenerationBudget: s.regenerationBudget,
  });
}

/** How a context value becomes a prop: text, a list, a `host=tenant` table, or an integer. */
type ContextKind = 'text' | 'list' | 'table' | 'integer';

/**
 * Every key `cdk deploy -c <key>=<value>` may set, and how it is read. A key outside it is
 * refused (issue 31, fix 8): CDK would ignore it without a word.
 */
export const CONTEXT_KEYS = {
  renderOriginUrl: 'text',
  preset: 'text',
  allowedQueryParams: 'list',
  tenantHeader: 'text',
  tenants: 'list',
  tenantsByHost: 'table',
  deployId: 'text',
  staticPrefixes: 'list',
  bypassPaths: 'list',
  bypassCookies: 'list',
  bypassHeaders: 'list',
  // Checked with the other settings: a value outside pass|drop is refused by name.
  unknownQuery: 'text',
  missRenderLimit: 'integer',
  regenerationBudget: 'integer',
  workerMaxConcurrency: 'integer',
  originReservedConcurrency: 'integer',
  workerReservedConcurrency: 'integer',
  revalidateReservedConcurrency: 'integer',
  sweeperReservedConcurrency: 'integer',
  accountConcurrencyLimit: 'integer',
  rateLimitPerFiveMinutes: 'integer',
} as const satisfies Partial<Record<keyof IsrServiceProps, ContextKind>>;

/**
 * Context keys that are not ours and must pass: CDK's own (`aws:cdk:*` from the CLI, feature
 * flags `@aws-cdk/...:...` from cdk.json, lookups `<provider>:account=...` in cdk.context.json)
 * all hold a colon; these plain ones are written by `cdk acknowledge` and `cdk cli-telemetry`.
 */
const CDK_PLAIN_KEYS: readonly string[] = ['acknowledged-issue-numbers', 'cli-telemetry'];

/** Context keys given that neither this stack nor CDK reads. */
export function unknownContextKeys(context: Readonly<Record<string, unknown>>): string[] {
  return Object.keys(context).filter(
    (key) =>
      !key.includes(':') && !CDK_PLAIN_KEYS.includes(key) && !Object.hasOwn(CONTEXT_KEYS, key),
  );
}

/** The construct props settable from context; a list is comma-separated or a JSON array. */
function serviceContext(scope: Construct): IsrServiceProps {
  const unknown = unknownContextKeys(scope.node.getAllContext() as Record<string, unknown>);
  if (unknown.length > 0) {
    throw new Error(
      `IsrStack: unknown context key ${unknown.map((key) => `'${key}'`).join(', ')} (-c): ` +
        `CDK would ignore it. Known keys: ${Object.keys(CONTEXT_KEYS).join(', ')}`,
    );
  }
  const read = { text, list, table, integer };
  return Object.fromEntries(
    Object.entries(CONTEXT_KEYS).flatMap(([key, kind]) => {
      const value = read[kind](key, scope.node.tryGetContext(key));
      return value === undefined ? [] : [[key, value]];
    }),
  );
}

const text = (key: string, value: unknown): string | undefined => {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value !== 'string') throw new Error(`context ${key} must be a string`);
  return value.trim() || undefined;
};

const list = (key: string, value: unknown): string[] | undefined => {
  if (value === undefined || value === null) return undefined;
  if (Array.isArray(value) && value.every((item) => typeof item === 'string')) return value;
  if (typeof value !== 'string') throw new Error(`context ${key} must be a list of strings`);
  if (value.trim().startsWith('[')) return list(key, JSON.parse(value) as unknown);
  return value
    .split(',')
    .map((item) => item.trim())
    .filter((item) => item !== '');
};

/** `host=tenant,host=tenant` or a JSON object. */
const table = (key: string, value: unknown): Record<string, string> | undefined => {
  if (value === undefined || value === null || value === '') return undefined;
  const parsed: unknown =
    typeof value === 'string' && value.trim().startsWith('{') ? JSON.parse(value) : value;
  if (typeof parsed === 'string') {
    return Object.fromEntries(
      list(key, parsed)?.map((pair) => pair.split('=').map((part) => part.trim())) ?? [],
    ) as Record<string, string>;
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) {
    throw new Error(`context ${key} must be host=tenant pairs or a JSON object`);
  }
  return parsed as Record<string, string>;
};

/** `-c key=12` arrives as text; cdk.json may hold a number. Bounds are the construct's. */
const integer = (key: string, value: unknown): number | undefined => {
  if (value === undefined || value === null || value === '') return undefined;
  const number = typeof value === 'string' ? Number(value.trim()) : value;
  if (typeof number !== 'number' || !Number.isInteger(number)) {
    throw new Error(`context ${key} must be an integer, got ${JSON.stringify(value)}`);
  }
  return number;
};
