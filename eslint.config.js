import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['node_modules/', 'dist/', 'renderer/dist/', 'coverage/', '.scratch/'] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    languageOptions: { globals: { ...globals.node } },
    rules: {
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': 'error',
      'no-console': 'off',
    },
  },
  {
    // A layer reaches another only through its index.ts door (see DESIGN.md, "Layers").
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+(src/)?(protocol|client|service|secrets|sync|agent|cli)/(?!index\\.ts$).+',
              message: 'Import another layer through its index.ts only.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['src/protocol/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(\\.\\./)+(client|service|secrets|sync|agent|cli)(/|$)',
              message: 'src/protocol imports nothing of ours.',
            },
            { regex: '^node:', message: 'src/protocol is pure: no Node APIs (the renderer imports it).' },
          ],
        },
      ],
    },
  },
);
