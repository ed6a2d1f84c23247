/**
 * ESLint, run by `npm test`:
 * - the TypeScript of src/, test/, bench/ and examples/ with typescript-eslint's recommended rules and its
 *   type-aware promise rules (a promise nobody awaits loses its error and its order: tsc does not see it);
 * - the browser JavaScript the pages inline (the assets folders under src/), which nothing else checks.
 *   They run in the page as classic scripts, not modules;
 * - one rule over the dev wallet's TypeScript: it imports nothing of the service;
 * - sizes over src/: no module over 300 lines, no function over 80.
 */
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const ASSET_SCRIPTS = 'src/**/assets/*.js';

/**
 * The dev wallet (src/wallet) is a wallet built on libraries (jose, @sd-jwt/*, @owf/mdoc, @peculiar/x509),
 * so that tests of "wallet against our service" never have our own code checking itself: no import may
 * leave src/wallet. A relative path climbing out of it is refused at each depth (the test
 * test/unit/wallet-independence.test.ts also resolves every import, dynamic ones included).
 */
const WALLET_APART = 'the dev wallet imports nothing of the service (src/ outside src/wallet): use a library, or write the wallet\'s own code under src/wallet';
const walletImportsBelow = (depth) => ({
  files: [`src/wallet/${'*/'.repeat(depth)}*.ts`],
  languageOptions: { parser: tseslint.parser },
  rules: {
    'no-restricted-imports': ['error', { patterns: [{ regex: `^(\\.\\./){${depth + 1},}`, message: WALLET_APART }, { regex: '^(/|src/)', message: WALLET_APART }] }],
  },
});

const TYPESCRIPT = ['src/**/*.ts', 'test/**/*.ts', 'bench/**/*.ts', 'examples/**/*.ts'];

export default [
  // every other JavaScript file (dist/, scripts, this config) is left alone
  { ignores: ['**/*.{js,mjs,cjs}', `!${ASSET_SCRIPTS}`, 'dist/**'] },
  { ...js.configs.recommended, files: TYPESCRIPT },
  ...tseslint.configs.recommended.map((c) => ({ ...c, files: TYPESCRIPT })),
  {
    files: TYPESCRIPT,
    languageOptions: { parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname } },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/await-thenable': 'error',
      // the sanitizers and parsers match control characters on purpose (escape.ts, the CLIs' argument checks)
      'no-control-regex': 'off',
      // `_name` says a parameter or binding is unused on purpose (a handler's signature, a destructured rest)
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_', caughtErrors: 'none', ignoreRestSiblings: true }],
    },
  },
  {
    // tests, benchmarks and the example read untyped JSON answers (`any` where a type would only restate the
    // assertion), and hand async handlers to node:http servers (a handler's failure fails its test or is
    // answered by its own catch): only src/ is held to both rules
    files: ['test/**/*.ts', 'bench/**/*.ts', 'examples/**/*.ts'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false, variables: false } }],
    },
  },
  {
    // small enough to read at once: a long handler is split into the steps it takes, a long configuration
    // literal becomes a named constant beside it, a long module into the modules it holds
    files: ['src/**/*.ts'],
    rules: {
      'max-lines': ['error', { max: 300 }],
      'max-lines-per-function': ['error', { max: 80 }],
    },
  },
  ...[0, 1, 2].map(walletImportsBelow),
  { files: [ASSET_SCRIPTS], ...js.configs.recommended },
  {
    files: [ASSET_SCRIPTS],
    languageOptions: {
      // the script is ES5 syntax throughout (var, function expressions): keep it so unless dropping older
      // browsers is decided
      ecmaVersion: 5,
      sourceType: 'script',
      globals: globals.browser,
    },
    rules: {
      // ES5 has no catch without a binding: `catch (e)` with `e` unused is how the script ignores an error
      'no-unused-vars': ['error', { caughtErrors: 'none' }],
    },
  },
];
