/**
 * Lambda entry point of the revalidate function: configuration is read and validated once, at
 * cold start. Everything else lives in `build.ts` and below.
 */
import { loadRevalidateConfig } from '../shared/config.js';
import { lambdaRuntime } from '../shared/lambda-runtime.js';
import { buildRevalidateHandler } from './build.js';

const config = loadRevalidateConfig(process.env);
export const handler = buildRevalidateHandler(config, lambdaRuntime(config.functionName));
