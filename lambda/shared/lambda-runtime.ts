import { createAwsClients } from './aws-clients.js';
import type { ServiceRuntime } from './service.js';

/**
 * What a deployed function is built from besides its configuration: SDK clients with the
 * Lambda's own credentials, and the session token the Parameters and Secrets extension asks
 * for, read when it is needed (the runtime sets it; like the SDK's credentials, it is not
 * configuration). The entry points are the only other readers of `process.env`.
 */
export function lambdaRuntime(functionName: string | undefined): ServiceRuntime {
  return {
    clients: createAwsClients(),
    owner: functionName,
    sessionToken: () => process.env.AWS_SESSION_TOKEN,
  };
}
