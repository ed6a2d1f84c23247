import { readFileSync } from 'node:fs';

/**
 * The files of views/assets/ (stylesheets and browser scripts), read once by the modules that inline them.
 * They sit next to the module: src/interaction/views/assets/ when run from the sources, and the copy that
 * `npm run build` makes (scripts/copy-assets.mjs) under dist/.
 */
export function readAsset(name: string): string {
  return readFileSync(new URL(`./assets/${name}`, import.meta.url), 'utf8');
}
