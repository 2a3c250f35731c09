/**
 * The rules between settings. Each runs at cold start for the functions it names, and at synth
 * on each function's environment, so both refuse the same combinations in the same words.
 */
import type { SettingRule, Values } from './engine.js';
import { isLoopbackHost, MAX_FUNCTION_TIMEOUT_MS, PUBLISH_MARGIN_MS } from './limits.js';
import { ROUTING_RULES } from './routing-rules.js';

const num = (values: Values, key: string): number => values[key] as number;

/** A render only starts with more than the margin left on the lease, so some must remain. */
const skewBelowLease: SettingRule = {
  keys: ['clockSkewMarginSeconds', 'leaseSeconds'],
  check: (values, nameOf) => {
    const skew = num(values, 'clockSkewMarginSeconds');
    const lease = num(values, 'leaseSeconds');
    if (skew === undefined || lease === undefined || skew < lease) return [];
    return [
      `${nameOf('clockSkewMarginSeconds')} (${skew} s) must be below the lease ` +
        `(${nameOf('leaseSeconds')}=${lease}): no lease would be left to render in`,
    ];
  },
};

/** The lease must outlive the render, so a render cannot run past its lease unnoticed. */
const renderBelowLease: SettingRule = {
  keys: ['renderTimeoutMs', 'leaseSeconds'],
  check: (values, nameOf) => {
    const render = num(values, 'renderTimeoutMs');
    const lease = num(values, 'leaseSeconds');
    if (render === undefined || lease === undefined || render < lease * 1000) return [];
    return [
      `${nameOf('renderTimeoutMs')} (${render} ms) must be below the lease ` +
        `(${nameOf('leaseSeconds')}=${lease}, ${lease * 1000} ms): the lease must be longer than the render`,
    ];
  },
};

/**
 * A function's timeout must leave room for the longest thing it does plus the publish margin:
 * the worker a render, the origin a render in the request or a wait for another holder's publish.
 * The revalidate function and the sweeper never render.
 */
const timeoutFitsRender: SettingRule = {
  keys: ['functionTimeoutMs', 'renderTimeoutMs', 'missWaitMs'],
  readers: ['origin', 'worker'],
  check: (values, nameOf) => {
    const timeout = num(values, 'functionTimeoutMs');
    const render = num(values, 'renderTimeoutMs');
    if (timeout === undefined || render === undefined) return [];
    const wait = num(values, 'missWaitMs') ?? 0;
    const needed = Math.max(render, wait) + PUBLISH_MARGIN_MS;
    if (timeout >= needed) return [];
    const what = wait > render ? nameOf('missWaitMs') : nameOf('renderTimeoutMs');
    return [
      `${nameOf('functionTimeoutMs')} (${timeout} ms) must leave room for a render and its ` +
        `publish: at least ${what} + ${PUBLISH_MARGIN_MS} ms = ${needed} ms, and at most 900 s`,
    ];
  },
};

/**
 * A body younger than a lease plus the longest function run may still be published by the
 * render that wrote it (it holds, or may refresh, its lease): the sweeper must never retire it.
 */
const orphanAgeOutlivesRenders: SettingRule = {
  keys: ['orphanAgeSeconds', 'leaseSeconds'],
  readers: ['sweeper'],
  check: (values, nameOf) => {
    const age = num(values, 'orphanAgeSeconds');
    const needed = num(values, 'leaseSeconds') + MAX_FUNCTION_TIMEOUT_MS / 1000;
    if (age > needed) return [];
    return [
      `${nameOf('orphanAgeSeconds')} (${age} s) must exceed the lease ` +
        `(${nameOf('leaseSeconds')}) plus the longest function timeout (900 s): ${needed} s`,
    ];
  },
};

/**
 * A deployed upstream is reached over https only: plain http would carry the rendered pages
 * and the upstream secret in clear. http is for loopback hosts and local mode.
 */
const upstreamOverHttps: SettingRule = {
  keys: ['renderOriginUrl', 'localMode'],
  check: (values, nameOf) => {
    const url = values.renderOriginUrl as string | undefined;
    if (url === undefined) return [];
    const name = nameOf('renderOriginUrl');
    let parsed: URL;
    try {
      parsed = new URL(url);
    } catch {
      return [`${name} is not a URL: ${url}`];
    }
    if (parsed.username !== '' || parsed.password !== '') {
      return [`${name} must not carry credentials; use the upstream secret instead`];
    }
    if (parsed.protocol === 'https:') return [];
    const local = values.localMode === true;
    if (parsed.protocol === 'http:' && (local || isLoopbackHost(parsed.hostname))) return [];
    if (parsed.protocol !== 'http:') return [`${name} must be https, got ${url}`];
    return [
      `${name} must be https (http only for localhost, 127.0.0.0/8, ::1 or local mode, ` +
        `${nameOf('localMode')}), got ${url}`,
    ];
  },
};

/** The secret must not travel in the header that names the tenant. */
const secretHeaderNotTenantHeader: SettingRule = {
  keys: ['upstreamSecretHeader', 'tenantHeader', 'upstreamSecretArn'],
  check: (values, nameOf) =>
    values.upstreamSecretArn !== undefined &&
    values.upstreamSecretHeader !== undefined &&
    values.upstreamSecretHeader === values.tenantHeader
      ? [`${nameOf('upstreamSecretHeader')} must differ from the tenant header`]
      : [],
};

export const RULES: readonly SettingRule[] = [
  skewBelowLease,
  renderBelowLease,
  timeoutFitsRender,
  orphanAgeOutlivesRenders,
  upstreamOverHttps,
  secretHeaderNotTenantHeader,
  ...ROUTING_RULES,
];
