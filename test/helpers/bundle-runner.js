// Runs one prebuilt Lambda bundle as the Lambda runtime does: imports it once (its cold start
// reads process.env), then invokes its handler for each event the parent sends over IPC. Plain
// ESM, run by node itself: nothing of the test's TypeScript or transforms reaches the bundle.
import { randomUUID } from 'node:crypto';
import { PassThrough } from 'node:stream';
import { pathToFileURL } from 'node:url';

const [bundle, functionName, timeout] = process.argv.slice(2);
const timeoutMs = Number(timeout);

playSecretsExtension(JSON.parse(process.env.ISR_TEST_EXTENSION_SECRETS ?? '{}'));
installAwsLambdaGlobal();
const { handler } = await import(pathToFileURL(bundle).href);

process.on('message', ({ id, event }) => {
  invoke(event)
    .then((result) => process.send({ id, result: result ?? null }))
    .catch((error) => process.send({ id, error: String(error?.stack ?? error) }));
});

/**
 * A handler `awslambda.streamifyResponse` marked gets a response stream (the runtime's
 * src/UserFunction.js); its bytes and content type go back whole, for the parent to read as the
 * function URL does (`local/lambda-streaming.ts`). Any other is called as a buffered handler.
 */
async function invoke(event) {
  if (handler[Symbol.for('aws.lambda.runtime.handler.streaming')] !== 'response') {
    return handler(event, lambdaContext());
  }
  const stream = responseStream();
  const chunks = [];
  stream.on('data', (chunk) => chunks.push(chunk));
  const ended = new Promise((resolve, reject) => {
    stream.on('end', resolve);
    stream.on('error', reject);
  });
  await handler(event, stream, lambdaContext());
  if (!stream.writableEnded) stream.end();
  await ended;
  const bytes = Buffer.concat(chunks).toString('base64');
  return { streamed: { contentType: stream.contentType, bytes } };
}

/**
 * The `awslambda` global the Node.js runtime sets before it loads a handler's module, as
 * aws-lambda-nodejs-runtime-interface-client's src/index.mjs and src/HttpResponseStream.js make
 * it: a streaming mark, and the JSON prelude and 8 null bytes before the first write. Copied from
 * `local/lambda-streaming.ts` because this file runs without TypeScript.
 */
function installAwsLambdaGlobal() {
  const awslambda = (globalThis.awslambda ??= {});
  awslambda.streamifyResponse = (handler) => {
    handler[Symbol.for('aws.lambda.runtime.handler.streaming')] = 'response';
    return handler;
  };
  awslambda.HttpResponseStream = {
    from(underlying, prelude) {
      underlying.setContentType('application/vnd.awslambda.http-integration-response');
      const metadata = JSON.stringify(prelude);
      underlying._onBeforeFirstWrite = (write) => {
        write(metadata);
        write(new Uint8Array(8));
      };
      return underlying;
    },
  };
}

/** The runtime's response stream (src/ResponseStream.js): a content type until the first write. */
function responseStream() {
  const stream = new PassThrough();
  let written = false;
  stream.contentType = 'application/octet-stream';
  stream.setContentType = (type) => {
    if (written) throw new Error('Cannot set content-type, too late.');
    stream.contentType = type;
  };
  const write = stream.write.bind(stream);
  stream.write = (chunk, ...rest) => {
    if (!written) {
      written = true;
      stream._onBeforeFirstWrite?.((first) => write(first));
    }
    return write(chunk, ...rest);
  };
  return stream;
}
process.send({ ready: true });

/**
 * The part of the Lambda context the handlers read (remaining time drives idempotency expiry): as
 * `local/lambda-context.ts` makes it, copied because this file runs without TypeScript.
 */
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
