// After tsc (npm run build): copies the files of every assets folder under src/ (the pages' stylesheets and
// browser scripts, read at run time) to the same place under dist/, which tsc does not do.
import { cpSync, readdirSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const src = join(root, 'src');
const dist = join(root, 'dist');

for (const entry of readdirSync(src, { recursive: true, withFileTypes: true })) {
  if (!entry.isDirectory() || entry.name !== 'assets') continue;
  const from = join(entry.parentPath, entry.name);
  const to = join(dist, relative(src, from));
  cpSync(from, to, { recursive: true });
  console.log(`copied ${relative(root, from)} to ${relative(root, to)}`);
}
