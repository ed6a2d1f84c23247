/**
 * Several runs combined: each row's figures are the median over the usable runs of each run's own (the
 * median of its rounds), with their spread (the runs' min to max) and a 95 % interval by bootstrap over the
 * rounds of every usable run (./verdicts.ts); each target gets one verdict from its interval:
 *
 * - PAR and token: the interval of ours rps / baseline rps (a round keeps its two slices together) against >= 0.90;
 * - issuance flow: the interval of ours CPU per flow minus the allowance, against <= 0: every term of the
 *   allowance is redrawn in the same resample (the baseline flow, wallet_steps, the minting and the status
 *   entry from the same rounds as ours, the baseline discovery from its rounds, the SD-JWT VC from the
 *   run's crypto measures), so the difference carries both sides' uncertainty;
 * - external issuance flow: ours minus (the issuance allowance + one webhook signature), the same way;
 * - identity and DC API flows: ours minus our verification flow's CPU (the same rounds), against <= 0.
 */
import type { Phase, Scenario } from './load.js';
import type { PhaseDetail } from './measure.js';
import {
  combine,
  evaluate,
  runRates,
  runRows,
  EXTERNAL_TARGET,
  ISSUANCE_TARGET,
  VERIFICATION_TARGETS,
  type CryptoRates,
  type Measured,
  type RunRow,
} from './evaluate.js';
import { round } from './stats.js';
import {
  bootstrap,
  bootstrapAll,
  judge,
  median,
  medianInterval,
  spread,
  targetText,
  type Draw,
  type Interval,
  type Target,
  type Verdict,
} from './verdicts.js';

/** A usable run's measurements. */
export interface RunInput {
  index: number;
  details: PhaseDetail[];
  ratesBefore: CryptoRates;
  ratesAfter: CryptoRates;
}

/** A figure over the runs: the median of the runs' values, their min to max, and its 95 % interval. */
export interface Estimate {
  median: number | null;
  spread: Interval | null;
  interval: Interval | null;
}

export interface RowTarget {
  /** what is judged, against what: "ratio >= 0.90", "ours CPU - allowance <= 0.00 ms" */
  text: string;
  /** the judged quantity */
  value: Estimate;
  verdict: Verdict | null;
  notEvaluated?: string;
  /** what ours is held to (the allowance, our verification flow's CPU), and its terms */
  limit?: Estimate;
  terms?: Record<string, Estimate>;
  /** ours CPU per flow, for reading beside the limit */
  ours?: Estimate;
  /** undecided on this recorded run and on the one before it (./report.ts reads the previous latest.json) */
  undecidedTwice?: boolean;
}

/** A row of latest.json. */
export interface Row extends RunRow {
  /** the usable runs the figures come from */
  runs: number;
  spread: Record<'ratio' | 'ours_cpu_ms_per_req' | 'baseline_cpu_ms_per_req', Interval | null>;
  interval: Record<'ratio' | 'ours_cpu_ms_per_req' | 'baseline_cpu_ms_per_req', Interval | null>;
  target: RowTarget | null;
}

const r3 = (x: number | null) => (x === null || !Number.isFinite(x) ? null : round(x, 3));
const r3i = (i: Interval | null): Interval | null => (i ? [round(i[0], 3), round(i[1], 3)] : null);
const estimate = (values: (number | null | undefined)[], interval: Interval | null): Estimate => {
  const v = values.filter((x): x is number => typeof x === 'number' && Number.isFinite(x));
  return { median: r3(v.length ? median(v) : null), spread: r3i(spread(v)), interval: r3i(interval) };
};
const defined = (xs: (number | undefined)[]) => xs.filter((x): x is number => x !== undefined && Number.isFinite(x));

/** The rounds of one server in one scenario and store of a run, by round number (only rounds that completed an operation). */
function roundsOf(run: RunInput, scenario: Phase, store: string, kind: string): Map<number, PhaseDetail> {
  return new Map(
    run.details
      .filter((d) => d.scenario === scenario && d.store === store && d.kind === kind && d.result.ok > 0)
      .map((d) => [d.round, d]),
  );
}

/** Each run's rounds of a scenario as items of several servers' values, one item per round number. */
function roundItems<K extends string>(
  runs: RunInput[],
  store: string,
  parts: Record<K, [Phase, 'ours' | 'baseline', (d: PhaseDetail) => number]>,
): Partial<Record<K, number>>[][] {
  return runs.map((run) => {
    const byPart = (Object.entries(parts) as [K, [Phase, 'ours' | 'baseline', (d: PhaseDetail) => number]][]).map(
      ([k, [scenario, kind, value]]) => [k, roundsOf(run, scenario, store, kind), value] as const,
    );
    const numbers = [...new Set(byPart.flatMap(([, m]) => [...m.keys()]))].sort((a, b) => a - b);
    return numbers.map((n) => {
      const item: Partial<Record<K, number>> = {};
      for (const [k, m, f] of byPart) {
        const d = m.get(n);
        if (d) item[k] = f(d);
      }
      return item;
    });
  });
}

const cpu = (d: PhaseDetail) => d.serverCpuMsPerOp;
const rps = (d: PhaseDetail) => d.result.rps;
const samplesOf = (runs: RunInput[], k: keyof CryptoRates) =>
  runs.map((r) => [...(r.ratesBefore[k].samples ?? []), ...(r.ratesAfter[k].samples ?? [])]);

/** The issuance allowance's terms and ours, from one draw (or, with `draw` the identity, from the data as it is). */
function issuanceDraw(
  draw: Draw,
  src: {
    rounds: Partial<Record<'ours' | 'base' | 'ws' | 'mint' | 'status' | 'ext', number>>[][];
    discovery: number[][];
    sdJwtVc: number[][];
    webhook: number[][];
  },
) {
  const items = draw(src.rounds);
  const pick = (k: 'ours' | 'base' | 'ws' | 'mint' | 'status' | 'ext') => median(defined(items.map((i) => i[k])));
  const orZero = (x: number) => (Number.isFinite(x) ? x : 0);
  const terms = {
    baselineFlowX1_5: 1.5 * pick('base'),
    sdJwtVcSignature: median(draw(src.sdJwtVc)),
    walletSteps: pick('ws'),
    offerByReference: median(draw(src.discovery)),
    statusEntry: orZero(pick('status')),
    offerMinting: orZero(pick('mint')),
  };
  const allowance = Object.values(terms).reduce((a, b) => a + b, 0);
  const webhookSignature = median(draw(src.webhook));
  return { terms, allowance, ours: pick('ours'), ext: pick('ext'), webhookSignature };
}

type Evaluation = Record<string, unknown>;

/** Combines the usable runs into latest.json's rows, each with its target's verdict. */
export function combineRuns(
  runs: RunInput[],
  stores: string[],
  scenarios: Scenario[],
): { rows: Row[]; perRun: { index: number; rows: RunRow[]; evaluations: Evaluation[] }[] } {
  const perRun = runs.map((run) => {
    const combined = combine(run.details);
    const rows = runRows(stores, scenarios, combined);
    const find = (scenario: Phase, store: string, kind: string) => combined.get(`${scenario}/${store}/${kind}`);
    const { evaluations } = evaluate(rows, find, run.details, runRates(run.ratesBefore, run.ratesAfter));
    return { index: run.index, rows, evaluations };
  });
  const rows: Row[] = [];
  for (const store of stores) {
    for (const scenario of scenarios) {
      const mine = perRun
        .map((p) => p.rows.find((r) => r.scenario === scenario && r.store === store))
        .filter((r): r is RunRow => r !== undefined);
      if (!mine.length) continue;
      const side = (k: 'ours' | 'baseline'): Measured | null => {
        const ms = mine.map((r) => r[k]).filter((m): m is Measured => m !== null);
        if (!ms.length) return null;
        const med = (f: (m: Measured) => number, digits: number) => round(median(ms.map(f)), digits);
        return {
          rps: med((m) => m.rps, 1),
          p50_ms: med((m) => m.p50_ms, 2),
          p99_ms: med((m) => m.p99_ms, 2),
          cpu_ms_per_req: med((m) => m.cpu_ms_per_req, 3),
        };
      };
      const ratios = mine.map((r) => r.ratio).filter((x): x is number => x !== null);
      const pairs = roundItems(runs, store, { o: [scenario, 'ours', rps], b: [scenario, 'baseline', rps] });
      const ratioInterval = ratios.length
        ? bootstrap((draw) => {
            const items = draw(pairs).filter((i) => i.o !== undefined && i.b !== undefined);
            return median(defined(items.map((i) => i.o))) / median(defined(items.map((i) => i.b)));
          })
        : null;
      const cpuGroups = (kind: 'ours' | 'baseline') =>
        runs.map((run) => [...roundsOf(run, scenario, store, kind).values()].map(cpu));
      const ours = side('ours');
      const baseline = side('baseline');
      rows.push({
        scenario,
        store: store as Row['store'],
        ours,
        baseline,
        ratio: ratios.length ? round(median(ratios), 3) : null,
        runs: mine.length,
        spread: {
          ratio: r3i(spread(ratios)),
          ours_cpu_ms_per_req: r3i(spread(mine.map((r) => r.ours?.cpu_ms_per_req ?? NaN))),
          baseline_cpu_ms_per_req: r3i(spread(mine.map((r) => r.baseline?.cpu_ms_per_req ?? NaN))),
        },
        interval: {
          ratio: r3i(ratioInterval),
          ours_cpu_ms_per_req: ours ? r3i(medianInterval(cpuGroups('ours'))) : null,
          baseline_cpu_ms_per_req: baseline ? r3i(medianInterval(cpuGroups('baseline'))) : null,
        },
        target: null,
      });
    }
  }
  for (const row of rows) row.target = rowTarget(row, runs, perRun);
  return { rows, perRun };
}

function rowTarget(row: Row, runs: RunInput[], perRun: { evaluations: Evaluation[] }[]): RowTarget | null {
  const { scenario, store } = row;
  if (scenario === 'par' || scenario === 'token') {
    if (row.ratio === null) return null;
    const t: Target = { atLeast: 0.9 };
    return {
      text: `ratio ${targetText(t)}`,
      value: { median: row.ratio, spread: row.spread.ratio, interval: row.interval.ratio },
      verdict: judge(row.interval.ratio, t),
    };
  }
  if (scenario === 'issuance_flow' || scenario === 'external_issuance_flow') {
    if (!row.ours) return null;
    const external = scenario === 'external_issuance_flow';
    const evals = perRun.map((p) =>
      p.evaluations.find((e) => e.target === (external ? EXTERNAL_TARGET : ISSUANCE_TARGET) && e.store === store),
    );
    const key = external ? 'externalAllowanceMs' : 'allowanceMs';
    const gap = evals.findIndex((e) => !e || e[key] === null || e[key] === undefined);
    const t: Target = { atMost: 0 };
    const text = `ours CPU - ${external ? "(the issuance flow's allowance + one webhook signature)" : 'allowance'} ${targetText(t)} ms`;
    if (gap >= 0)
      return {
        text,
        value: estimate([], null),
        verdict: null,
        notEvaluated: String(
          evals[gap]?.notEvaluated ?? `${external ? 'issuance_flow' : scenario} was not measured in run ${gap + 1}`,
        ),
      };
    const src = {
      rounds: roundItems(runs, store, {
        ours: ['issuance_flow', 'ours', cpu],
        base: ['issuance_flow', 'baseline', cpu],
        ws: ['wallet_steps', 'baseline', cpu],
        mint: ['wallet_steps', 'baseline', (d) => Number(d.prepared.mintCpuMsPerOffer)],
        status: ['wallet_steps', 'baseline', (d) => Number(d.prepared.statusEntryCpuMsPerOffer)],
        ext: ['external_issuance_flow', 'ours', cpu],
      }),
      discovery: runs.map((run) => [...roundsOf(run, 'discovery', store, 'baseline').values()].map(cpu)),
      sdJwtVc: samplesOf(runs, 'sdJwtVc'),
      webhook: samplesOf(runs, 'webhookSignature'),
    };
    // every figure from the same resamples: the difference carries the redraws of both sides
    const at = bootstrapAll((draw) => {
      const d = issuanceDraw(draw, src);
      const ours = external ? d.ext : d.ours;
      const limit = external ? d.allowance + d.webhookSignature : d.allowance;
      return {
        ...d.terms,
        issuanceAllowance: d.allowance,
        webhookSignature: d.webhookSignature,
        ours,
        limit,
        diff: ours - limit,
      };
    });
    const limits = evals.map((e) => e![key] as number);
    const oursPerRun = evals.map((e) => e!.oursCpuMsPerFlow as number);
    const diff = at.diff;
    const termValues = (f: (e: Evaluation) => number) => evals.map((e) => f(e!));
    const x = (e: Evaluation) => e.extra as Record<string, number>;
    const terms: Record<string, Estimate> = external
      ? {
          issuanceAllowance: estimate(
            termValues((e) => e.issuanceAllowanceMs as number),
            at.issuanceAllowance,
          ),
          webhookSignature: estimate(
            termValues((e) => e.webhookSignatureMs as number),
            at.webhookSignature,
          ),
        }
      : {
          baselineFlowX1_5: estimate(
            termValues((e) => 1.5 * (e.baselineCpuMsPerFlow as number)),
            at.baselineFlowX1_5,
          ),
          sdJwtVcSignature: estimate(
            termValues((e) => x(e).sdJwtVcSignatureMs),
            at.sdJwtVcSignature,
          ),
          walletSteps: estimate(
            termValues((e) => x(e).walletStepsMs),
            at.walletSteps,
          ),
          offerByReference: estimate(
            termValues((e) => x(e).offerByReferenceMs),
            at.offerByReference,
          ),
          statusEntry: estimate(
            termValues((e) => x(e).statusEntryMs),
            at.statusEntry,
          ),
          offerMinting: estimate(
            termValues((e) => x(e).offerMintingMs),
            at.offerMinting,
          ),
        };
    return {
      text,
      value: estimate(
        oursPerRun.map((o, i) => o - limits[i]),
        diff,
      ),
      verdict: judge(diff, t),
      ours: estimate(oursPerRun, at.ours),
      limit: estimate(limits, at.limit),
      terms,
    };
  }
  const verificationTarget = VERIFICATION_TARGETS[scenario as keyof typeof VERIFICATION_TARGETS];
  if (verificationTarget && row.ours) {
    const t: Target = { atMost: 0 };
    const text = `ours CPU - ours verification_flow CPU ${targetText(t)} ms`;
    const evals = perRun.map((p) => p.evaluations.find((e) => e.target === verificationTarget && e.store === store));
    const gap = evals.findIndex((e) => !e || e.oursVerificationCpuMsPerFlow === null);
    if (gap >= 0)
      return {
        text,
        value: estimate([], null),
        verdict: null,
        notEvaluated: String(evals[gap]?.notEvaluated ?? 'our verification_flow was not measured'),
      };
    const rounds = roundItems(runs, store, {
      ver: ['verification_flow', 'ours', cpu],
      mine: [scenario, 'ours', cpu],
    });
    const pick = (items: Partial<Record<'ver' | 'mine', number>>[], k: 'ver' | 'mine') =>
      median(defined(items.map((i) => i[k])));
    const at = bootstrapAll((draw) => {
      const items = draw(rounds);
      const mine = pick(items, 'mine');
      const ver = pick(items, 'ver');
      return { mine, ver, diff: mine - ver };
    });
    const limits = evals.map((e) => e!.oursVerificationCpuMsPerFlow as number);
    const oursPerRun = evals.map((e) => e!.oursCpuMsPerFlow as number);
    return {
      text,
      value: estimate(
        oursPerRun.map((o, i) => o - limits[i]),
        at.diff,
      ),
      verdict: judge(at.diff, t),
      ours: estimate(oursPerRun, at.mine),
      limit: estimate(limits, at.ver),
    };
  }
  return null;
}
