/**
 * bench/README.md's results table, written from latest.json and latest-details.json: by the report after
 * every recorded run, or again by `npx tsx bench/readme-table.ts`. Only the text between the
 * results-table markers is replaced; what a reader writes around it stays.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Estimate, Row, RowTarget } from './targets.js';

/** The flows whose target is our verification flow's CPU (bench/lib/evaluate.ts VERIFICATION_TARGETS). */
const VERIFICATION_COMPANIONS = new Set<string | undefined>([
  'identity_flow',
  'dc_api_verification_flow',
  'annex_c_verification_flow',
]);

export const README_PATH = join(process.cwd(), 'bench', 'README.md');
const START = '<!-- results-table:start';
const END = '<!-- results-table:end -->';

/** What the block's first line says of the run (from latest-details.json; older files have fewer fields). */
export interface RunSummary {
  at?: string;
  repeat?: number;
  usableRuns?: number[];
  rounds?: number;
  machine?: { cores?: number; model?: string; node?: string };
  rs256SignsPerCoreSecond?: number;
  git?: { head?: string; srcDirty?: boolean };
}

const n = (x: number | null | undefined, digits: number, sign = false) =>
  x === null || x === undefined || !Number.isFinite(x) ? '—' : `${sign && x >= 0 ? '+' : ''}${x.toFixed(digits)}`;
const interval = (i: [number, number] | null | undefined, digits: number, sign = false) =>
  i ? `${n(i[0], digits, sign)} – ${n(i[1], digits, sign)}` : '—';
const verdict = (t: RowTarget | null | undefined) =>
  !t
    ? ''
    : t.verdict === null
      ? 'not evaluated'
      : t.verdict === 'undecided' && t.undecidedTwice
        ? '**undecided** (twice in a row)'
        : `**${t.verdict}**`;
const estimate = (e: Estimate | undefined, digits: number, sign = false) =>
  e
    ? `${n(e.median, digits, sign)} (runs ${interval(e.spread, digits, sign)}; 95 % ${interval(e.interval, digits, sign)})`
    : '—';

/** The markdown between the markers: the run, the rows, and each target with its interval and verdict. */
export function resultsBlock(rows: Partial<Row>[], run: RunSummary): string {
  const runs = run.usableRuns
    ? `${run.usableRuns.length} usable run(s) of ${run.repeat ?? '?'}`
    : 'a single run, recorded before runs were repeated and judged (no spread, intervals or verdicts)';
  const head = `Run of ${run.at?.slice(0, 10) ?? '?'}: ${runs}, each ${run.rounds ?? '?'} interleaved rounds; ${run.machine?.cores ?? '?'} cores (${run.machine?.model ?? '?'}), ${run.rs256SignsPerCoreSecond?.toLocaleString('en') ?? '?'} RS256 signs per core-second (median of the usable runs' starts), Node ${run.machine?.node ?? '?'}, commit ${run.git?.head ?? '?'}${run.git?.srcDirty ? ' (src/ with uncommitted changes)' : ''}. Each figure is the median over the usable runs of each run's median; "runs" is their min to max; 95 % is the bootstrap interval over the rounds of every usable run.`;
  const table = [
    '| scenario | store | ours rps | baseline rps | ratio | ratio runs | ratio 95 % | ours CPU ms/op | ours CPU 95 % | baseline CPU ms/op | verdict |',
    '|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|',
    ...rows.map(
      (r) =>
        `| ${r.scenario} | ${r.store} | ${n(r.ours?.rps, 1)} | ${n(r.baseline?.rps, 1)} | ${n(r.ratio, 3)} | ${interval(r.spread?.ratio, 3)} | ${interval(r.interval?.ratio, 3)} | ${n(r.ours?.cpu_ms_per_req, 3)} | ${interval(r.interval?.ours_cpu_ms_per_req, 3)} | ${n(r.baseline?.cpu_ms_per_req, 3)} | ${verdict(r.target)} |`,
    ),
  ];
  const targets = rows.filter((r) => r.target);
  const targetTable = targets.length
    ? [
        '',
        '| target | store | judged: median (runs; 95 %) | against | verdict |',
        '|---|---|---|---|---|',
        ...targets.map((r) => {
          const t = r.target!;
          const ratio = t.text.startsWith('ratio');
          const against = t.limit
            ? `ours ${estimate(t.ours, 3)} ms; ${VERIFICATION_COMPANIONS.has(r.scenario) ? 'our verification flow' : 'allowance'} ${estimate(t.limit, 3)} ms`
            : '';
          return `| ${r.scenario}: ${t.text} | ${r.store} | ${t.verdict === null ? `not evaluated: ${t.notEvaluated ?? ''}` : estimate(t.value, 3, !ratio)} | ${against} | ${verdict(t)} |`;
        }),
      ]
    : [];
  return [head, '', ...table, ...targetTable].join('\n');
}

/** Replaces the text between the markers in `file`; false (nothing written) if the markers are not there. */
export function updateReadme(file: string, block: string): boolean {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return false;
  }
  const start = text.indexOf(START);
  const end = text.indexOf(END);
  if (start < 0 || end < start) return false;
  const startLineEnd = text.indexOf('\n', start);
  writeFileSync(file, `${text.slice(0, startLineEnd + 1)}${block}\n${text.slice(end)}`);
  return true;
}
