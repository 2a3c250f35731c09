import js from '@eslint/js';
import prettier from 'eslint-config-prettier';
import jest from 'eslint-plugin-jest';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  {
    ignores: [
      'node_modules/',
      'cdk.out/',
      'coverage/',
      '.local/',
      'bench/results/',
      'test/fixtures/next-app/.next/',
      'dist/',
      'docs/api/',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: {
          // The fixture app's other files are in its jsconfig.json's project.
          allowDefaultProject: [
            '*.js',
            'test/helpers/*.js',
            'cli/*.js',
            'test/fixtures/*/*.config.js',
            'test/fixtures/next-cache-handler/*.js',
          ],
          // The files above are linted without type information (disableTypeChecked, below),
          // so a few more than typescript-eslint's default of 8 cost little.
          maximumDefaultProjectFileMatchCount_THIS_WILL_SLOW_DOWN_LINTING: 12,
        },
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
    },
  },
  {
    files: ['**/*.js'],
    ...tseslint.configs.disableTypeChecked,
    languageOptions: { globals: globals.node },
  },
  {
    files: ['test/**/*.ts'],
    ...jest.configs['flat/recommended'],
    rules: {
      ...jest.configs['flat/recommended'].rules,
      'jest/no-focused-tests': 'error',
      'jest/no-disabled-tests': 'error',
      'jest/expect-expect': [
        'error',
        { assertFunctionNames: ['expect', 'expect*', 'fc.assert', '*.has*', '*.resource*Is'] },
      ],
      '@typescript-eslint/unbound-method': 'off',
    },
  },
  {
    // Shared expectations, run by the tests that import them (e.g. the Next.js baseline).
    files: ['test/helpers/**/*.ts'],
    rules: { 'jest/no-standalone-expect': 'off' },
  },
  {
    // A contract suite is a describe block each adapter's test file runs, the in-memory one and
    // the real one alike (test/lambda/adapters/<port>/contract.ts): exporting it is the point.
    files: ['test/**/contract.ts'],
    rules: { 'jest/no-export': 'off' },
  },
  prettier,
);
