/**
 * Lambda entry point of the sweeper: configuration is read and validated once, at cold start.
 * Everything else lives in `build.ts` and below, where tests build it themselves.
 */
import { systemClock } from '../core/clock.js';
import { createAwsClients } from '../shared/aws-clients.js';
import { pendingPurgeFlusher } from '../shared/cdn.js';
import { loadSweeperConfig } from '../shared/config.js';
import { buildSweeperHandler } from './build.js';

const config = loadSweeperConfig(process.env);
const clients = createAwsClients();
export const handler = buildSweeperHandler(config, {
  clients,
  // Purges CloudFront kept refusing (throttled) are submitted again on every run.
  flushPendingPurges: pendingPurgeFlusher({
    distributionId: config.cdnDistributionId,
    dynamodb: clients.dynamodb,
    tableName: config.tableName,
    clock: systemClock,
  }),
});
