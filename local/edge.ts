/**
 * What `npm start`'s front runs in CloudFront's place: the viewer-request function generated from
 * the same settings as the deployed one, and the upstream origin it selects for pass and static
 * requests (none without an upstream: the demo renders everything itself).
 */
import {
  needsViewerRequestFunction,
  viewerRequestFunctionSource,
  viewerRequestOptions,
} from '../lib/edge/viewer-request-function.js';
import { HttpPassThrough } from '../lambda/adapters/pass-through/http.js';
import { StaticSecretSource } from '../lambda/adapters/secret-source/static.js';
import type { PassThrough } from '../lambda/core/serve/ports.js';
import type { SettingValues } from '../lambda/core/settings/table.js';

export interface LocalEdge {
  readonly source: string | undefined;
  readonly upstream: PassThrough | undefined;
}

/**
 * The function's source and the upstream, from the settings the origin reads. The upstream secret,
 * where there is one, is set as CloudFront's custom origin header would set it.
 */
export function localEdge(settings: SettingValues, upstreamSecret: string | undefined): LocalEdge {
  const routed = settings.renderOriginUrl !== undefined;
  const secretHeader = settings.upstreamSecretHeader;
  const options = viewerRequestOptions(
    {
      ...settings,
      upstreamSecret: upstreamSecret === undefined ? undefined : { header: secretHeader },
    },
    undefined,
    routed,
  );
  return {
    source: needsViewerRequestFunction(options) ? viewerRequestFunctionSource(options) : undefined,
    upstream:
      settings.renderOriginUrl === undefined
        ? undefined
        : new HttpPassThrough({
            originUrl: settings.renderOriginUrl,
            maxBodyBytes: settings.passBodyMaxBytes,
            secretHeader:
              upstreamSecret === undefined
                ? undefined
                : { name: secretHeader, secret: new StaticSecretSource(upstreamSecret) },
            internalHeaders: settings.tenantHeader === undefined ? [] : [settings.tenantHeader],
          }),
  };
}
