/**
 * The one viewer-request CloudFront Function (JavaScript runtime 2.0). A behaviour takes one
 * viewer-request function, so tenancy and routing share it:
 * - tenancy (`tenantsByHost`): the tenant is a fact of the edge, not a claim of the viewer. Host
 *   maps to its tenant through a table fixed at deploy time and overwrites any tenant header the
 *   viewer sent; a host not in the table gets 421 and never reaches an origin;
 * - the service's own paths (`/_isr/`) take GET and HEAD only: another method is answered 405 at
 *   the edge (through origin access control, Lambda would refuse a body the viewer did not hash:
 *   https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/private-content-restricting-access-to-lambda.html);
 * - routing (with an upstream): privileged headers are stripped, the viewer's Host is copied
 *   into X-Forwarded-Host (Next.js Server Actions compare it with Origin), and every request the
 *   rules of `lambda/core/traffic-rules.ts` do not class as cached goes to the upstream origin
 *   with `cf.selectRequestOriginById` and a cache key of its own (`PASS_KEY_HEADER`). The rules
 *   are embedded by their own source text, so the
 *   edge, `npm start` (which runs this source, `cloudfront-functions-runtime.ts`) and the origin
 *   classify alike.
 * It runs before the cache lookup, so the cache key sees the headers and query it leaves.
 */
import { runInNewContext } from 'node:vm';
import { KEY_RULE_FUNCTIONS } from '../../lambda/core/key-rules.js';
import { TENANT_PATTERN } from '../../lambda/core/page/rows.js';
import {
  classifyRequest,
  EDGE_FUNCTIONS,
  toTrafficRules,
  PRIVILEGED_HEADER_PREFIXES,
  PRIVILEGED_HEADERS,
  type RequestFacts,
  type TrafficRules,
} from '../../lambda/core/traffic-rules.js';

/** CloudFront Functions' code size quota. */
export const MAX_FUNCTION_CODE_BYTES = 10 * 1024;
/** The distribution's origin id of the upstream, the one the function selects. */
export const UPSTREAM_ORIGIN_ID = 'isr-upstream';
/**
 * The header every request the function sends to the upstream carries, set to the request's own
 * id (`event.context.requestId`) and keyed on by every cache policy the function routes under: a
 * pass request's cache key is its own, so CloudFront can neither serve it a shared entry nor make
 * one from it (its answer is made with the viewer's cookies;
 * https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/understanding-the-cache-key.html).
 * A static-classed request carries it too: the static behaviour's policy does not key on it, so
 * the asset is still shared there; but should CloudFront's path normalisation ever pick another
 * behaviour than the rules' own, the request lands uncached rather than shared with its cookies.
 * Privileged (`x-isr-`): a viewer's copy is stripped first.
 */
export const PASS_KEY_HEADER = 'x-isr-pass-key';
const HOST =
  /^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

/** Routing to the upstream: present only when there is an upstream (not the demo renderer). */
export interface EdgeRouting {
  readonly rules: TrafficRules;
  /** The upstream secret's header: stripped from viewers (the origin's custom header sets it). */
  readonly upstreamSecretHeader?: string | undefined;
}

export interface ViewerRequestFunctionOptions {
  /** Lower-case name of the tenant header the origin reads (multi-tenant mode). */
  readonly tenantHeader?: string | undefined;
  /** Host name (lower-case, no port) -> tenant; needs `tenantHeader`. */
  readonly tenantsByHost?: Readonly<Record<string, string>> | undefined;
  readonly routing?: EdgeRouting | undefined;
}

/** The settings the function is built from, under their setting names. */
export interface EdgeSettings extends TrafficRules {
  readonly tenantHeader: string | undefined;
  readonly upstreamSecret: { readonly header: string } | undefined;
}

/** The function's options from the settings: tenancy always, routing when there is an upstream. */
export function viewerRequestOptions(
  settings: EdgeSettings,
  tenantsByHost: Readonly<Record<string, string>> | undefined,
  routed: boolean,
): ViewerRequestFunctionOptions {
  return {
    tenantHeader: settings.tenantHeader,
    tenantsByHost,
    routing: routed
      ? { rules: toTrafficRules(settings), upstreamSecretHeader: settings.upstreamSecret?.header }
      : undefined,
  };
}

/** Whether the options call for a function at all: a host table, or an upstream to route to. */
export const needsViewerRequestFunction = (options: ViewerRequestFunctionOptions): boolean =>
  options.routing !== undefined ||
  (options.tenantsByHost !== undefined && options.tenantHeader !== undefined);

/** Every problem of the options, named as the construct props are; empty when it can deploy. */
export function viewerRequestFunctionProblems(options: ViewerRequestFunctionOptions): string[] {
  if (!needsViewerRequestFunction(options)) return [];
  const problems = options.tenantsByHost === undefined ? [] : tenantTableProblems(options);
  problems.push(...embeddedRuleProblems());
  if (problems.length > 0) return problems;
  const size = Buffer.byteLength(viewerRequestFunctionSource(options));
  if (size > MAX_FUNCTION_CODE_BYTES) {
    problems.push(
      `tenantsByHost and the routing settings make a ${size}-byte CloudFront Function, ` +
        `over CloudFront's ${MAX_FUNCTION_CODE_BYTES}-byte limit`,
    );
  }
  return problems;
}

/** A host table CloudFront or the cache key could not use. */
function tenantTableProblems(options: ViewerRequestFunctionOptions): string[] {
  const problems: string[] = [];
  const entries = Object.entries(options.tenantsByHost ?? {});
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
  return problems;
}

/** Facts whose decisions the embedded copy must reproduce, one per reason. */
const PROBES: readonly RequestFacts[] = [
  { method: 'GET', path: '/_isr/x', queryNames: [], headerNames: [], cookieNames: [] },
  { method: 'POST', path: '/a', queryNames: [], headerNames: [], cookieNames: [] },
  { method: 'GET', path: '/s/a.js', queryNames: [], headerNames: [], cookieNames: [] },
  { method: 'GET', path: '/api/x/y', queryNames: [], headerNames: [], cookieNames: [] },
  { method: 'GET', path: '//%61pi/./x', queryNames: [], headerNames: [], cookieNames: [] },
  { method: 'GET', path: '/a', queryNames: [], headerNames: [], cookieNames: ['draft'] },
  { method: 'HEAD', path: '/a', queryNames: [], headerNames: ['x-preview'], cookieNames: [] },
  { method: 'GET', path: '/a', queryNames: ['page', 'q'], headerNames: [], cookieNames: [] },
  { method: 'GET', path: '/a', queryNames: ['page'], headerNames: [], cookieNames: [] },
  { method: 'GET', path: '/a', queryNames: ['_rsc', 'page'], headerNames: [], cookieNames: [] },
  { method: 'GET', path: '/img', queryNames: ['w', 'x'], headerNames: [], cookieNames: [] },
];
const PROBE_RULES: TrafficRules = {
  bypassPaths: ['/api/**'],
  bypassCookies: ['draft'],
  bypassHeaders: ['x-preview'],
  staticPrefixes: ['/s/'],
  allowedQueryParams: ['page'],
  unknownQuery: 'pass',
  ignoredQueryParams: ['_rsc'],
  keyRules: [{ path: '/img', params: [{ name: 'w', kind: 'int', max: 9 }] }],
};

let embeddedVerdict: string[] | undefined;

/**
 * The embedded rules, run from their own source text in a bare context, decide the probes as
 * the module does: a transpiler that injected a helper or renamed a call fails here, at synth,
 * rather than in CloudFront. Memoised for the module's own functions.
 */
export function embeddedRuleProblems(functions: readonly AnyFunction[] = EDGE_FUNCTIONS): string[] {
  if (functions === EDGE_FUNCTIONS && embeddedVerdict !== undefined) return embeddedVerdict;
  let verdict: string[];
  try {
    const sandbox: { decide?: (facts: RequestFacts) => unknown } = {};
    const rules = JSON.stringify(PROBE_RULES);
    runInNewContext(
      `${embeddedSource(functions)}\nthis.decide = function (f) { return classifyRequest(f, ${rules}); };`,
      sandbox,
    );
    const differs = PROBES.filter(
      (facts) =>
        JSON.stringify(sandbox.decide?.(facts)) !==
        JSON.stringify(classifyRequest(facts, PROBE_RULES)),
    );
    verdict = differs.length === 0 ? [] : ['the embedded traffic rules decide differently'];
  } catch (error) {
    verdict = [`the embedded traffic rules do not run on their own: ${(error as Error).message}`];
  }
  if (functions === EDGE_FUNCTIONS) embeddedVerdict = verdict;
  return verdict;
}

// eslint-disable-next-line @typescript-eslint/no-unsafe-function-type -- only its text is read
type AnyFunction = Function;

/**
 * Source text without its indentation, blank lines and whole-line comments: the same program
 * (the embedded functions hold no template literal, so no line break is inside a literal) in
 * fewer of CloudFront's 10 KB (https://docs.aws.amazon.com/AmazonCloudFront/latest/DeveloperGuide/cloudfront-limits.html), whichever compiler wrote it
 * (tsc keeps the formatting, esbuild
 * does not).
 */
export const compactSource = (source: string): string =>
  source
    .split('\n')
    .map((line) => line.trim())
    .filter((line) => line !== '' && !line.startsWith('//'))
    .join('\n');

/** The rule functions' own source text, one after the other (the key rules' after them). */
const embeddedSource = (functions: readonly AnyFunction[] = EDGE_FUNCTIONS): string =>
  [...functions, ...(functions === EDGE_FUNCTIONS ? KEY_RULE_FUNCTIONS : [])]
    .map((fn) => compactSource(fn.toString()))
    .join('\n');

/** The function's source: the tables as JSON, the embedded rules, and the handler. */
export function viewerRequestFunctionSource(options: ViewerRequestFunctionOptions): string {
  const tenancy = options.tenantsByHost !== undefined && options.tenantHeader !== undefined;
  const routing = options.routing;
  const strip = routing === undefined ? [] : strippedHeaders(options, routing);
  const refusal = JSON.stringify(
    JSON.stringify({ error: 'unknown-host', message: 'this host is not served here' }),
  );
  return [
    ...(routing === undefined ? [] : ["import cf from 'cloudfront';"]),
    '// facetheory-isr viewer request: the tenant from Host, and routing by the traffic rules.',
    `var TENANTS = ${tenancy ? JSON.stringify(options.tenantsByHost) : 'null'};`,
    `var TENANT_HEADER = ${JSON.stringify(options.tenantHeader ?? null)};`,
    `var RULES = ${routing === undefined ? 'null' : JSON.stringify(routing.rules)};`,
    `var UPSTREAM = ${JSON.stringify(UPSTREAM_ORIGIN_ID)};`,
    `var PASS_KEY = ${JSON.stringify(PASS_KEY_HEADER)};`,
    `var STRIP = ${JSON.stringify(strip)};`,
    `var STRIP_PREFIXES = ${JSON.stringify(routing === undefined ? [] : PRIVILEGED_HEADER_PREFIXES)};`,
    `var REFUSAL = ${refusal};`,
    ...(routing === undefined ? [] : [embeddedSource()]),
    compactSource(HANDLER),
  ].join('\n');
}

/** Exact header names stripped: the privileged ones and the secret's, never the tenant's. */
function strippedHeaders(options: ViewerRequestFunctionOptions, routing: EdgeRouting): string[] {
  const names = [...PRIVILEGED_HEADERS];
  const secret = routing.upstreamSecretHeader;
  if (secret !== undefined && !names.includes(secret)) names.push(secret);
  return names.filter((name) => name !== options.tenantHeader);
}

const HANDLER = `function handler(event) {
  var request = event.request;
  var sent = request.headers.host ? request.headers.host.value : '';
  if (TENANTS !== null) {
    var host = sent.toLowerCase().replace(/:[0-9]+$/, '').replace(/\\.$/, '');
    if (!Object.prototype.hasOwnProperty.call(TENANTS, host)) {
      return {
        statusCode: 421,
        statusDescription: 'Misdirected Request',
        headers: {
          'content-type': { value: 'application/json' },
          'cache-control': { value: 'no-store' }
        },
        body: { encoding: 'text', data: REFUSAL }
      };
    }
    request.headers[TENANT_HEADER] = { value: TENANTS[host] };
  }
  if (RULES === null) return request;
  var names = Object.keys(request.headers);
  for (var i = 0; i < names.length; i++) {
    if (names[i] !== TENANT_HEADER && isPrivilegedHeader(names[i], STRIP, STRIP_PREFIXES)) {
      delete request.headers[names[i]];
    }
  }
  if (sent !== '') request.headers['x-forwarded-host'] = { value: sent };
  else delete request.headers['x-forwarded-host'];
  var decision = classifyRequest(factsOfCloudFrontRequest(request), RULES);
  if (decision.reason === 'internal' && request.method !== 'GET' && request.method !== 'HEAD') {
    return refusal(405, 'Method Not Allowed', 'method-not-allowed', 'only GET and HEAD are served here', 'GET, HEAD');
  }
  if (decision.class !== 'cached') {
    request.headers[PASS_KEY] = { value: event.context.requestId };
    cf.selectRequestOriginById(UPSTREAM);
    return request;
  }
  var rule = keyRuleOf(RULES.keyRules || [], normalisedPathOf(request.uri));
  if (rule !== null) return keyRuleRequest(request, rule, event.context.requestId);
  if (RULES.unknownQuery === 'drop') {
    var params = Object.keys(request.querystring);
    for (var j = 0; j < params.length; j++) {
      if (RULES.allowedQueryParams.indexOf(params[j]) < 0) delete request.querystring[params[j]];
    }
  }
  return request;
}
function refusal(status, description, error, message, allow) {
  var headers = {
    'content-type': { value: 'application/json' },
    'cache-control': { value: 'no-store' }
  };
  if (allow) headers.allow = { value: allow };
  return {
    statusCode: status,
    statusDescription: description,
    headers: headers,
    body: { encoding: 'text', data: JSON.stringify({ error: error, message: message }) }
  };
}
function badQuery(message) {
  return refusal(400, 'Bad Request', 'query-out-of-bounds', message);
}
function keyRuleRequest(request, rule, requestId) {
  var values = {};
  var names = Object.keys(request.querystring);
  for (var i = 0; i < names.length; i++) {
    var entry = request.querystring[names[i]];
    if (entry.multiValue && entry.multiValue.length > 1) return badQuery(names[i] + ' is repeated');
    try {
      values[names[i]] = entry.value.indexOf('%') >= 0 ? decodeURIComponent(entry.value) : entry.value;
    } catch (e) {
      return badQuery('the ' + names[i] + ' parameter is not percent-encoded properly');
    }
  }
  var verdict = keyParamsVerdict(rule, values);
  if (verdict === 'pass') {
    request.headers[PASS_KEY] = { value: requestId };
    cf.selectRequestOriginById(UPSTREAM);
    return request;
  }
  if (verdict !== '') return badQuery(verdict);
  var kept = [];
  for (var j = 0; j < rule.params.length; j++) kept.push(rule.params[j].name);
  for (var k = 0; k < names.length; k++) {
    if (kept.indexOf(names[k]) < 0) delete request.querystring[names[k]];
  }
  if (rule.accept === 'image') {
    var accept = request.headers.accept ? request.headers.accept.value : '';
    request.headers.accept = { value: normalisedAcceptOf(accept) };
  }
  return request;
}
`;
