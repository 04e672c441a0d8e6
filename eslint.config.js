import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/**', 'data/**', 'drizzle/**', 'coverage/**', 'artifacts/**', 'packages/client/src/schema.d.ts'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    // Test helpers return loosely typed JSON bodies on purpose.
    files: ['test/**/*.ts'],
    rules: { '@typescript-eslint/no-explicit-any': 'off' },
  },
  {
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
    },
  },
);
