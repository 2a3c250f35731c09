/**
 * Lambda entry point of the origin: configuration is read and validated once, at cold start.
 * Everything else lives in `build.ts` and below, where tests and local mode build it themselves.
 */
import { createAwsClients } from '../shared/aws-clients.js';
import { loadOriginConfig } from '../shared/config.js';
import { buildOriginHandler } from './build.js';

export const handler = buildOriginHandler(loadOriginConfig(process.env), {
  clients: createAwsClients(),
  owner: process.env.AWS_LAMBDA_FUNCTION_NAME,
});
