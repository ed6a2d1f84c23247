import { mkdtempSync, readFileSync, existsSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import {
  bootstrap,
  judge,
  medianInterval,
  runUsability,
  spread,
  BOOTSTRAP,
  type Interval,
} from '../../../bench/lib/verdicts.js';
import { combineRuns, type RunInput } from '../../../bench/lib/targets.js';
import { report, runState, type RunRecord } from '../../../bench/lib/report.js';
import { phaseConfig, type BenchOptions } from '../../../bench/lib/options.js';
import type { CryptoRates } from '../../../bench/lib/evaluate.js';
import type { PhaseDetail } from '../../../bench/lib/measure.js';
import type { Phase } from '../../../bench/lib/load.js';

/**
 * The bench's statistics on fixed inputs (bench/README.md, "Reading the results": a target is met when its
 * 95 % interval lies wholly on its side, missed when wholly on the other, undecided when it straddles it;
 * a run whose RS256 rate moved by more than 10 % is not averaged in). No timing is measured here.
 */

/** A slice as bench/lib/measure.ts records it, with only what the statistics read set to something real. */
function slice(
  scenario: Phase,
  store: string,
  kind: 'ours' | 'baseline',
  round: number,
  o: { rps?: number; cpu: number; prepared?: Record<string, unknown> },
): PhaseDetail {
  return {
    scenario,
    round,
    store,
    kind,
    prepared: o.prepared ?? {},
    result: {
      ok: 100,
      errors: 0,
      elapsedMs: 1000,
      rps: o.rps ?? 100,
      p50: 1,
      p99: 2,
      mean: 1,
      httpRequests: 100,
      loadCpuMs: 10,
      extra: {},
    },
    serverCpuMs: o.cpu * 100,
    mainThreadCpuMsPerOp: null,
    syscallsPerOp: null,
    serverCpuMsPerOp: o.cpu,
    serverCpuMsPerHttpRequest: o.cpu,
    serverCores: 0.5,
    loadCores: 0.1,
    otherCores: 0.05,
    signs: {},
    signsPerOp: {},
    rssMb: 100,
    heapUsedMb: 50,
    window: { from: 0, to: 1 },
  };
}

/** Crypto prices with `rs256` ms per RS256 signature; an SD-JWT VC at 0.17 ms, a webhook signature at 0.02 ms. */
function rates(rs256: number): CryptoRates {
  const rate = (ms: number) => ({
    perSecond: 1000 / ms,
    cpuMsPerOp: ms,
    count: 1000,
    samples: [ms * 0.98, ms, ms * 1.02],
  });
  return {
    rs256: rate(rs256),
    rs256WebCrypto: rate(rs256 * 1.4),
    es256Sign: rate(0.03),
    es256Verify: rate(0.07),
    sdJwtVc: rate(0.17),
    webhookSignature: rate(0.02),
  };
}

/** A fixed wobble of ±2 % around 1 (no randomness in the inputs). */
const wobble = (i: number) => 1 + 0.02 * Math.sin(i * 1.7);
const ROUNDS = 12;

/** PAR rounds of one run: ours at `oursRps(i)`, the baseline at 1000 rps. */
function parRun(index: number, oursRps: (i: number) => number, rs256After = 0.27): RunRecord {
  const details: PhaseDetail[] = [];
  for (let r = 1; r <= ROUNDS; r++) {
    details.push(slice('par', 'memory', 'ours', r, { rps: oursRps(r), cpu: 0.3 }));
    details.push(slice('par', 'memory', 'baseline', r, { rps: 1000 * wobble(r + 5), cpu: 0.3 }));
  }
  return {
    index,
    at: '2026-12-03T00:00:00.000Z',
    seconds: 60,
    ratesBefore: rates(0.27),
    ratesAfter: rates(rs256After),
    ratesOtherBefore: 0,
    ratesOtherAfter: 0,
    details,
  };
}
/** Runs the report with its printed summary kept (not shown), and returns that text. */
function quietly(fn: () => void): string {
  const out: string[] = [];
  const spy = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    out.push(String(chunk));
    return true;
  });
  try {
    fn();
  } finally {
    spy.mockRestore();
  }
  return out.join('');
}

const input = (r: RunRecord): RunInput => ({
  index: r.index,
  details: r.details,
  ratesBefore: r.ratesBefore,
  ratesAfter: r.ratesAfter,
});

describe('bench statistics: intervals and verdicts (bench/README.md, "Reading the results")', () => {
  it('a clear win: PAR at 1.00 of the baseline over three runs is met (interval wholly >= 0.90)', () => {
    const runs = [1, 2, 3].map((k) => parRun(k, (i) => 1000 * wobble(i + k)));
    const [row] = combineRuns(runs.map(input), ['memory'], ['par']).rows;
    expect(row.runs).toBe(3);
    expect(row.ratio).toBeCloseTo(1, 1);
    expect(row.interval.ratio![0]).toBeGreaterThan(0.9);
    expect(row.target?.verdict).toBe('met');
    expect(row.target?.text).toBe('ratio >= 0.90');
  });

  it('a clear loss: PAR at 0.80 of the baseline is missed (interval wholly < 0.90)', () => {
    const runs = [1, 2, 3].map((k) => parRun(k, (i) => 800 * wobble(i + k)));
    const [row] = combineRuns(runs.map(input), ['memory'], ['par']).rows;
    expect(row.interval.ratio![1]).toBeLessThan(0.9);
    expect(row.target?.verdict).toBe('missed');
  });

  it('a straddle: rounds between 0.80 and 1.00 of the baseline leave the target undecided, with the spread that makes it so', () => {
    const runs = [1, 2, 3].map((k) => parRun(k, (i) => (i % 2 ? 800 : 1000) * wobble(i + k) + k * 10));
    const [row] = combineRuns(runs.map(input), ['memory'], ['par']).rows;
    const [lo, hi] = row.interval.ratio!;
    expect(lo).toBeLessThan(0.9);
    expect(hi).toBeGreaterThanOrEqual(0.9);
    expect(row.target?.verdict).toBe('undecided');
    expect(row.spread.ratio![0]).toBeLessThan(row.spread.ratio![1]); // the runs' medians differ
  });

  it('judges an interval against either side of a target, and gives no verdict without one', () => {
    expect(judge([0.91, 0.95], { atLeast: 0.9 })).toBe('met');
    expect(judge([0.85, 0.89], { atLeast: 0.9 })).toBe('missed');
    expect(judge([0.88, 0.93], { atLeast: 0.9 })).toBe('undecided');
    expect(judge([-0.4, -0.1], { atMost: 0 })).toBe('met');
    expect(judge([0.2, 0.9], { atMost: 0 })).toBe('missed');
    expect(judge([-0.2, 0.3], { atMost: 0 })).toBe('undecided');
    expect(judge(null, { atMost: 0 })).toBeNull();
  });

  it('is seeded: the same inputs give the same interval, and the interval holds the median', () => {
    const groups = [
      [3.1, 3.3, 2.9, 3.0, 3.4],
      [3.2, 3.0, 3.5, 2.8],
    ];
    const a = medianInterval(groups);
    const b = medianInterval(groups);
    expect(a).toEqual(b);
    expect(a![0]).toBeLessThanOrEqual(3.1);
    expect(a![1]).toBeGreaterThanOrEqual(3.1);
    const other = medianInterval(groups, { ...BOOTSTRAP, seed: BOOTSTRAP.seed + 1 });
    expect(other![0]).toBeGreaterThanOrEqual(2.8);
    expect(other![1]).toBeLessThanOrEqual(3.5);
  });

  it('draws from the rounds of every run together: a resample may hold more of one run than of another', () => {
    const seen = new Set<string>();
    bootstrap((draw) => {
      const d = draw([
        [1, 1, 1],
        [5, 5],
      ]);
      expect(d).toHaveLength(5);
      seen.add(
        d
          .slice()
          .sort((a, b) => a - b)
          .join(','),
      );
      return 0;
    });
    expect(seen).toContain('1,1,1,5,5');
    expect(seen).toContain('1,1,1,1,1');
    expect(seen).toContain('1,5,5,5,5');
    // so two runs that differ widen the interval beyond either run's own
    expect(
      medianInterval([
        [1, 1, 1],
        [5, 5],
      ]),
    ).toEqual([1, 5]);
    expect(spread([3, 1, 2])).toEqual([1, 3]);
    expect(spread([])).toBeNull();
  });
});

describe('bench statistics: the issuance allowance as an interval (bench/README.md, "Targets")', () => {
  /**
   * One run of issuance rounds: the baseline flow at 3.0 ms, wallet_steps 1.0, minting 0.1 and the status
   * entry 0.05 per offer, baseline discovery 0.14, the SD-JWT VC 0.17: an allowance of 5.96 ms.
   */
  function issuanceRun(index: number, ours: (i: number) => number): RunInput {
    const details: PhaseDetail[] = [];
    const prepared = { mintCpuMsPerOffer: 0.1, statusEntryCpuMsPerOffer: 0.05 };
    for (let r = 1; r <= ROUNDS; r++) {
      details.push(slice('discovery', 'memory', 'baseline', r, { cpu: 0.14 * wobble(r) }));
      details.push(slice('discovery', 'memory', 'ours', r, { cpu: 0.07 }));
      details.push(slice('issuance_flow', 'memory', 'ours', r, { cpu: ours(r) }));
      details.push(slice('issuance_flow', 'memory', 'baseline', r, { cpu: 3.0 * wobble(r + 3) }));
      details.push(slice('wallet_steps', 'memory', 'baseline', r, { cpu: 1.0 * wobble(r + 7), prepared }));
      details.push(slice('external_issuance_flow', 'memory', 'ours', r, { cpu: ours(r) + 0.5 }));
    }
    return { index, details, ratesBefore: rates(0.27), ratesAfter: rates(0.27) };
  }
  const judgeIssuance = (ours: (i: number, k: number) => number) => {
    const runs = [1, 2, 3].map((k) => issuanceRun(k, (i) => ours(i, k)));
    const { rows } = combineRuns(runs, ['memory'], ['discovery', 'issuance_flow', 'external_issuance_flow']);
    return {
      issuance: rows.find((r) => r.scenario === 'issuance_flow')!.target!,
      external: rows.find((r) => r.scenario === 'external_issuance_flow')!.target!,
    };
  };

  it('a clear win: ours at 5.0 ms against an allowance of 5.96 ms is met, each term with its spread', () => {
    const { issuance } = judgeIssuance((i, k) => 5.0 * wobble(i + k));
    expect(issuance.limit!.median).toBeCloseTo(5.96, 1);
    expect(issuance.value.interval![1]).toBeLessThan(0);
    expect(issuance.verdict).toBe('met');
    expect(Object.keys(issuance.terms!)).toEqual([
      'baselineFlowX1_5',
      'sdJwtVcSignature',
      'walletSteps',
      'offerByReference',
      'statusEntry',
      'offerMinting',
    ]);
    for (const term of Object.values(issuance.terms!)) {
      expect(term.spread).not.toBeNull();
      expect(term.interval).not.toBeNull();
    }
    // the allowance's interval follows from its terms' (their sum's redraws, not the sum of the intervals)
    const [lo, hi] = issuance.limit!.interval as Interval;
    expect(lo).toBeLessThan(5.96);
    expect(hi).toBeGreaterThan(5.96);
  });

  it('a clear loss: ours at 7.0 ms is missed, and so is the External flow at 7.5 ms against 5.98 ms', () => {
    const { issuance, external } = judgeIssuance((i, k) => 7.0 * wobble(i + k));
    expect(issuance.value.interval![0]).toBeGreaterThan(0);
    expect(issuance.verdict).toBe('missed');
    expect(external.verdict).toBe('missed');
    expect(external.limit!.median).toBeCloseTo(5.96 + 0.02, 1);
  });

  it('a straddle: rounds alternating between 5.3 and 6.6 ms leave it undecided', () => {
    const { issuance } = judgeIssuance((i, k) => (i % 2 ? 5.3 : 6.6) + k * 0.01);
    const [lo, hi] = issuance.value.interval!;
    expect(lo).toBeLessThan(0);
    expect(hi).toBeGreaterThan(0);
    expect(issuance.verdict).toBe('undecided');
  });
});

describe('bench: a run whose machine changed is flagged and not averaged in', () => {
  const dir = mkdtempSync(join(tmpdir(), 'bench-verdicts-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const opts = (results: string): BenchOptions => ({
    quick: true,
    interleave: true,
    rounds: ROUNDS,
    repeat: 2,
    sliceMs: 300,
    phases: phaseConfig(true, true, ROUNDS),
    concurrency: undefined,
    profileInterval: '--cpu-prof-interval=1000',
    comparisonFlags: [],
    gcBefore: false,
    profile: false,
    stores: undefined,
    scenarios: undefined,
    profileKinds: undefined,
    soakRequests: undefined,
    soakWait: undefined,
    redisUrl: 'redis://127.0.0.1:6379/0',
    runId: 'unit',
    results,
  });

  it('RS256 moving by more than 10 % from start to end makes a run unusable; 10 % or less does not', () => {
    expect(runUsability(3600, 3100).usable).toBe(false); // -13.9 %
    expect(runUsability(3600, 4000).usable).toBe(false); // +11.1 %
    expect(runUsability(3600, 3300).usable).toBe(true); // -8.3 %
    expect(runUsability(3600, 3600 * 0.9).usable).toBe(true);
    expect(runUsability(3600, 3300).moved).toBeCloseTo(-0.0833, 3);
    // rates are ms per signature: 0.27 -> 0.32 ms is 3,704 -> 3,125 signs per core-second
    expect(runState(parRun(1, () => 1000, 0.32)).usable).toBe(false);
  });

  it('the report leaves the flagged run out of the rows and says how many runs remain', () => {
    const flagged = parRun(1, (i) => 500 * wobble(i), 0.32); // ratio 0.5, on a machine that changed
    const steady = parRun(2, (i) => 1000 * wobble(i), 0.28); // ratio 1.0, RS256 within 4 %
    const printed = quietly(() =>
      report(opts(dir), { stores: ['memory'], scenarios: ['par'], runs: [flagged, steady], started: Date.now() }),
    );
    expect(printed).toMatch(/run 1: RS256 3704 -> 3125 signs per core-second \(-15\.6 %\).*UNUSABLE/);
    expect(printed).toContain('1 of 2 run(s) usable');
    expect(printed).toContain('quick verdict (1 usable run(s) of 2): no target missed');
    const rows = JSON.parse(readFileSync(join(dir, 'quick.json'), 'utf8'));
    expect(rows[0].runs).toBe(1);
    expect(rows[0].ratio).toBeCloseTo(1, 1);
    expect(rows[0].target.verdict).toBe('met');
    const details = JSON.parse(readFileSync(join(dir, 'quick-details.json'), 'utf8'));
    expect(details.runStates.map((s: { usable: boolean }) => s.usable)).toEqual([false, true]);
    expect(details.usableRuns).toEqual([2]);
    expect(existsSync(join(dir, 'latest.json'))).toBe(false); // a quick run never writes the recorded results
  });

  it('with no usable run there is no verdict, and the results files are left as they were', () => {
    const none = mkdtempSync(join(dir, 'none-'));
    const printed = quietly(() =>
      report(opts(none), {
        stores: ['memory'],
        scenarios: ['par'],
        runs: [parRun(1, () => 1000, 0.32), parRun(2, () => 1000, 0.2)],
        started: Date.now(),
      }),
    );
    expect(printed).toContain('0 of 2 run(s) usable');
    expect(printed).toContain('no usable run: no verdict');
    expect(existsSync(join(none, 'quick.json'))).toBe(false);
    const unusable = JSON.parse(readFileSync(join(none, 'unusable-details.json'), 'utf8'));
    expect(unusable.runStates.every((s: { usable: boolean }) => !s.usable)).toBe(true);
    expect(unusable.runs).toHaveLength(2);
  });

  it('a recorded run marks a target undecided on it and on the recorded run before it as undecided twice', () => {
    const recorded = mkdtempSync(join(dir, 'recorded-'));
    const straddle = (k: number) => parRun(k, (i) => (i % 2 ? 800 : 1000) * wobble(i + k));
    const o = { ...opts(recorded), quick: false };
    quietly(() => report(o, { stores: ['memory'], scenarios: ['par'], runs: [straddle(1)], started: Date.now() }));
    const first = JSON.parse(readFileSync(join(recorded, 'latest.json'), 'utf8'));
    expect(first[0].target.verdict).toBe('undecided');
    expect(first[0].target.undecidedTwice).toBeUndefined();
    const printed = quietly(() =>
      report(o, { stores: ['memory'], scenarios: ['par'], runs: [straddle(2)], started: Date.now() }),
    );
    expect(printed).toContain('undecided on the recorded run before too');
    const second = JSON.parse(readFileSync(join(recorded, 'latest.json'), 'utf8'));
    expect(second[0].target.verdict).toBe('undecided');
    expect(second[0].target.undecidedTwice).toBe(true);
    expect(second[0].spread.ratio).not.toBeNull();
  });
});
