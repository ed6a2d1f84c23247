import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

/**
 * The dev wallet stands apart from the service: no module under src/wallet imports anything of src/ outside
 * it (static, dynamic or re-exported), so that tests of "wallet against our verifier or issuer" never have our
 * own code checking itself. eslint.config.js says the same for static imports; this reads every import
 * the TypeScript preprocessor finds, dynamic ones included.
 */

const ROOT = resolve(import.meta.dirname, '../..');
const WALLET = join(ROOT, 'src', 'wallet');

function walletFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return walletFiles(path);
    return /\.(ts|mts|cts|js|mjs)$/.test(entry.name) ? [path] : [];
  });
}

/** Every module specifier a source file imports or re-exports, `import()` included. */
function importsOf(source: string): string[] {
  return ts.preProcessFile(source, true, true).importedFiles.map((f) => f.fileName);
}

/** The imports of `file` that leave src/wallet: relative paths resolving outside it, or absolute and src/ paths. */
function leavingImports(file: string, source: string): string[] {
  return importsOf(source).filter((specifier) => {
    if (specifier.startsWith('.')) {
      const target = relative(WALLET, resolve(dirname(file), specifier));
      return target.startsWith('..') || target.startsWith(sep);
    }
    return specifier.startsWith('/') || specifier.startsWith('src/') || specifier.startsWith('file:');
  });
}

describe('the dev wallet imports nothing of the service', () => {
  const files = walletFiles(WALLET);

  it('finds the wallet and its imports', () => {
    expect(files.map((f) => relative(WALLET, f))).toEqual(
      expect.arrayContaining(['cli.ts', 'holder.ts', 'presentation.ts', 'verifyCredential.ts']),
    );
    // the reader sees static, dynamic and re-exports: a guard that saw nothing would pass anything
    expect(
      importsOf("import { a } from './a.js';\nexport { b } from '../b.js';\nconst c = await import('../../c.js');"),
    ).toEqual(['./a.js', '../b.js', '../../c.js']);
    expect(leavingImports(join(WALLET, 'x.ts'), "const m = await import('../verification/mdoc.js');")).toEqual([
      '../verification/mdoc.js',
    ]);
    expect(leavingImports(join(WALLET, 'sub', 'x.ts'), "import { W } from '../errors.js';")).toEqual([]);
  });

  it.each(files.map((f) => [relative(ROOT, f), f]))('%s imports only libraries and src/wallet', (_name, file) => {
    expect(leavingImports(file, readFileSync(file, 'utf8'))).toEqual([]);
  });
});
