/**
 * docs/relying-parties.md shows the recipes that the tests run (test/e2e/rp-*.test.ts): each code block
 * marked `<!-- recipe: <file>#<name> -->` must be, line for line, the lines between `recipe: <name>` and
 * `end recipe` in that file, so the page never shows code that was not run.
 */
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const DOC = 'docs/relying-parties.md';

/** The lines of `file` between `// recipe: <name>` (or `# recipe: <name>`) and the next `end recipe`. */
function recipeRegion(file: string, name: string): string {
  const lines = readFileSync(file, 'utf8').split('\n');
  const start = lines.findIndex((l) => l.trim() === `// recipe: ${name}` || l.trim() === `# recipe: ${name}`);
  const end = lines.findIndex((l, i) => i > start && ['// end recipe', '# end recipe'].includes(l.trim()));
  if (start < 0 || end < 0) throw new Error(`${file} has no region "recipe: ${name}"`);
  return lines.slice(start + 1, end).join('\n');
}

/** Every marked block of the page: its file, region name and code. */
function markedBlocks(): { file: string; name: string; code: string }[] {
  const blocks = [
    ...readFileSync(DOC, 'utf8').matchAll(/<!-- recipe: ([^#\s]+)#([^>]+?) -->\n```\w*\n([\s\S]*?)\n```/g),
  ];
  return blocks.map(([, file, name, code]) => ({ file, name, code }));
}

describe('docs/relying-parties.md shows the recipes as the tests run them', () => {
  const blocks = markedBlocks();

  it('marks the recipes of every library the tests run', () => {
    expect(new Set(blocks.map((b) => b.file))).toEqual(
      new Set([
        'examples/relying-parties/authjs.ts',
        'examples/relying-parties/authlib_app.py',
        'examples/relying-parties/openid-client.ts',
        'examples/relying-parties/mod_auth_openidc.conf',
        'examples/relying-parties/claims.cgi',
      ]),
    );
  });

  it.each(blocks.map((b) => [`${b.file}#${b.name}`, b] as const))('%s', (_, block) => {
    expect(block.code).toBe(recipeRegion(block.file, block.name));
  });
});
