/**
 * ESLint for the browser JavaScript the pages inline (the assets folders under src/): tsc checks the
 * TypeScript, nothing else would check these. They run in the page as classic scripts, not modules.
 */
import js from '@eslint/js';
import globals from 'globals';

const ASSET_SCRIPTS = 'src/**/assets/*.js';

export default [
  // every other JavaScript file (dist/, scripts, this config) is left alone
  { ignores: ['**/*.{js,mjs,cjs}', `!${ASSET_SCRIPTS}`] },
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
