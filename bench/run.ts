/**
 * `npm run bench`: throughput, latency and server CPU of our service against bare oidc-provider 9, on
 * the memory store and on Redis, in one run on this machine; writes bench/results/latest.json.
 *
 *   npm run bench                      every scenario, both stores, 12 interleaved rounds (≈ 6.5 minutes) bench/modes/compare.ts
 *   npm run bench -- --repeat 3        three whole runs: medians over runs, spread, intervals, verdicts   bench/lib/report.ts
 *   npm run bench -- --quick --repeat 3  the quick verdict: only the targets missed (a few minutes)
 *   BENCH_QUICK=1 npm run bench        every scenario briefly (seconds per phase), a CI smoke test
 *   npm run bench -- --sequential      whole phases one after the other instead of interleaved slices     bench/modes/sequential.ts
 *   npm run bench -- --soak            100,000 requests on the memory store: RSS/heap and store size      bench/modes/soak.ts
 *   npm run bench -- --profile         node --cpu-prof on our server during par and issuance_flow         bench/modes/profile.ts
 *   npm run bench -- --steps           server CPU per request of each flow (flows one at a time)          bench/modes/steps.ts
 *   options: --quick --rounds N --stores memory,redis --scenarios par,token --profile-kind ours,baseline --concurrency N --profile-interval µs
 *            --gc-before --from-src --soak-requests N --soak-wait S --server-flags '<node flags for both servers>' --memory-reducer --slice-ms N
 *            --repeat N --results-dir DIR
 *
 * This file parses the command line and dispatches; every server and the load generator run in their
 * own processes (bench/lib/children.ts). See bench/README.md for what is measured and how. No
 * thresholds fail the run: targets are reported.
 */
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { phaseConfig, type BenchOptions } from './lib/options.js';

const { values: args } = parseArgs({
  options: {
    quick: { type: 'boolean', default: false },
    soak: { type: 'boolean', default: false },
    profile: { type: 'boolean', default: false },
    stores: { type: 'string' },
    scenarios: { type: 'string' },
    'soak-requests': { type: 'string' },
    'soak-wait': { type: 'string' },
    'profile-kind': { type: 'string' },
    steps: { type: 'boolean', default: false },
    rounds: { type: 'string' },
    concurrency: { type: 'string' },
    'profile-interval': { type: 'string' },
    'gc-before': { type: 'boolean', default: false },
    'from-src': { type: 'boolean', default: false },
    'server-flags': { type: 'string' },
    'memory-reducer': { type: 'boolean', default: false },
    sequential: { type: 'boolean', default: false },
    'slice-ms': { type: 'string' },
    repeat: { type: 'string' },
    'results-dir': { type: 'string' },
  },
});

const quick = args.quick || process.env.BENCH_QUICK === '1';
/** interleaved slices unless --sequential (bench/README.md, "Interleaved slices") */
const interleave = !args.sequential;
const rounds = Math.max(
  1,
  Math.min(
    interleave ? 40 : 9,
    Number(args.rounds ?? process.env.BENCH_ROUNDS ?? (interleave ? (quick ? 2 : 12) : quick ? 1 : 3)) || 1,
  ),
);

const opts: BenchOptions = {
  quick,
  interleave,
  rounds,
  repeat: Math.max(1, Math.min(10, Number(args.repeat ?? process.env.BENCH_REPEAT ?? 1) || 1)),
  sliceMs: Math.max(100, Number(args['slice-ms'] ?? (quick ? 300 : 1_000)) || 1_000),
  phases: phaseConfig(quick, interleave, rounds),
  concurrency: args.concurrency ? Math.max(1, Number(args.concurrency) || 1) : undefined,
  // V8's default sampling interval is 1000 µs; --steps --profile uses 100
  profileInterval: `--cpu-prof-interval=${Math.max(50, Number(args['profile-interval'] ?? 1000) || 1000)}`,
  // both servers of the comparison alike: V8's memory reducer off unless --memory-reducer (bench/README.md,
  // "Server flags"); --gc-before: --expose-gc; --server-flags: more flags for a diagnosis. The soak keeps V8's defaults.
  comparisonFlags: [
    ...(args['memory-reducer'] ? [] : ['--no-memory-reducer']),
    ...(args['gc-before'] ? ['--expose-gc'] : []),
    ...(args['server-flags']?.split(/\s+/).filter(Boolean) ?? []),
  ],
  gcBefore: args['gc-before'],
  profile: args.profile,
  stores: args.stores?.split(','),
  scenarios: args.scenarios?.split(','),
  profileKinds: args['profile-kind']?.split(','),
  soakRequests: args['soak-requests'] ?? process.env.BENCH_SOAK_REQUESTS,
  soakWait: args['soak-wait'] ?? process.env.BENCH_SOAK_WAIT,
  redisUrl: process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/0',
  runId: randomBytes(4).toString('hex'),
  results: args['results-dir'] ? resolve(args['results-dir']) : join(process.cwd(), 'bench', 'results'),
};

// our server runs the compiled JavaScript, as production does (docs/operations.md); --from-src: the
// TypeScript through tsx, as `npm start` runs it
if (args['from-src']) {
  process.env.BENCH_OURS_FROM = 'src';
} else {
  process.env.BENCH_OURS_FROM = 'dist';
  execFileSync(
    process.execPath,
    [join(process.cwd(), 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'],
    { stdio: 'inherit' },
  );
  // as `npm run build` does: the files the pages read at run time (src/**/assets) next to the compiled code
  const copyAssets = join(process.cwd(), 'scripts', 'copy-assets.mjs');
  if (existsSync(copyAssets)) execFileSync(process.execPath, [copyAssets], { stdio: 'inherit' });
}

// only the chosen mode's modules are loaded
const soak = args.soak || process.env.BENCH_SOAK === '1';
const run: Promise<(o: BenchOptions) => Promise<void>> = args.steps
  ? import('./modes/steps.js').then((m) => m.stepsRun)
  : args.profile
    ? import('./modes/profile.js').then((m) => m.profileRun)
    : soak
      ? import('./modes/soak.js').then((m) => m.soakRun)
      : import('./modes/compare.js').then((m) => m.compareRun);
run
  .then((mode) => mode(opts))
  .then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
