import { availableParallelism } from 'node:os';

/**
 * Three tiers, one `npm test`:
 * - unit (`*.unit.test.ts`): pure code and use-case branches on in-memory fakes of the ports;
 *   no Java, no backends, seconds (`npm run test:unit`);
 * - cdk (`test/lib`): CDK assertions and cdk-nag on the synthesized stack;
 * - integration (every other `*.test.ts`): adapters, handlers, local mode and the model check
 *   on the real local backends (DynamoDB Local, s3rver, local-aws-sqs), started once per run;
 *   the prebuilt bundles and the packed package (`test/package`).
 * The cdk and integration tiers first build the prebuilt Lambda bundles when they are stale.
 * Tests run as native ESM (the Lambda code is ESM, @middy/core is ESM-only), transformed by SWC
 * for speed; `npm run typecheck` type-checks the same files with tsc.
 * @type {import('jest').Config}
 */
const common = {
  testEnvironment: 'node',
  extensionsToTreatAsEsm: ['.ts'],
  transform: {
    '^.+\\.ts$': [
      '@swc/jest',
      {
        jsc: { parser: { syntax: 'typescript' }, target: 'es2022' },
        module: { type: 'es6' },
      },
    ],
  },
  // Sources import siblings as './x.js' (NodeNext); resolve those to the .ts files.
  moduleNameMapper: { '^(\\.{1,2}/.*)\\.js$': '$1' },
  setupFiles: ['<rootDir>/test/helpers/env.ts'],
  // The fixture Next.js app's build output: thousands of files no test imports.
  modulePathIgnorePatterns: ['<rootDir>/test/fixtures/next-app/.next/'],
};

export default {
  testTimeout: 30_000,
  // Jest's default is one worker per core but one, so on a 2-core CI machine every suite ran in
  // turn. The slow suites mostly wait on child processes (next build, next start, npm, Java),
  // so two workers overlap that waiting; the slow ones start first (slow-first-sequencer.js).
  maxWorkers: Math.max(2, availableParallelism() - 1),
  testSequencer: '<rootDir>/test/helpers/slow-first-sequencer.js',
  projects: [
    {
      ...common,
      displayName: 'unit',
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.unit.test.ts'],
    },
    {
      ...common,
      displayName: 'cdk',
      roots: ['<rootDir>/test/lib'],
      testMatch: ['**/*.test.ts'],
      testPathIgnorePatterns: ['\\.unit\\.test\\.ts$'],
      globalSetup: '<rootDir>/test/helpers/build-setup.js',
    },
    {
      ...common,
      displayName: 'integration',
      roots: ['<rootDir>/test'],
      testMatch: ['**/*.test.ts'],
      testPathIgnorePatterns: ['\\.unit\\.test\\.ts$', '<rootDir>/test/lib/'],
      globalSetup: '<rootDir>/test/helpers/global-setup.js',
      globalTeardown: '<rootDir>/test/helpers/global-teardown.js',
    },
  ],
};
