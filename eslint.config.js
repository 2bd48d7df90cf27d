import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'scratch/', '.scratch/', '.data/', 'coverage/', 'test-results/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: {
      globals: { process: 'readonly', console: 'readonly', Buffer: 'readonly', URL: 'readonly' },
    },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      'no-console': ['error', { allow: ['error'] }],
    },
  },
  {
    files: ['**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { module: 'writable', require: 'readonly' } },
  },
  {
    // Settings are read once, validated, in src/config.ts: nothing else reads the environment.
    files: ['src/**', 'rest/**'],
    ignores: ['src/config.ts'],
    rules: { 'no-restricted-properties': ['error', { object: 'process', property: 'env', message: 'Read settings through src/config.ts.' }] },
  },
  {
    files: ['src/cli/**', 'src/main.ts', 'bench/**', 'examples/**', 'test/**', 'openapi/**', 'schema/**', 'api-contracts/**'],
    rules: { 'no-console': 'off' },
  },
);
