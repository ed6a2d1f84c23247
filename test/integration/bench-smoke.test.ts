import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The bench's own smoke test (bench/README.md, "How to run"): the quick verdict, two whole runs, PAR on
 * the memory store only, the smallest run that has a target (111 s measured on this 2-core machine at a
 * load of 15; less on a quiet one). It checks that both runs ran, that each run's machine state was
 * judged, and that the verdicts (or, when the machine moved under every run, the absence of one) were
 * written, never what they are: no timing is asserted. It runs once, in the memory project: the bench's
 * Redis path is what .ci/run's BENCH_QUICK=1 run covers, every scenario on both stores. The results go to
 * a folder of its own (the recorded results are never touched), and our server runs from src/ (no build
 * into dist/).
 */
const run = promisify(execFile);
const store = 'memory';
const suite = process.env.TEST_STORE === 'redis' ? describe.skip : describe;

suite('npm run bench -- --quick --repeat 2 (PAR, memory store)', () => {
  let dir = '';
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'bench-smoke-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('runs twice, judges each run usable or not, and writes the quick verdict', { timeout: 300_000 }, async () => {
    const { stdout } = await run(
      process.execPath,
      [
        '--import',
        'tsx',
        'bench/run.ts',
        '--quick',
        '--repeat',
        '2',
        '--scenarios',
        'par',
        '--stores',
        store,
        '--from-src',
        '--results-dir',
        dir,
      ],
      { cwd: process.cwd(), maxBuffer: 16 * 1024 * 1024, timeout: 290_000 },
    );
    expect(stdout).toContain('1 of 2: ');
    expect(stdout).toContain('2 of 2: ');
    expect(stdout).toMatch(/run 1: RS256 \d+ -> \d+ signs per core-second .*: (usable|UNUSABLE)/);
    expect(stdout).toMatch(/run 2: RS256 \d+ -> \d+ signs per core-second .*: (usable|UNUSABLE)/);
    const usable = Number(/(\d) of 2 run\(s\) usable/.exec(stdout)?.[1]);
    expect(existsSync(join(dir, 'latest.json'))).toBe(false);
    if (usable === 0) {
      // a machine that moved under both runs: no verdict, the runs kept for reading
      expect(stdout).toContain('no usable run: no verdict');
      const unusable = JSON.parse(readFileSync(join(dir, 'unusable-details.json'), 'utf8'));
      expect(unusable.runs).toHaveLength(2);
      return;
    }
    expect(stdout).toMatch(/quick verdict \(\d usable run\(s\) of 2\)/);
    const rows = JSON.parse(readFileSync(join(dir, 'quick.json'), 'utf8'));
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ scenario: 'par', store, runs: usable });
    expect(rows[0].target.text).toBe('ratio >= 0.90');
    expect(['met', 'missed', 'undecided']).toContain(rows[0].target.verdict);
    const [lo, hi] = rows[0].interval.ratio;
    expect(lo).toBeLessThanOrEqual(hi);
    const details = JSON.parse(readFileSync(join(dir, 'quick-details.json'), 'utf8'));
    expect(details.runs).toHaveLength(2);
    expect(details.runStates).toHaveLength(2);
    for (const r of details.runs) {
      expect(r.ratesBefore.rs256.samples.length).toBeGreaterThan(0);
      expect(r.ratesAfter.rs256.cpuMsPerOp).toBeGreaterThan(0);
      // each slice carries the other processes' CPU during it
      expect(r.details.every((d: { otherCores: unknown }) => 'otherCores' in d)).toBe(true);
    }
  });
});
