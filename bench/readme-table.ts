/**
 * `npx tsx bench/readme-table.ts`: writes bench/README.md's results table again from
 * bench/results/latest.json and latest-details.json (the report does it after every recorded run).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { README_PATH, resultsBlock, updateReadme, type RunSummary } from './lib/resultsTable.js';
import type { Row } from './lib/targets.js';

const dir = join(process.cwd(), 'bench', 'results');
const rows = JSON.parse(readFileSync(join(dir, 'latest.json'), 'utf8')) as Partial<Row>[];
const run = JSON.parse(readFileSync(join(dir, 'latest-details.json'), 'utf8')) as RunSummary;
if (!updateReadme(README_PATH, resultsBlock(rows, run))) {
  console.error(`${README_PATH} has no results-table markers: nothing written`);
  process.exit(1);
}
console.log(`wrote the results table of ${README_PATH}`);
