// Runs one prebuilt Lambda bundle as the Lambda runtime does: imports it once (its cold start
// reads process.env), then invokes its handler for each event the parent sends over IPC. Plain
// ESM, run by node itself: nothing of the test's TypeScript or transforms reaches the bundle.
import { randomUUID } from 'node:crypto';
import { pathToFileURL } from 'node:url';

const [bundle, functionName, timeout] = process.argv.slice(2);
const timeoutMs = Number(timeout);

playSecretsExtension(JSON.parse(process.env.ISR_TEST_EXTENSION_SECRETS ?? '{}'));
const { handler } = await import(pathToFileURL(bundle).href);

process.on('message', ({ id, event }) => {
  handler(event, lambdaContext())
    .then((result) => process.send({ id, result: result ?? null }))
    .catch((error) => process.send({ id, error: String(error?.stack ?? error) }));
});
process.send({ ready: true });

/** The part of the Lambda context the handlers read (remaining time drives idempotency expiry). */
function lambdaContext() {
  const deadline = Date.now() + timeoutMs;
  return {
    callbackWaitsForEmptyEventLoop: false,
    functionName,
    functionVersion: '$LATEST',
    invokedFunctionArn: `arn:aws:lambda:us-east-1:123456789012:function:${functionName}`,
    memoryLimitInMB: '1024',
    awsRequestId: randomUUID(),
    logGroupName: `/aws/lambda/${functionName}`,
    logStreamName: 'bundle-test',
    getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now()),
  };
}

/**
 * The AWS Parameters and Secrets extension is part of the Lambda environment, not of the bundle:
 * it answers `GET localhost:2773/secretsmanager/get?secretId=<arn>` when the request carries the
 * function's session token. Played here in-process, so no fixed port is shared between test runs.
 */
function playSecretsExtension(secrets) {
  const realFetch = globalThis.fetch;
  globalThis.fetch = async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.host !== 'localhost:2773') return realFetch(input, init);
    const token = new Headers(init?.headers).get('x-aws-parameters-secrets-token');
    if (token !== process.env.AWS_SESSION_TOKEN) return new Response('bad token', { status: 401 });
    const secretId = url.searchParams.get('secretId') ?? '';
    process.send({ secretRead: secretId }); // the extension's GetSecretValue, with the role's rights
    if (url.pathname !== '/secretsmanager/get' || !(secretId in secrets)) {
      return new Response('not found', { status: 400 });
    }
    return Response.json({ ARN: secretId, SecretString: secrets[secretId] });
  };
}
