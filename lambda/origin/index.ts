/**
 * Lambda entry point of the origin: configuration is read and validated once, at cold start.
 * Everything else lives in `build.ts` and below, where tests and local mode build it themselves.
 */
import { loadOriginConfig } from '../shared/config.js';
import { lambdaRuntime } from '../shared/lambda-runtime.js';
import { buildStreamingOriginHandler } from './build.js';

const config = loadOriginConfig(process.env);
// Behind a RESPONSE_STREAM function URL (lib/isr-service.ts): passes stream to the viewer.
export const handler = buildStreamingOriginHandler(config, lambdaRuntime(config.functionName));
