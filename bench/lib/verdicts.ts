/**
 * The bench's statistics, pure (no I/O): a confidence interval by percentile bootstrap over the rounds of
 * every usable run, a verdict of an interval against a target, and whether a run is usable at all.
 *
 * - Interval: 2,000 resamples; in each, as many rounds as all usable runs hold are drawn with replacement
 *   from all of them together (what a round pairs, such as ours and the baseline's slices of the same
 *   round, stays together), and the statistic is computed over the draw; the interval is the 2.5th and
 *   97.5th percentiles of the resampled statistics (simple-statistics' quantileSorted, R's type 7).
 *   Drawing across runs, not within each, lets a resample hold more of one run than of another, so a
 *   difference between runs widens the interval as the rounds' own noise does. The generator is seeded
 *   (pure-rand's xoroshiro128+), so the same inputs give the same interval.
 * - Verdict: met when the interval lies wholly on the target's right side, missed when wholly on its
 *   wrong side, undecided when it straddles the target.
 * - A run is unusable when its RS256 signs per core-second moved by more than 10 % from its start to its
 *   end: the machine changed under it, and its rounds are not averaged in.
 */
import { median as ssMedian, min, max, quantileSorted } from 'simple-statistics';
import { uniformInt } from 'pure-rand/distribution/uniformInt';
import { xoroshiro128plus } from 'pure-rand/generator/xoroshiro128plus';

export type Verdict = 'met' | 'missed' | 'undecided';
/** [low, high] */
export type Interval = [number, number];

export interface BootstrapOptions {
  resamples: number;
  /** two-sided confidence level */
  level: number;
  seed: number;
}

export const BOOTSTRAP: BootstrapOptions = { resamples: 2_000, level: 0.95, seed: 20_261_203 };

/** How much a run's RS256 rate may move from its start to its end and the run still count. */
export const RATE_TOLERANCE = 0.1;

/** Draws, from the items of all groups (runs) together, as many as they hold, with replacement. */
export type Draw = <T>(groups: T[][]) => T[];

/** The median, NaN for no values (a statistic over an empty draw is left out of the interval). */
export function median(xs: number[]): number {
  return xs.length ? ssMedian(xs) : NaN;
}

/** [min, max] of the values (a row's spread: of its runs' medians), null for none. */
export function spread(xs: number[]): Interval | null {
  const v = xs.filter(Number.isFinite);
  return v.length ? [min(v), max(v)] : null;
}

/**
 * The percentile bootstrap intervals of several statistics computed from the same resamples: `statistics`
 * draws its data through `draw` (several independent sources may each be drawn, each its own groups) and
 * returns every figure of that resample. A figure with no finite value in any resample gets null.
 */
export function bootstrapAll<K extends string>(
  statistics: (draw: Draw) => Record<K, number>,
  o: BootstrapOptions = BOOTSTRAP,
): Record<K, Interval | null> {
  const rng = xoroshiro128plus(o.seed);
  const draw: Draw = <T>(groups: T[][]) => {
    const pool = groups.flat();
    const out: T[] = [];
    for (let i = 0; i < pool.length; i++) out.push(pool[uniformInt(rng, 0, pool.length - 1)]);
    return out;
  };
  const values = new Map<K, number[]>();
  for (let b = 0; b < o.resamples; b++) {
    for (const [k, v] of Object.entries(statistics(draw)) as [K, number][]) {
      if (!values.has(k)) values.set(k, []);
      if (Number.isFinite(v)) values.get(k)!.push(v);
    }
  }
  const tail = (1 - o.level) / 2;
  const out = {} as Record<K, Interval | null>;
  for (const [k, v] of values) {
    v.sort((a, b) => a - b);
    out[k] = v.length ? [quantileSorted(v, tail), quantileSorted(v, 1 - tail)] : null;
  }
  return out;
}

/** The percentile bootstrap interval of one statistic (bootstrapAll); null if no resample gave a finite value. */
export function bootstrap(statistic: (draw: Draw) => number, o: BootstrapOptions = BOOTSTRAP): Interval | null {
  return bootstrapAll((draw) => ({ value: statistic(draw) }), o).value;
}

/** The interval of the median of values grouped by run. */
export function medianInterval(groups: number[][], o: BootstrapOptions = BOOTSTRAP): Interval | null {
  return bootstrap((draw) => median(draw(groups)), o);
}

export type Target = { atLeast: number } | { atMost: number };

/** The verdict of an interval against a target; null (no verdict) without an interval. */
export function judge(interval: Interval | null, target: Target): Verdict | null {
  if (!interval) return null;
  const [lo, hi] = interval;
  if ('atLeast' in target) return lo >= target.atLeast ? 'met' : hi < target.atLeast ? 'missed' : 'undecided';
  return hi <= target.atMost ? 'met' : lo > target.atMost ? 'missed' : 'undecided';
}

/** RS256 signs per core-second at a run's start and end: how much it moved, and whether the run counts. */
export function runUsability(
  before: number,
  after: number,
  tolerance = RATE_TOLERANCE,
): { moved: number; usable: boolean } {
  const moved = after / before - 1;
  return { moved, usable: Number.isFinite(moved) && Math.abs(moved) <= tolerance };
}

/** The target as the report writes it: ">= 0.90", "<= 0". */
export function targetText(t: Target, digits = 2): string {
  return 'atLeast' in t ? `>= ${t.atLeast.toFixed(digits)}` : `<= ${t.atMost.toFixed(digits)}`;
}
