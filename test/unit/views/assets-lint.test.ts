/**
 * The browser JavaScript the pages inline (the .js files of the assets folders under src/) is linted as
 * `npm run lint` does: ESLint with the repo's eslint.config.js (browser globals, the recommended rules,
 * ES5 syntax).
 */
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ESLint } from 'eslint';
import { describe, expect, it } from 'vitest';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

describe('browser scripts (ESLint)', () => {
  const eslint = new ESLint({ cwd: ROOT });

  it('have no lint problems', async () => {
    const results = await eslint.lintFiles(['src/**/assets/*.js']);
    expect(results.map((r) => r.filePath)).toContain(`${ROOT}src/interaction/views/assets/prompt.js`);
    const problems = results.flatMap((r) =>
      r.messages.map((m) => `${r.filePath}:${m.line}:${m.column} ${m.ruleId ?? ''} ${m.message}`),
    );
    expect(problems).toEqual([]);
  }, 30_000);

  it('are checked by the config: undefined names, unused variables and newer syntax are errors', async () => {
    const lint = async (code: string) =>
      (await eslint.lintText(code, { filePath: `${ROOT}src/interaction/views/assets/probe.js` }))[0].messages.map(
        (m) => m.ruleId ?? m.message,
      );
    expect(await lint("(function () { 'use strict'; document.title = String(window.innerWidth); })();\n")).toEqual([]);
    expect(await lint('(function () { undeclared(); })();\n')).toEqual(['no-undef']);
    expect(await lint('(function () { var unused = 1; })();\n')).toEqual(['no-unused-vars']);
    expect((await lint('(function () { var f = () => 1; f(); })();\n'))[0]).toMatch(/Parsing error/);
  }, 30_000);
});

describe('assets', () => {
  it('are ASCII, as the escaped markup is, so that a page stays a one-byte string (escape.ts)', () => {
    const dir = new URL('../../../src/interaction/views/assets/', import.meta.url);
    const files = readdirSync(dir);
    expect(files).toEqual(expect.arrayContaining(['layout.css', 'prompt.css', 'prompt.js', 'message.css', 'demo.css']));
    for (const f of files) expect(readFileSync(new URL(f, dir), 'utf8'), f).toMatch(/^[\x00-\x7f]*$/);
  });
});
