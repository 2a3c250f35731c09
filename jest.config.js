/**
 * Tests run as native ESM (the Lambda code is ESM, @middy/core is ESM-only), transformed by SWC
 * for speed; `npm run typecheck` type-checks the same files with tsc.
 * @type {import('jest').Config}
 */
export default {
  testEnvironment: 'node',
  roots: ['<rootDir>/test'],
  testMatch: ['**/*.test.ts'],
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
  globalSetup: '<rootDir>/test/helpers/global-setup.js',
  globalTeardown: '<rootDir>/test/helpers/global-teardown.js',
  setupFiles: ['<rootDir>/test/helpers/env.ts'],
  testTimeout: 30_000,
};
