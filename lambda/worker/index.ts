/**
 * Lambda entry point of the worker: configuration is read and validated once, at cold start.
 * Everything else lives in `build.ts` and below, where tests and local mode build it themselves.
 */
import { loadWorkerConfig } from '../shared/config.js';
import { lambdaRuntime } from '../shared/lambda-runtime.js';
import { buildWorkerHandler } from './build.js';

const config = loadWorkerConfig(process.env);
export const handler = buildWorkerHandler(config, lambdaRuntime(config.functionName));
