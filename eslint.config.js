// Lint rules that catch bugs the type checker lets through (see README, "Tests and linting").
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

export default tseslint.config(
  { ignores: ['dist/', 'node_modules/', 'out/', 'out.*/', 'test-output/', '.snapshot-index/'] },
  js.configs.recommended,
  tseslint.configs.recommended,
  {
    files: ['**/*.ts'],
    languageOptions: {
      parserOptions: { projectService: { allowDefaultProject: ['vitest.config.ts'] }, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // Type-aware: a promise nobody awaits loses its error (and its ordering).
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: false }],
      '@typescript-eslint/await-thenable': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none' }],
      eqeqeq: ['error', 'always', { null: 'ignore' }],
      'no-constant-condition': ['error', { checkLoops: false }],
    },
  },
  {
    // src/ is being restructured on other branches; these rules find the places listed below and
    // stay warnings there until those are fixed, then this block goes (every rule an error everywhere).
    //   no-floating-promises (no autofix): lmdb put/remove inside transactionSync, 17 in index/indexer.ts
    //     and site/writer.ts:143,148 (harmless there: use putSync/removeSync or `void`);
    //     serve/server.ts:240 running.close().then(ok) loses a close error; ui/main.ts:56
    //     render().catch().then(...) loses an error thrown in the last .then
    //   preserve-caught-error: source/blkdir.ts, source/rpc.ts rethrow without { cause } (no autofix)
    //   no-control-regex: ui/format.ts visible() matches control characters on purpose (disable that line)
    //   no-useless-assignment: ui/data.ts `let body = null` overwritten in both branches (no autofix)
    files: ['src/**/*.ts'],
    rules: {
      '@typescript-eslint/no-floating-promises': 'warn',
      'preserve-caught-error': 'warn',
      'no-control-regex': 'warn',
      'no-useless-assignment': 'warn',
    },
  },
  { files: ['eslint.config.js'], ...tseslint.configs.disableTypeChecked },
);
