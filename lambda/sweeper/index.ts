/**
 * Lambda entry point of the sweeper: configuration is read and validated once, at cold start.
 * Everything else lives in `build.ts` and below, where tests build it themselves.
 */
import { createAwsClients } from '../shared/aws-clients.js';
import { loadSweeperConfig } from '../shared/config.js';
import { buildSweeperHandler } from './build.js';

const config = loadSweeperConfig(process.env);
export const handler = buildSweeperHandler(config, { clients: createAwsClients() });
