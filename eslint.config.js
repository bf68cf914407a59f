import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

/** The layers of docs/architecture.md, top first: each may import only the ones before it. */
const LAYERS = ['protocol', 'host', 'client', 'service', 'secrets', 'sync', 'agent', 'window', 'cli'];
const DOOR = {
  regex: '^(\\.\\./)+(src/)?(protocol|host|client|service|secrets|sync|agent|window|cli)/(?!index\\.ts$).+',
  message: 'Import another layer through its index.ts only.',
};

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
    // A layer reaches another only through its index.ts door (see docs/architecture.md, "Layers").
    files: ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts'],
    rules: { 'no-restricted-imports': ['error', { patterns: [DOOR] }] },
  },
  // The tests of a layer are its own: test/<layer>/ may import the modules of src/<layer>/ directly, so that a unit
  // test imports the unit it tests (the scheduler from src/sync/scheduler.ts) and the door exports only what other
  // layers use. Every other layer, and test/support, test/e2e and bench, still goes through the doors.
  ...LAYERS.map((layer) => ({
    files: [`test/${layer}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              ...DOOR,
              regex: `^(\\.\\./)+(src/)?(${LAYERS.filter((other) => other !== layer).join('|')})/(?!index\\.ts$).+`,
            },
          ],
        },
      ],
    },
  })),
  // And only a layer above it: a lower layer never imports a higher one.
  ...LAYERS.map((layer, index) => ({
    files: [`src/${layer}/**/*.ts`],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            DOOR,
            ...(index < LAYERS.length - 1
              ? [
                  {
                    regex: `^(\\.\\./)+(${LAYERS.slice(index + 1).join('|')})(/|$)`,
                    message: `src/${layer} may import only ${LAYERS.slice(0, index).join(', ') || 'no other layer'} (docs/architecture.md, "Layers").`,
                  },
                ]
              : []),
            ...(layer === 'protocol'
              ? [
                  {
                    regex: '^node:',
                    message: 'src/protocol is pure: no Node APIs (the renderer imports it).',
                  },
                ]
              : []),
          ],
        },
      ],
    },
  })),
  {
    // The window runs in a browser (or a sandboxed Electron page): DOM globals, no Node, nothing of ours but
    // src/protocol and the AgentApi types.
    files: ['renderer/**/*.{ts,tsx}'],
    languageOptions: { globals: { ...globals.browser } },
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              regex: '^(node:|electron$)',
              message: 'The renderer talks only to window.flowsync (AgentApi).',
            },
            {
              regex: '^(\\.\\./)+src/(host|client|service|secrets|sync|agent|cli)(/|$)',
              message: 'The renderer imports only src/protocol and src/window (the AgentApi types).',
            },
          ],
        },
      ],
    },
  },
  {
    // The desktop shell is glue: it reaches the agent only through the window layer's door.
    files: ['electron/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            DOOR,
            {
              regex: '^(\\.\\./)+src/(host|client|service|secrets|sync|agent|cli)(/|$)',
              message: 'electron/ imports only src/window and src/protocol.',
            },
          ],
        },
      ],
    },
  },
  {
    files: ['electron/**/*.cjs'],
    languageOptions: { sourceType: 'commonjs', globals: { ...globals.node } },
    rules: { '@typescript-eslint/no-require-imports': 'off' },
  },
);
