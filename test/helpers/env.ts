// Runs before each test file: quiet, deterministic settings for the libraries under test.
process.env.AWS_REGION ??= 'us-east-1';
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED = 'true';
process.env.POWERTOOLS_LOG_LEVEL ??= process.env.ISR_TEST_LOG_LEVEL ?? 'SILENT';
process.env.POWERTOOLS_DEV = 'true';
process.env.POWERTOOLS_METRICS_DISABLED = 'true';
