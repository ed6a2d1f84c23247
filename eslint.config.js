/**
 * ESLint for the browser JavaScript the pages inline (the assets folders under src/): tsc checks the
 * TypeScript, nothing else would check these. They run in the page as classic scripts, not modules.
 * And one rule over the dev wallet's TypeScript: it imports nothing of the service.
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

export default [
  // every other JavaScript file (dist/, scripts, this config) is left alone
  { ignores: ['**/*.{js,mjs,cjs}', `!${ASSET_SCRIPTS}`] },
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
