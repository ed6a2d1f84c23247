/**
 * The comparison's report over one or more runs (--repeat N): each run's machine state (RS256 at its start
 * and end, other processes' CPU during its slices) and whether it is usable; the usable runs combined into
 * rows with their spread, intervals and verdicts (./targets.ts); the printed table and verdicts; the
 * results files. A recorded run (not --quick) writes bench/results/latest.json and latest-details.json and
 * the README's results table; --quick writes quick.json and quick-details.json (git-ignored) and flags the
 * missed rows only. With no usable run, nothing is judged and neither file is replaced: the runs go to
 * unusable-details.json.
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { join, resolve } from 'node:path';
import { execFileSync } from 'node:child_process';
import type { Scenario } from './load.js';
import type { PhaseDetail } from './measure.js';
import { log, type BenchOptions } from './options.js';
import { combine, runRates, tokenSignatures, type CryptoRates } from './evaluate.js';
import { combineRuns, type Estimate, type Row, type RowTarget } from './targets.js';
import { BOOTSTRAP, RATE_TOLERANCE, median, runUsability } from './verdicts.js';
import { round } from './stats.js';
import { README_PATH, resultsBlock, updateReadme } from './resultsTable.js';

/** One whole run (compare.ts): its crypto prices before and after, and every slice. */
export interface RunRecord {
  index: number;
  at: string;
  seconds: number;
  ratesBefore: CryptoRates;
  ratesAfter: CryptoRates;
  /** other processes' load while the rates were measured, in cores */
  ratesOtherBefore: number | null;
  ratesOtherAfter: number | null;
  details: PhaseDetail[];
}

/** Slices during which other processes used more than this many cores are counted as noisy. */
const NOISY_CORES = 0.25;

/** What a run's machine was like: RS256 at its start and end, other processes' CPU during its slices. */
export function runState(run: RunRecord) {
  const rs256Before = 1000 / run.ratesBefore.rs256.cpuMsPerOp;
  const rs256After = 1000 / run.ratesAfter.rs256.cpuMsPerOp;
  const { moved, usable } = runUsability(rs256Before, rs256After);
  const other = run.details.map((d) => d.otherCores).filter((x): x is number => typeof x === 'number');
  return {
    index: run.index,
    rs256Before: round(rs256Before, 0),
    rs256After: round(rs256After, 0),
    rs256Moved: round(moved, 4),
    usable,
    otherCores: other.length
      ? {
          median: round(median(other), 2),
          max: round(Math.max(...other), 2),
          noisySlices: other.filter((x) => x > NOISY_CORES).length,
          slices: other.length,
        }
      : null,
    ratesOtherBefore: run.ratesOtherBefore === null ? null : round(run.ratesOtherBefore, 2),
    ratesOtherAfter: run.ratesOtherAfter === null ? null : round(run.ratesOtherAfter, 2),
  };
}
export type RunState = ReturnType<typeof runState>;

/** What was measured: the commit and whether src/ had uncommitted changes. */
function gitState(): { head?: string; srcDirty?: boolean } {
  try {
    const git = (args: string[]) =>
      execFileSync('git', args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    return {
      head: git(['rev-parse', '--short', 'HEAD']),
      srcDirty: git(['status', '--porcelain', '--', 'src']) !== '',
    };
  } catch {
    return {};
  }
}

const pct = (x: number) => `${x >= 0 ? '+' : ''}${(x * 100).toFixed(1)} %`;
function fmt(n: number | null | undefined, digits = 1, sign = false): string {
  if (n === null || n === undefined || Number.isNaN(n)) return '-';
  return `${sign && n >= 0 ? '+' : ''}${n.toFixed(digits)}`;
}
const fmtI = (i: [number, number] | null | undefined, digits = 2, sign = false) =>
  i ? `[${fmt(i[0], digits, sign)}, ${fmt(i[1], digits, sign)}]` : '-';
const fmtSpread = (i: [number, number] | null | undefined, digits = 2, sign = false) =>
  i ? `${fmt(i[0], digits, sign)}..${fmt(i[1], digits, sign)}` : '-';
const verdictText = (t: RowTarget | null) =>
  !t
    ? ''
    : t.verdict === null
      ? 'not evaluated'
      : t.verdict === 'missed'
        ? 'MISSED'
        : t.verdict === 'undecided' && t.undecidedTwice
          ? 'undecided (twice)'
          : t.verdict;

/** Scenarios bare oidc-provider has no counterpart for: their baseline columns read n/a. */
const OURS_ONLY = new Set<Scenario>([
  'external_issuance_flow',
  'identity_flow',
  'dc_api_verification_flow',
  'annex_c_verification_flow',
]);

function table(rows: Row[]): string {
  const head = [
    'scenario',
    'store',
    'ours rps',
    'p50 ms',
    'p99 ms',
    'cpu ms/op',
    'cpu 95 %',
    'base rps',
    'p50 ms',
    'p99 ms',
    'cpu ms/op',
    'ratio',
    'ratio runs',
    'ratio 95 %',
    'cpu ratio',
    'verdict',
  ];
  const body = rows.map((r) => [
    r.scenario,
    r.store,
    fmt(r.ours?.rps),
    fmt(r.ours?.p50_ms, 2),
    fmt(r.ours?.p99_ms, 2),
    fmt(r.ours?.cpu_ms_per_req, 3),
    fmtI(r.interval.ours_cpu_ms_per_req, 3),
    ...(OURS_ONLY.has(r.scenario)
      ? Array<string>(8).fill('n/a')
      : [
          fmt(r.baseline?.rps),
          fmt(r.baseline?.p50_ms, 2),
          fmt(r.baseline?.p99_ms, 2),
          fmt(r.baseline?.cpu_ms_per_req, 3),
          fmt(r.ratio, 3),
          fmtSpread(r.spread.ratio, 3),
          fmtI(r.interval.ratio, 3),
          fmt(r.ours && r.baseline ? r.baseline.cpu_ms_per_req / r.ours.cpu_ms_per_req : null, 2),
        ]),
    verdictText(r.target),
  ]);
  const all = [head, ...body];
  const w = head.map((_, c) => Math.max(...all.map((row) => row[c].length)));
  const line = (row: string[]) =>
    row.map((cell, c) => (c < 2 || c === row.length - 1 ? cell.padEnd(w[c]) : cell.padStart(w[c]))).join('  ');
  return [line(head), w.map((n) => '-'.repeat(n)).join('  '), ...body.map(line)].join('\n');
}

const TERM_NAMES: Record<string, string> = {
  baselineFlowX1_5: '1.5 x baseline issuance_flow',
  sdJwtVcSignature: 'SD-JWT VC signature',
  walletSteps: 'baseline wallet_steps',
  offerByReference: 'baseline discovery (offer GET)',
  statusEntry: 'status list entry',
  offerMinting: 'minting the offer',
  issuanceAllowance: "the issuance flow's allowance",
  webhookSignature: 'webhook signature',
};
const est = (e: Estimate | undefined, digits = 3, sign = false) =>
  e
    ? `${fmt(e.median, digits, sign)} (runs ${fmtSpread(e.spread, digits, sign)}; 95 % ${fmtI(e.interval, digits, sign)})`
    : '-';

/** One line per target (and the allowance's terms), each with its verdict. */
function targetLines(rows: Row[]): string[] {
  const out: string[] = [];
  for (const r of rows) {
    const t = r.target;
    if (!t) continue;
    const name = `  ${r.scenario.padEnd(24)} ${r.store.padEnd(6)}`;
    if (t.verdict === null) {
      out.push(`${name} ${t.text}: not evaluated (${t.notEvaluated ?? 'no interval'})`);
      continue;
    }
    const ratio = t.text.startsWith('ratio');
    const twice = t.undecidedTwice
      ? ', undecided on the recorded run before too: written as undecided, not tuned for'
      : '';
    out.push(
      `${name} ${t.text}: ${ratio ? 'ratio' : 'difference'} ${est(t.value, 3, !ratio)}: ${verdictText(t)}${twice}`,
    );
    if (t.ours && t.limit) out.push(`${' '.repeat(34)}ours ${est(t.ours)} ms against ${est(t.limit)} ms`);
    if (t.terms)
      out.push(
        `${' '.repeat(34)}terms: ${Object.entries(t.terms)
          .map(([k, e]) => `${TERM_NAMES[k] ?? k} ${est(e)}`)
          .join('; ')}`,
      );
  }
  return out;
}

/** The rows of the recorded run before this one, for "undecided twice in a row". */
function previousRows(file: string): { scenario: string; store: string; target?: { verdict?: string } }[] {
  try {
    const rows = JSON.parse(readFileSync(file, 'utf8')) as unknown;
    return Array.isArray(rows) ? (rows as { scenario: string; store: string }[]) : [];
  } catch {
    return [];
  }
}

/** Combines the runs, judges the targets, writes the results files and prints the summary. */
export function report(
  opts: BenchOptions,
  run: { stores: ('memory' | 'redis')[]; scenarios: Scenario[]; runs: RunRecord[]; started: number },
): void {
  const { stores, scenarios, runs, started } = run;
  const states = runs.map(runState);
  const usable = runs.filter((_, i) => states[i].usable);

  log('');
  log(
    `runs: ${runs.length}; a run whose RS256 signs per core-second moved by more than ${RATE_TOLERANCE * 100} % from its start to its end is unusable and not averaged in`,
  );
  for (const s of states)
    log(
      `  run ${s.index}: RS256 ${s.rs256Before} -> ${s.rs256After} signs per core-second (${pct(s.rs256Moved)}); other processes during its slices: ${s.otherCores ? `median ${s.otherCores.median} cores, max ${s.otherCores.max}, ${s.otherCores.noisySlices} of ${s.otherCores.slices} slices > ${NOISY_CORES}` : '?'}: ${s.usable ? 'usable' : `UNUSABLE (moved by more than ${RATE_TOLERANCE * 100} %), not averaged in`}`,
    );
  log(`${usable.length} of ${runs.length} run(s) usable`);

  const base = {
    runId: opts.runId,
    quick: opts.quick,
    at: new Date().toISOString(),
    seconds: Math.round((Date.now() - started) / 1000),
    machine: { cores: cpus().length, model: cpus()[0]?.model, node: process.version },
    serverFlags: opts.comparisonFlags,
    method: opts.interleave ? { interleaved: true, sliceMs: opts.sliceMs } : { interleaved: false },
    git: gitState(),
    phases: opts.phases,
    rounds: opts.rounds,
    repeat: runs.length,
    statistics: {
      interval: `percentile bootstrap over the rounds of every usable run, drawn from all runs together (a round's paired slices kept together); ${BOOTSTRAP.resamples} resamples, ${BOOTSTRAP.level * 100} %, seed ${BOOTSTRAP.seed} (pure-rand xoroshiro128+), quantiles by simple-statistics quantileSorted (type 7)`,
      usable: `RS256 signs per core-second moved by at most ${RATE_TOLERANCE * 100} % from the run's start to its end`,
    },
    runStates: states,
  };

  if (!usable.length) {
    const file = join(opts.results, 'unusable-details.json');
    writeFileSync(file, `${JSON.stringify({ ...base, runs }, null, 2)}\n`);
    log(
      `no usable run: no verdict. ${opts.quick ? 'quick.json' : 'latest.json'} and its details are left as they were; the runs are in ${file}`,
    );
    return;
  }

  const { rows, perRun } = combineRuns(
    usable.map((r) => ({ index: r.index, details: r.details, ratesBefore: r.ratesBefore, ratesAfter: r.ratesAfter })),
    stores,
    scenarios,
  );
  const name = opts.quick ? 'quick' : 'latest';
  const rowsFile = join(opts.results, `${name}.json`);
  if (!opts.quick) {
    const previous = previousRows(rowsFile);
    for (const r of rows) {
      if (r.target?.verdict !== 'undecided') continue;
      const before = previous.find((p) => p.scenario === r.scenario && p.store === r.store);
      if (before?.target?.verdict === 'undecided') r.target.undecidedTwice = true;
    }
  }
  const firstUsable = usable[0];
  const signatures = tokenSignatures(
    combine(firstUsable.details),
    runRates(firstUsable.ratesBefore, firstUsable.ratesAfter),
  );
  const rs256 = median(states.filter((s) => s.usable).map((s) => s.rs256Before));
  const details = {
    ...base,
    usableRuns: usable.map((r) => r.index),
    rs256SignsPerCoreSecond: round(rs256, 0),
    cryptoRates: firstUsable.ratesBefore,
    signatures,
    runs: runs.map((r, i) => ({
      ...r,
      state: states[i],
      ...(states[i].usable
        ? {
            rows: perRun.find((p) => p.index === r.index)?.rows,
            evaluations: perRun.find((p) => p.index === r.index)?.evaluations,
          }
        : {}),
    })),
  };
  writeFileSync(rowsFile, `${JSON.stringify(rows, null, 2)}\n`);
  writeFileSync(join(opts.results, `${name}-details.json`), `${JSON.stringify(details, null, 2)}\n`);
  const recordedHere = !opts.quick && resolve(opts.results) === resolve(join(process.cwd(), 'bench', 'results'));
  const readmeUpdated = recordedHere && updateReadme(README_PATH, resultsBlock(rows, details));

  log('');
  log(table(rows));
  log('');
  log(
    `ops: one request (discovery, par, token) or one complete flow (the *_flow rows; latency = the whole flow, for external_issuance_flow its webhook wait included); cpu = server process CPU (all threads) per op; each figure the median over ${usable.length} usable run(s) of the run's median of ${opts.rounds} round(s)${opts.interleave ? ' (interleaved slices)' : ''}; ratio = ours rps / baseline rps, "ratio runs" its runs' min..max; 95 % = bootstrap interval over the rounds of every usable run; cpu ratio = baseline cpu / ours cpu (less sensitive to other load on the machine)`,
  );
  log(
    `RS256 (2048-bit) on this machine: ${rs256.toFixed(0)} signs per CPU-second of one core (median of the usable runs' starts; crypto.sign loop)`,
  );
  for (const s of signatures)
    log(
      `  token ${s.kind.padEnd(8)} ${s.store.padEnd(6)}: ${s.countedPerResponse} RS256 signatures per response counted, ${s.decodedRs256JwtsPerResponse ?? '-'} distinct RS256 JWTs per response decoded${s.accessTokenIsIdToken ? ' (access_token = id_token)' : ''}; signing is ${(s.rs256ShareOfServerCpu * 100).toFixed(0)}% of the response's ${s.serverCpuMsPerResponse} ms CPU (run ${firstUsable.index})`,
    );
  log('');
  const judged = rows.filter((r) => r.target);
  if (opts.quick) {
    const missed = judged.filter((r) => r.target?.verdict === 'missed');
    log(
      `quick verdict (${usable.length} usable run(s) of ${runs.length}): ${missed.length ? `${missed.length} target(s) MISSED, look at them before a full run:` : `no target missed (of ${judged.length}); met and undecided are not listed: a quick run's intervals are wide, and only a full run decides`}`,
    );
    for (const line of targetLines(missed)) log(line);
  } else {
    log(
      `targets (${usable.length} usable run(s) of ${runs.length}): met = the 95 % interval wholly on the target's side, missed = wholly on the wrong side, undecided = it straddles the target`,
    );
    for (const line of targetLines(judged)) log(line);
  }
  log(
    `\nwrote ${join(opts.results, `${name}.json`)} and ${name}-details.json${readmeUpdated ? ', and the results table of bench/README.md' : ''} (${Math.round((Date.now() - started) / 1000)} s)`,
  );
}
