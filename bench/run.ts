/**
 * `npm run bench`: throughput, latency and server CPU of our service against bare oidc-provider 9, on
 * the memory store and on Redis, in one run on this machine; writes bench/results/latest.json.
 *
 *   npm run bench                      every scenario, both stores, 12 interleaved rounds (≈ 6 minutes)
 *   BENCH_QUICK=1 npm run bench        every scenario briefly (seconds per phase), a CI smoke test
 *   npm run bench -- --soak            100,000 requests on the memory store: RSS/heap and store size
 *   npm run bench -- --profile         node --cpu-prof on our server during par and issuance_flow
 *   npm run bench -- --steps           server CPU per request of each flow (flows one at a time)
 *   options: --quick --rounds N --stores memory,redis --scenarios par,token --profile-kind ours,baseline --concurrency N --profile-interval µs
 *            --gc-before --from-src --soak-requests N --soak-wait S --server-flags '<node flags for both servers>' --memory-reducer
 *            --slice-ms N --sequential (whole phases one after the other instead of interleaved slices)
 *
 * Every server and the load generator run in their own processes (bench/lib/children.ts); see
 * bench/README.md for what is measured and how. No thresholds fail the run: targets are reported.
 */
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';
import { loadKeys } from '../src/keys/keys.js';
import { ACCESS_TOKEN_LIFETIME } from '../src/issuance/walletIssuer.js';
import { STATUS_GRACE_SECONDS } from '../src/issuance/offers.js';
import { keyFiles, LIFETIMES, SOAK_LIFETIMES, type ServerSpec } from './lib/config.js';
import { cryptoRates, freePort, startLoad, startServer, type LoadHandle, type ServerHandle } from './lib/children.js';
import type { LoadSpec, Phase, PhaseResult, Scenario } from './lib/load.js';
import type { Snapshot } from './lib/serverCommon.js';
import { round } from './lib/stats.js';
import { report as profileReport, stepReport } from './lib/profile.js';
import { HttpClient } from './lib/http.js';
import * as flows from './lib/flows.js';

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
  },
});
/** --concurrency N: every phase with N workers (1: one request at a time, so a profile shows no request waiting for a core) */
const CONCURRENCY = args.concurrency ? Math.max(1, Number(args.concurrency) || 1) : undefined;
/** --profile-interval µs: the CPU profile's sampling interval (V8's default 1000 µs; --steps uses 100) */
const PROFILE_INTERVAL = `--cpu-prof-interval=${Math.max(50, Number(args['profile-interval'] ?? 1000) || 1000)}`;
const QUICK = args.quick || process.env.BENCH_QUICK === '1';
const SOAK = args.soak || process.env.BENCH_SOAK === '1';
const REDIS_URL = process.env.BENCH_REDIS_URL ?? 'redis://127.0.0.1:6379/0';
const RESULTS = join(process.cwd(), 'bench', 'results');
const RUN_ID = randomBytes(4).toString('hex');
/**
 * Node/V8 flags for both servers of the comparison alike. V8's memory reducer is off: it shrinks a heap
 * after some seconds of little allocation, and the server pays for that afterwards, for longer than a
 * phase's warm-up. Measuring one server at a time leaves each idle between its phases, and not equally
 * (the baseline alone also runs wallet_steps every round): with the reducer on, our server's CPU per flow
 * followed its idle gap (+12–23 % after ~21 s against ~7 s), with it off that excess is gone (bench/README.md,
 * "Both servers run without V8's memory reducer"). A server under sustained load, what the comparison is
 * about, does not idle that long.
 * `--memory-reducer` keeps it on (the method before 2026-11-23); the soak keeps V8's defaults, as operators run.
 * --server-flags: more flags for both (a diagnosis); --gc-before: --expose-gc.
 */
const COMPARISON_FLAGS = [
  ...(args['memory-reducer'] ? [] : ['--no-memory-reducer']),
  ...(args['gc-before'] ? ['--expose-gc'] : []),
  ...(args['server-flags']?.split(/\s+/).filter(Boolean) ?? []),
];
const ALL_SCENARIOS: Scenario[] = ['discovery', 'par', 'token', 'issuance_flow', 'verification_flow'];

/**
 * Per scenario: workers, warm-up, measured time per round, at most this many operations; token: codes
 * minted before each round. Each scenario runs ROUNDS rounds, ours and the baseline alternating, and a
 * row reports the median of its rounds (this machine is shared: see `other` cores in the log).
 * wallet_steps (baseline only, no row): the wallet's requests against bare oidc-provider's OpenID4VCI
 * issuer, after each round's issuance_flow; maxOps is also the pool of offers minted before each round.
 */
/**
 * Interleaved (the default since 2026-11-24): each scenario's load processes are prepared (pools,
 * warm-up) once, then the servers take turns in short slices (SLICE_MS, or a share of the pool), ours,
 * the baseline and, for issuance_flow, the baseline's wallet_steps; a round is one slice of each, and a
 * row is the median of the rounds. This machine's speed drifts by ±20 % within seconds (the same loop
 * takes 0.6 to 0.9 s of CPU: bench/README.md, "Interleaved slices"); phases of 14 s one after the other
 * put that drift between ours and the baseline, slices of a second hit both alike.
 * --sequential: whole phases one after the other, each with its own load process and warm-up (the method before).
 */
const INTERLEAVE = !args.sequential;
const ROUNDS = Math.max(1, Math.min(INTERLEAVE ? 40 : 9, Number(args.rounds ?? process.env.BENCH_ROUNDS ?? (INTERLEAVE ? (QUICK ? 2 : 12) : QUICK ? 1 : 3)) || 1));
/** --slice-ms: how long each server's turn lasts in an interleaved round (at most: a slice also ends when its share of the pool is used) */
const SLICE_MS = Math.max(100, Number(args['slice-ms'] ?? (QUICK ? 300 : 1_000)) || 1_000);
const PHASES: Record<Phase, { concurrency: number; warmupMs: number; durationMs: number; maxOps: number; tokenPool?: number }> = QUICK
  ? {
      discovery: { concurrency: 16, warmupMs: 300, durationMs: 1_000, maxOps: 20_000 },
      par: { concurrency: 16, warmupMs: 300, durationMs: 1_000, maxOps: 3_000 },
      token: { concurrency: 16, warmupMs: 200, durationMs: 2_000, maxOps: 0, tokenPool: 100 },
      issuance_flow: { concurrency: 8, warmupMs: 300, durationMs: 1_500, maxOps: 2_000 },
      verification_flow: { concurrency: 8, warmupMs: 300, durationMs: 1_500, maxOps: 2_000 },
      wallet_steps: { concurrency: 8, warmupMs: 300, durationMs: 1_500, maxOps: 600 },
    }
  : {
      discovery: { concurrency: 16, warmupMs: 1_000, durationMs: 3_000, maxOps: 100_000 },
      par: { concurrency: 16, warmupMs: 1_000, durationMs: 3_000, maxOps: 10_000 },
      token: { concurrency: 16, warmupMs: 1_000, durationMs: 10_000, maxOps: 0, tokenPool: INTERLEAVE ? 500 * ROUNDS : 1_500 },
      issuance_flow: { concurrency: 8, warmupMs: 10_000, durationMs: 4_000, maxOps: 50_000 },
      verification_flow: { concurrency: 8, warmupMs: 10_000, durationMs: 4_000, maxOps: 50_000 },
      wallet_steps: { concurrency: 8, warmupMs: 3_000, durationMs: 4_000, maxOps: 4_000 },
    };

interface Measured {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  cpu_ms_per_req: number;
}

interface Row {
  scenario: Scenario;
  store: 'memory' | 'redis';
  ours: Measured | null;
  baseline: Measured | null;
  ratio: number | null;
}

interface PhaseDetail {
  scenario: Phase;
  round: number;
  store: string;
  kind: 'ours' | 'baseline';
  prepared: Record<string, unknown>;
  result: PhaseResult;
  serverCpuMs: number;
  /** of serverCpuMsPerOp, the main (JavaScript) thread's share; the rest ran on libuv's pool (WebCrypto) and V8's helper threads (GC) */
  mainThreadCpuMsPerOp: number | null;
  /** the server's read- and write-type system calls per op (socket reads and writes: HTTP and Redis), from /proc/self/io */
  syscallsPerOp: { reads: number; writes: number } | null;
  serverCpuMsPerOp: number;
  serverCpuMsPerHttpRequest: number;
  /** server CPU / wall time: 1.0 = one core busy */
  serverCores: number;
  loadCores: number;
  /** CPU the rest of the machine (not this server, not the load process) used during the phase, in cores: noise */
  otherCores: number | null;
  signs: Record<string, number>;
  signsPerOp: Record<string, number>;
  rssMb: number;
  heapUsedMb: number;
  /** monotonic µs around the measured part (to cut a --cpu-prof profile to it) */
  window: { from: number; to: number };
}

const log = (s: string) => process.stdout.write(`${s}\n`);

/** What was measured: the commit and whether src/ had uncommitted changes. */
function gitState(): { head?: string; srcDirty?: boolean } {
  try {
    const head = execFileSync('git', ['rev-parse', '--short', 'HEAD'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim();
    const dirty = execFileSync('git', ['status', '--porcelain', '--', 'src'], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] }).trim() !== '';
    return { head, srcDirty: dirty };
  } catch {
    return {};
  }
}

/** The whole machine's busy CPU (ms, all cores) from /proc/stat, to see other processes' load during a phase; undefined off Linux. */
function machineBusyMs(): number | undefined {
  try {
    const [cpu] = readFileSync('/proc/stat', 'utf8').split('\n');
    const f = cpu.trim().split(/\s+/).slice(1).map(Number);
    const idle = (f[3] ?? 0) + (f[4] ?? 0);
    const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
    return ((total - idle) * 1000) / 100; // USER_HZ = 100
  } catch {
    return undefined;
  }
}

function cpuMs(a: Snapshot, b: Snapshot): number {
  return (b.cpu.user - a.cpu.user + (b.cpu.system - a.cpu.system)) / 1000;
}

function signDelta(a: Snapshot, b: Snapshot): Record<string, number> {
  const out: Record<string, number> = {};
  for (const [k, v] of Object.entries(b.signs)) {
    const d = v - (a.signs[k] ?? 0);
    if (d) out[k] = d;
  }
  return out;
}

interface PreparedPhase {
  server: ServerHandle;
  scenario: Phase;
  load: LoadHandle;
  prepared: Record<string, unknown>;
}

/** A fresh load process for one server and scenario, prepared: pools minted, warm-up done. */
async function preparePhase(server: ServerHandle, scenario: Phase): Promise<PreparedPhase> {
  const cfg = PHASES[scenario];
  const load = await startLoad();
  try {
    const spec: LoadSpec = {
      scenario,
      kind: server.spec.kind,
      url: server.url,
      concurrency: CONCURRENCY ?? cfg.concurrency,
      warmupMs: cfg.warmupMs,
      durationMs: cfg.durationMs,
      maxOps: cfg.maxOps,
      tokenPool: cfg.tokenPool ?? 0,
      mintConcurrency: 8,
    };
    return { server, scenario, load, prepared: await load.prepare(spec) };
  } catch (err) {
    await load.exit();
    throw err;
  }
}

/**
 * The measured part of a prepared phase (or, with `slice`, one slice of it): the server's CPU is sampled
 * right before and right after it.
 */
async function measurePhase(p: PreparedPhase, roundNo: number, slice?: { durationMs: number; maxOps: number }): Promise<PhaseDetail> {
  const { server, scenario, load, prepared } = p;
  if (args['gc-before']) await server.gc(); // both servers start the measured part with a collected heap
  const before = await server.snapshot();
  const busy0 = machineBusyMs();
  const result = await load.measure(undefined, undefined, slice);
  const busy1 = machineBusyMs();
  const after = await server.snapshot();
  const serverCpuMs = cpuMs(before, after);
  const signs = signDelta(before, after);
  const ops = Math.max(1, result.ok);
  const detail: PhaseDetail = {
    scenario,
    round: roundNo,
    store: server.spec.store,
    kind: server.spec.kind,
    prepared,
    result,
    serverCpuMs,
    serverCpuMsPerOp: serverCpuMs / ops,
    serverCpuMsPerHttpRequest: serverCpuMs / Math.max(1, result.httpRequests),
    mainThreadCpuMsPerOp: before.mainThreadCpuMs !== undefined && after.mainThreadCpuMs !== undefined ? round((after.mainThreadCpuMs - before.mainThreadCpuMs) / ops, 3) : null,
    syscallsPerOp:
      before.syscalls && after.syscalls
        ? { reads: round((after.syscalls.reads - before.syscalls.reads) / ops, 2), writes: round((after.syscalls.writes - before.syscalls.writes) / ops, 2) }
        : null,
    serverCores: serverCpuMs / result.elapsedMs,
    loadCores: result.loadCpuMs / result.elapsedMs,
    otherCores: busy0 !== undefined && busy1 !== undefined ? Math.max(0, (busy1 - busy0 - serverCpuMs - result.loadCpuMs) / result.elapsedMs) : null,
    signs,
    signsPerOp: Object.fromEntries(Object.entries(signs).map(([k, v]) => [k, round(v / ops, 3)])),
    rssMb: round(after.mem.rss / 2 ** 20, 1),
    heapUsedMb: round(after.mem.heapUsed / 2 ** 20, 1),
    window: { from: before.monoUs, to: after.monoUs },
  };
  const err = result.errors ? `  ERRORS ${result.errors}: ${result.firstError}` : '';
  log(
    `  ${scenario.padEnd(17)} ${server.spec.store.padEnd(6)} ${server.spec.kind.padEnd(8)} ${result.rps.toFixed(1).padStart(8)} /s  p50 ${result.p50.toFixed(2).padStart(7)} ms  p99 ${result.p99.toFixed(2).padStart(7)} ms  cpu ${detail.serverCpuMsPerOp.toFixed(3).padStart(7)} ms/op (main ${detail.mainThreadCpuMsPerOp?.toFixed(3) ?? '?'}, heap ${detail.heapUsedMb} MB${detail.syscallsPerOp ? `, syscalls r/w ${detail.syscallsPerOp.reads}/${detail.syscallsPerOp.writes}` : ''})  (cores: server ${detail.serverCores.toFixed(2)}, load ${detail.loadCores.toFixed(2)}, other ${detail.otherCores?.toFixed(2) ?? '?'})${err}`,
  );
  return detail;
}

/** One phase: a fresh load process prepares (pools, warm-up), the server's CPU is sampled around the measured part. */
async function phase(server: ServerHandle, scenario: Phase, roundNo = 1): Promise<PhaseDetail> {
  const p = await preparePhase(server, scenario);
  try {
    return await measurePhase(p, roundNo);
  } finally {
    await p.load.exit();
  }
}

/**
 * A scenario interleaved: ours, the baseline and (issuance_flow) the baseline's wallet_steps each get a
 * prepared load process, then take turns in slices, ROUNDS times, the order rotating each round.
 */
async function interleaved(scenario: Scenario, ours: ServerHandle, base: ServerHandle): Promise<PhaseDetail[]> {
  const entries: [ServerHandle, Phase][] = [
    [ours, scenario],
    [base, scenario],
  ];
  if (scenario === 'issuance_flow') entries.push([base, 'wallet_steps']);
  const prepared: PreparedPhase[] = [];
  try {
    for (const [server, phaseName] of entries) prepared.push(await preparePhase(server, phaseName));
    const out: PhaseDetail[] = [];
    for (let r = 1; r <= ROUNDS; r++) {
      const shift = (r - 1) % prepared.length;
      for (const p of [...prepared.slice(shift), ...prepared.slice(0, shift)]) {
        const cfg = PHASES[p.scenario];
        // a slice's share of the pool: what the warm-up left (90 %), spread over the rounds
        const pool = cfg.maxOps || cfg.tokenPool || 0;
        out.push(await measurePhase(p, r, { durationMs: SLICE_MS, maxOps: Math.max(1, Math.floor((pool * 0.9) / ROUNDS)) }));
      }
    }
    return out;
  } finally {
    for (const p of prepared) await p.load.exit();
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
}

async function redisReachable(): Promise<boolean> {
  const r = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 0, connectTimeout: 1_000, enableOfflineQueue: false, retryStrategy: () => null });
  r.on('error', () => {});
  try {
    await r.connect();
    await r.ping();
    return true;
  } catch {
    return false;
  } finally {
    r.disconnect();
  }
}

/** Removes this run's keys (its own prefix only; bounded SCAN). */
async function cleanRedis(prefix: string): Promise<number> {
  const r = new Redis(REDIS_URL, { lazyConnect: true, maxRetriesPerRequest: 1 });
  r.on('error', () => {});
  let removed = 0;
  try {
    await r.connect();
    let cursor = '0';
    for (let i = 0; i < 100_000; i++) {
      const [next, keys] = await r.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 2_000);
      if (keys.length) removed += await r.unlink(...keys);
      cursor = next;
      if (cursor === '0') break;
    }
  } finally {
    r.disconnect();
  }
  return removed;
}

async function makeKeys(): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'vc-bench-keys-'));
  await loadKeys({ ...keyFiles(dir), generate: true }, dir);
  return dir;
}

async function serverSpec(kind: 'ours' | 'baseline', store: 'memory' | 'redis', keyDir: string, lifetimes = LIFETIMES): Promise<ServerSpec> {
  return { kind, store, redisUrl: REDIS_URL, redisPrefix: `bench:${RUN_ID}:${kind}:`, keyDir, lifetimes, port: await freePort() };
}

function fmt(n: number | null | undefined, digits = 1): string {
  return n === null || n === undefined || Number.isNaN(n) ? '-' : n.toFixed(digits);
}

function table(rows: Row[], targets: Map<string, string>): string {
  const head = ['scenario', 'store', 'ours rps', 'p50 ms', 'p99 ms', 'cpu ms/op', 'base rps', 'p50 ms', 'p99 ms', 'cpu ms/op', 'ratio', 'cpu ratio', 'target'];
  const body = rows.map((r) => [
    r.scenario,
    r.store,
    fmt(r.ours?.rps),
    fmt(r.ours?.p50_ms, 2),
    fmt(r.ours?.p99_ms, 2),
    fmt(r.ours?.cpu_ms_per_req, 3),
    fmt(r.baseline?.rps),
    fmt(r.baseline?.p50_ms, 2),
    fmt(r.baseline?.p99_ms, 2),
    fmt(r.baseline?.cpu_ms_per_req, 3),
    fmt(r.ratio, 2),
    fmt(r.ours && r.baseline ? r.baseline.cpu_ms_per_req / r.ours.cpu_ms_per_req : null, 2),
    targets.get(`${r.scenario}/${r.store}`) ?? '',
  ]);
  const all = [head, ...body];
  const w = head.map((_, c) => Math.max(...all.map((row) => row[c].length)));
  const line = (row: string[]) => row.map((cell, c) => (c < 2 || c === row.length - 1 ? cell.padEnd(w[c]) : cell.padStart(w[c]))).join('  ');
  return [line(head), w.map((n) => '-'.repeat(n)).join('  '), ...body.map(line)].join('\n');
}

async function mainRun(): Promise<void> {
  const stores = (args.stores?.split(',') ?? ['memory', 'redis']) as ('memory' | 'redis')[];
  const scenarios = (args.scenarios?.split(',') ?? ALL_SCENARIOS) as Scenario[];
  for (const s of scenarios) if (!ALL_SCENARIOS.includes(s)) throw new Error(`unknown scenario ${s}`);
  // the issuance flow's allowance prices the offer-by-reference GET with the baseline's discovery request
  // (the wallet's other requests with its wallet_steps phase, run after each issuance_flow round); the
  // previous approximation, reported next to it, also needs the baseline's token request
  if (scenarios.includes('issuance_flow')) {
    const missing = (['discovery', 'token'] as Scenario[]).filter((s) => !scenarios.includes(s));
    if (missing.length) log(`also running ${missing.join(' and ')}: the issuance flow's allowance (discovery) and its previous approximation (discovery, token) are priced with them`);
    scenarios.unshift(...missing);
  }
  mkdirSync(RESULTS, { recursive: true });
  const started = Date.now();
  log(
    `method: ${INTERLEAVE ? `interleaved: ${ROUNDS} rounds, each server in turn for a slice of at most ${SLICE_MS} ms (--sequential: whole phases one after the other)` : `sequential: ${ROUNDS} rounds of whole phases`}`,
  );
  log(`bench ${QUICK ? '(quick) ' : ''}run ${RUN_ID}: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), node ${process.version}, load average ${loadavg().map((x) => x.toFixed(2)).join(' ')}`);

  log('machine limits (one core):');
  const busyBefore = machineBusyMs();
  const ratesStart = Date.now();
  const rates = await cryptoRates(QUICK ? 300 : 2_000);
  const busyAfter = machineBusyMs();
  const ratesOther = busyBefore !== undefined && busyAfter !== undefined ? Math.max(0, (busyAfter - busyBefore) / (Date.now() - ratesStart) - 1) : null;
  log(`  RS256 crypto.sign (2048-bit): ${(1000 / rates.rs256.cpuMsPerOp).toFixed(0)} signs per CPU-second (${rates.rs256.cpuMsPerOp.toFixed(3)} ms each), ${rates.rs256.perSecond.toFixed(0)} per wall-clock second (other load on the machine meanwhile: ${ratesOther?.toFixed(2) ?? '?'} cores); via WebCrypto as jose calls it: ${rates.rs256WebCrypto.cpuMsPerOp.toFixed(3)} ms CPU per sign`);
  log(`  ES256 sign ${rates.es256Sign.cpuMsPerOp.toFixed(3)} ms, verify ${rates.es256Verify.cpuMsPerOp.toFixed(3)} ms; one SD-JWT VC (src/issuance/sdJwtVc.ts) ${rates.sdJwtVc.cpuMsPerOp.toFixed(3)} ms CPU`);

  const keyDir = await makeKeys();
  const details: PhaseDetail[] = [];
  const redisOk = stores.includes('redis') ? await redisReachable() : false;
  if (stores.includes('redis') && !redisOk) log(`Redis at ${REDIS_URL} is not reachable: the redis rows are skipped`);

  for (const store of stores) {
    if (store === 'redis' && !redisOk) continue;
    log(`store ${store}: both servers run with ${COMPARISON_FLAGS.join(' ') || "V8's defaults"}`);
    const flags = { nodeFlags: COMPARISON_FLAGS };
    const ours = await startServer(await serverSpec('ours', store, keyDir), flags);
    const base = await startServer(await serverSpec('baseline', store, keyDir), flags);
    try {
      // ours and the baseline back to back, alternating which goes first, so that drift on the machine hits both
      for (const scenario of scenarios) {
        if (INTERLEAVE) {
          details.push(...(await interleaved(scenario, ours, base)));
          continue;
        }
        for (let r = 1; r <= ROUNDS; r++) {
          for (const server of r % 2 === 1 ? [ours, base] : [base, ours]) details.push(await phase(server, scenario, r));
          // what bare oidc-provider spends serving the wallet's requests: the allowance's price for them (same store, same round)
          if (scenario === 'issuance_flow') details.push(await phase(base, 'wallet_steps', r));
        }
      }
    } finally {
      await ours.stop();
      await base.stop();
      if (store === 'redis') {
        const removed = (await cleanRedis(ours.spec.redisPrefix)) + (await cleanRedis(base.spec.redisPrefix));
        log(`  removed this run's ${removed} Redis keys (prefix bench:${RUN_ID}:)`);
      }
    }
  }
  rmSync(keyDir, { recursive: true, force: true });

  /** A scenario's rounds for one server, combined: the median of each measure. */
  const combined = new Map<string, { m: Measured; cpu: number; rounds: PhaseDetail[] }>();
  for (const d of details) {
    const key = `${d.scenario}/${d.store}/${d.kind}`;
    if (combined.has(key)) continue;
    const rounds = details.filter((x) => x.scenario === d.scenario && x.store === d.store && x.kind === d.kind && x.result.ok > 0);
    if (!rounds.length) continue;
    const m: Measured = {
      rps: round(median(rounds.map((x) => x.result.rps)), 1),
      p50_ms: round(median(rounds.map((x) => x.result.p50)), 2),
      p99_ms: round(median(rounds.map((x) => x.result.p99)), 2),
      cpu_ms_per_req: round(median(rounds.map((x) => x.serverCpuMsPerOp)), 3),
    };
    combined.set(key, { m, cpu: m.cpu_ms_per_req, rounds });
  }
  const find = (scenario: Phase, store: string, kind: string) => combined.get(`${scenario}/${store}/${kind}`);
  const rows: Row[] = [];
  for (const store of stores) {
    for (const scenario of scenarios) {
      const o = find(scenario, store, 'ours');
      const b = find(scenario, store, 'baseline');
      if (!o && !b) continue;
      const ours = o?.m ?? null;
      const baseline = b?.m ?? null;
      rows.push({ scenario, store, ours, baseline, ratio: ours && baseline ? round(ours.rps / baseline.rps, 3) : null });
    }
  }

  // targets
  const targets = new Map<string, string>();
  const evaluations: Record<string, unknown>[] = [];
  for (const r of rows) {
    if ((r.scenario === 'par' || r.scenario === 'token') && r.ratio !== null) {
      const pass = r.ratio >= 0.9;
      targets.set(`${r.scenario}/${r.store}`, `>=0.90: ${pass ? 'met' : 'MISSED'}`);
      evaluations.push({ target: `${r.scenario} throughput >= 0.9 x bare oidc-provider`, store: r.store, ratio: r.ratio, met: pass });
    }
    if (r.scenario === 'issuance_flow' && r.ours && r.baseline) {
      // allowance: 1.5 x the baseline code flow + the unavoidable extra work, each priced on this machine,
      // same run, same store: one SD-JWT VC signature, and the wallet's requests at what bare oidc-provider
      // spends serving them (its wallet_steps phase) + one bare discovery request for the offer-by-reference
      // GET (bare oidc-provider has no such endpoint)
      const disc = find('discovery', r.store, 'baseline');
      const tok = find('token', r.store, 'baseline');
      const ws = find('wallet_steps', r.store, 'baseline');
      const wsRounds = details.filter((d) => d.scenario === 'wallet_steps' && d.store === r.store);
      const wsErrors = wsRounds.reduce((a, d) => a + d.result.errors, 0);
      const sdJwtVc = rates.sdJwtVc.cpuMsPerOp;
      // the previous approximation, kept for comparison: 4 discovery requests + a token request minus its
      // RS256 signature + one ES256 verification with a pre-imported key
      const previousWalletRequests = disc && tok ? 4 * disc.cpu + Math.max(0, tok.cpu - rates.rs256WebCrypto.cpuMsPerOp) + rates.es256Verify.cpuMsPerOp : null;
      const previousAllowance = previousWalletRequests !== null ? 1.5 * r.baseline.cpu_ms_per_req + sdJwtVc + previousWalletRequests : null;
      const notEvaluated = !ws
        ? 'wallet_steps was not measured (no round completed an operation)'
        : wsErrors
          ? `wallet_steps had ${wsErrors} failed operation(s): ${wsRounds.find((d) => d.result.firstError)?.result.firstError ?? ''}`
          : !disc
            ? 'the baseline discovery request was not measured'
            : undefined;
      const walletRequests = ws && disc ? ws.cpu + disc.cpu : null;
      // minting the offer the wallet redeems (a Grant and a PreAuthorizedCode): bare oidc-provider's CPU per offer,
      // measured around its minting in the prepare step of each wallet_steps round (ours mints on the prompt page)
      const mints = wsRounds.map((d) => Number(d.prepared.mintCpuMsPerOffer)).filter((x) => Number.isFinite(x));
      const offerMinting = mints.length ? median(mints) : 0;
      const withoutMinting = notEvaluated === undefined && walletRequests !== null ? 1.5 * r.baseline.cpu_ms_per_req + sdJwtVc + walletRequests : null;
      const allowance = withoutMinting !== null ? withoutMinting + offerMinting : null;
      const pass = allowance !== null ? r.ours.cpu_ms_per_req <= allowance : null;
      targets.set(`${r.scenario}/${r.store}`, allowance !== null ? `cpu <= ${allowance.toFixed(2)}: ${pass ? 'met' : 'MISSED'}` : 'not evaluated');
      evaluations.push({
        target: 'issuance flow CPU <= 1.5 x baseline code flow + unavoidable extra work',
        store: r.store,
        oursCpuMsPerFlow: r.ours.cpu_ms_per_req,
        baselineCpuMsPerFlow: r.baseline.cpu_ms_per_req,
        extra: {
          sdJwtVcSignatureMs: round(sdJwtVc, 3),
          walletStepsMs: ws ? ws.cpu : null,
          offerByReferenceMs: disc ? disc.cpu : null,
          walletRequestsMs: walletRequests !== null ? round(walletRequests, 3) : null,
          offerMintingMs: round(offerMinting, 3),
          walletRequestsPricing:
            "measured: bare oidc-provider 9's OpenID4VCI issuer serving the wallet's requests (baseline phase wallet_steps, CPU per operation: credential issuer metadata, authorization server metadata, token with the pre-authorized code and tx_code, nonce, credential with an ES256 proof whose embedded JWK is imported and verified; the credential itself a fixed string, its signature priced apart) + one bare discovery request for the offer-by-reference GET (bare oidc-provider has no such endpoint)",
        },
        allowanceMs: allowance !== null ? round(allowance, 3) : null,
        allowanceWithoutMintingMs: withoutMinting !== null ? round(withoutMinting, 3) : null,
        metWithoutMinting: withoutMinting !== null ? r.ours.cpu_ms_per_req <= withoutMinting : null,
        ratioToBaseline: round(r.ours.cpu_ms_per_req / r.baseline.cpu_ms_per_req, 2),
        met: pass,
        ...(notEvaluated !== undefined ? { notEvaluated } : {}),
        previousApproximationMs: previousAllowance !== null ? round(previousAllowance, 3) : null,
        previousWalletRequestsMs: previousWalletRequests !== null ? round(previousWalletRequests, 3) : null,
        previousWalletRequestsPricing:
          '4 x bare oidc-provider discovery request (2 metadata GETs, nonce, credential request floor) + bare token request minus its RS256 signature (the pre-authorized code redemption) + one ES256 verification with a pre-imported key (the proof)',
      });
    }
  }

  // RS256 signatures per token response: counted (wrapped subtle.sign / crypto.sign in the server) and decoded (the responses)
  const signatures = [...combined.values()]
    .filter((c) => c.rounds[0].scenario === 'token')
    .map((c) => {
      const ok = c.rounds.reduce((a, d) => a + d.result.ok, 0);
      const rs256 = c.rounds.reduce((a, d) => a + (d.signs.RS256 ?? 0), 0);
      const perResponse = rs256 / Math.max(1, ok);
      const decoded = c.rounds.map((d) => d.result.extra.rs256JwtsPerResponse as number | null).filter((x): x is number => x !== null);
      return {
        store: c.rounds[0].store,
        kind: c.rounds[0].kind,
        responses: ok,
        countedPerResponse: round(perResponse, 3),
        decodedRs256JwtsPerResponse: decoded.length ? round(median(decoded), 3) : null,
        accessTokenIsIdToken: c.rounds.every((d) => d.result.extra.accessTokenIsIdToken === true),
        tokenRps: c.m.rps,
        shareOfOneCoreRs256Limit: round((c.m.rps * perResponse * rates.rs256.cpuMsPerOp) / 1000, 3),
        rs256ShareOfServerCpu: round((perResponse * rates.rs256WebCrypto.cpuMsPerOp) / c.cpu, 3),
        serverCpuMsPerResponse: c.cpu,
      };
    });

  const output = rows;
  writeFileSync(join(RESULTS, 'latest.json'), `${JSON.stringify(output, null, 2)}\n`);
  const detailFile = join(RESULTS, 'latest-details.json');
  writeFileSync(
    detailFile,
    `${JSON.stringify({ runId: RUN_ID, quick: QUICK, at: new Date().toISOString(), seconds: Math.round((Date.now() - started) / 1000), machine: { cores: cpus().length, model: cpus()[0]?.model, node: process.version }, serverFlags: COMPARISON_FLAGS, method: INTERLEAVE ? { interleaved: true, sliceMs: SLICE_MS } : { interleaved: false }, git: gitState(), phases: PHASES, cryptoRates: rates, cryptoRatesOtherCores: ratesOther, rs256SignsPerCoreSecond: round(1000 / rates.rs256.cpuMsPerOp, 0), rounds: ROUNDS, signatures, evaluations, details }, null, 2)}\n`,
  );

  log('');
  log(table(rows, targets));
  log('');
  log(`ops: one request (discovery, par, token) or one complete flow (issuance_flow, verification_flow; latency = the whole flow); cpu = server process CPU (all threads) per op; medians of ${ROUNDS} round(s)${INTERLEAVE ? ' (interleaved slices)' : ''}; ratio = ours rps / baseline rps; cpu ratio = baseline cpu / ours cpu (the throughput ratio a CPU-bound server would show, less sensitive to other load on the machine)`);
  const noisy = details.filter((d) => (d.otherCores ?? 0) > 0.25);
  if (noisy.length) log(`noise: other processes used > 0.25 cores during ${noisy.map((d) => `${d.scenario}/${d.store}/${d.kind} (${d.otherCores!.toFixed(2)})`).join(', ')}; compare those rows with care`);
  log(`RS256 (2048-bit) on this machine: ${(1000 / rates.rs256.cpuMsPerOp).toFixed(0)} signs per CPU-second of one core (crypto.sign loop; ${rates.rs256.perSecond.toFixed(0)} per wall-clock second)`);
  for (const s of signatures) {
    log(
      `  token ${s.kind.padEnd(8)} ${s.store.padEnd(6)}: ${s.countedPerResponse} RS256 signatures per response counted, ${s.decodedRs256JwtsPerResponse ?? '-'} distinct RS256 JWTs per response decoded${s.accessTokenIsIdToken ? ' (access_token = id_token)' : ''}; ${s.tokenRps}/s = ${(s.shareOfOneCoreRs256Limit * 100).toFixed(1)}% of one core's RS256 limit; signing is ${(s.rs256ShareOfServerCpu * 100).toFixed(0)}% of the response's ${s.serverCpuMsPerResponse} ms CPU`,
    );
  }
  for (const e of evaluations) {
    if (e.allowanceMs === undefined) continue;
    const x = e.extra as Record<string, number | null>;
    const head = `  issuance flow ${e.store}: ours ${e.oursCpuMsPerFlow} ms CPU/flow = ${e.ratioToBaseline} x baseline ${e.baselineCpuMsPerFlow}`;
    const previous = `previous approximation ${e.previousApproximationMs ?? '-'} ms`;
    if (e.allowanceMs === null) log(`${head}; allowance not evaluated: ${e.notEvaluated} (${previous})`);
    else
      log(
        `${head}; allowance 1.5 x baseline + SD-JWT VC ${x.sdJwtVcSignatureMs} + wallet's requests ${x.walletRequestsMs} (bare wallet_steps ${x.walletStepsMs} + offer GET at discovery ${x.offerByReferenceMs}) + minting the offer ${x.offerMintingMs} = ${e.allowanceMs} ms: ${e.met ? 'met' : 'MISSED'} (without minting ${e.allowanceWithoutMintingMs} ms: ${e.metWithoutMinting ? 'met' : 'MISSED'}; ${previous})`,
      );
  }
  log(`\nwrote ${join('bench', 'results', 'latest.json')} and ${join('bench', 'results', 'latest-details.json')} (${Math.round((Date.now() - started) / 1000)} s)`);
}

/** --profile: our server under node --cpu-prof during par and issuance_flow (memory store), then the profile's top functions. */
async function profileRun(): Promise<void> {
  const dir = join(RESULTS, 'profiles');
  mkdirSync(dir, { recursive: true });
  const keyDir = await makeKeys();
  const scenarios = (args.scenarios?.split(',') ?? ['par', 'issuance_flow']) as Phase[]; // wallet_steps: the baseline's only
  const store = (args.stores?.split(',')[0] ?? 'memory') as 'memory' | 'redis';
  const kinds = (args['profile-kind']?.split(',') ?? ['ours']) as ('ours' | 'baseline')[];
  for (const scenario of scenarios) {
    for (const kind of kinds) {
      // node writes one profile per thread (tsx's module hooks run on a worker): one folder per run, the main thread's (thread id 0) is kept
      const sub = join(dir, `${kind}-${scenario}-${store}`);
      rmSync(sub, { recursive: true, force: true });
      mkdirSync(sub, { recursive: true });
      const server = await startServer(await serverSpec(kind, store, keyDir), { nodeFlags: ['--cpu-prof', PROFILE_INTERVAL, `--cpu-prof-dir=${sub}`] });
      let measured: PhaseDetail | undefined;
      try {
        measured = await phase(server, scenario);
      } finally {
        await server.stop();
        if (store === 'redis') await cleanRedis(server.spec.redisPrefix);
      }
      const main = readdirSync(sub).find((f) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(f));
      if (!main) throw new Error(`no main-thread profile in ${sub}: ${readdirSync(sub).join(', ')}`);
      const file = join(dir, `${kind}-${scenario}-${store}.cpuprofile`);
      renameSync(join(sub, main), file);
      rmSync(sub, { recursive: true, force: true });
      writeFileSync(`${file}.window.json`, JSON.stringify({ ...measured.window, ops: measured.result.ok })); // for offline analysis
      log(profileReport(file, 25, measured.window, measured.result.ok));
    }
  }
  rmSync(keyDir, { recursive: true, force: true });
  log(`profiles in ${dir} (open in Chrome DevTools or speedscope): ${readdirSync(dir).join(', ')}`);
}

/**
 * --steps: where a flow's server CPU goes, request by request. Flows run one at a time (no concurrency), so
 * the server's CPU between two snapshots belongs to the one request in between; the cost of a snapshot
 * itself (measured back to back) is subtracted. Medians over the flows, per step.
 */
async function stepsRun(): Promise<void> {
  const store = (args.stores?.split(',')[0] ?? 'memory') as 'memory' | 'redis';
  const n = QUICK ? 5 : 40;
  const keyDir = await makeKeys();
  const out: Record<string, { step: string; cpuUs: number }[]> = {};
  // with --profile: a CPU profile of each server, its samples attributed to the request they fall in
  const profileDir = join(RESULTS, 'profiles');
  for (const kind of (args['profile-kind']?.split(',') ?? ['ours', 'baseline']) as ('ours' | 'baseline')[]) {
    const sub = join(profileDir, `${kind}-steps-${store}`);
    if (args.profile) {
      rmSync(sub, { recursive: true, force: true });
      mkdirSync(sub, { recursive: true });
    }
    const windows = new Map<string, { from: number; to: number }[]>();
    let variantNow = '';
    const server = await startServer(await serverSpec(kind, store, keyDir), args.profile ? { nodeFlags: ['--cpu-prof', '--cpu-prof-interval=100', `--cpu-prof-dir=${sub}`] } : {});
    try {
      // the cost of a snapshot itself
      const gaps: number[] = [];
      for (let i = 0; i < 30; i++) {
        const a = await server.snapshot();
        const b = await server.snapshot();
        gaps.push((b.cpu.user - a.cpu.user + b.cpu.system - a.cpu.system));
      }
      const overhead = median(gaps);
      const samples = new Map<string, number[]>();
      let metering = false;
      class Metered extends HttpClient {
        override async request(method: string, target: string, opts: Parameters<HttpClient['request']>[2] = {}) {
          if (!metering) return super.request(method, target, opts);
          const a = await server.snapshot();
          const res = await super.request(method, target, opts);
          const b = await server.snapshot();
          const path = new URL(target, this.origin).pathname
            .replace(/\/interaction\/(v\d)\/[^/]+/, '/interaction/$1/:uid')
            .replace(/\/(authorize|auth)\/[^/]+$/, '/$1/:uid (resume)')
            .replace(/\/vp\/request\/.+$/, '/vp/request/:ref')
            .replace(/^\/interaction\/[^/]+$/, '/interaction/:uid')
            .replace(/\/offers\/[^/]+$/, '/offers/:ref');
          const step = `${method} ${path}`;
          const ws = windows.get(`${variantNow} ${step}`) ?? [];
          ws.push({ from: a.monoUs, to: b.monoUs });
          windows.set(`${variantNow} ${step}`, ws);
          const list = samples.get(step) ?? [];
          list.push(Math.max(0, b.cpu.user - a.cpu.user + b.cpu.system - a.cpu.system - overhead));
          samples.set(step, list);
          return res;
        }
      }
      const client = new Metered(server.url, 2);
      const discovery = kind === 'ours' ? '/v2.0/.well-known/openid-configuration' : '/.well-known/openid-configuration';
      const ep = await flows.discover(client, discovery);
      const holder = await flows.newHolderKey();
      // the baseline's wallet steps: the wallet's requests against bare oidc-provider's issuer (offers minted unmetered)
      const variants = kind === 'ours' ? ['issuance', 'verification'] : ['code flow', 'wallet steps'];
      const offers: flows.CredentialOffer[] =
        kind === 'baseline' ? (JSON.parse((await client.request('POST', `/bench/offers?n=${n + (QUICK ? 3 : 20)}`)).body) as { offers: flows.CredentialOffer[] }).offers : [];
      for (const variant of variants) {
        samples.clear();
        variantNow = variant;
        let credential: flows.HeldCredential | undefined;
        if (variant === 'verification') {
          const f = await flows.oursIssuance(client, ep, { hint: flows.signHint(server.url), holder, redeem: true });
          credential = flows.held(f.credential!, holder);
        }
        const once = async () => {
          if (variant === 'issuance') await flows.oursIssuance(client, ep, { hint: flows.signHint(server.url), holder, redeem: true });
          else if (variant === 'verification') await flows.oursVerification(client, ep, { credential: credential!, redeem: true });
          else if (variant === 'wallet steps') await flows.walletRedeem(client, offers.shift()!, holder, { metadata: 'appended', clientId: 'wallet' });
          else await flows.baselineFlow(client, ep, { redeem: true });
        };
        for (let i = 0; i < (QUICK ? 3 : 20); i++) await once(); // warm-up
        metering = true;
        for (let i = 0; i < n; i++) await once();
        metering = false;
        const rows = [...samples.entries()].map(([step, us]) => ({ step, cpuUs: Math.round(median(us)) }));
        const total = rows.reduce((a, r) => a + r.cpuUs, 0);
        out[`${kind} ${variant}`] = rows;
        log(`${kind} ${variant} (${store}, ${n} flows one at a time; median server CPU per request, snapshot cost ${Math.round(overhead)} µs subtracted):`);
        for (const r of rows) log(`  ${String(r.cpuUs).padStart(7)} µs  ${r.step}`);
        log(`  ${String(total).padStart(7)} µs  total per flow (${rows.length} requests)`);
      }
      // the floor: the cheapest request each server answers, measured the same way
      samples.clear();
      variantNow = 'floor';
      metering = true;
      const floorPath = kind === 'ours' ? '/healthz' : discovery;
      for (let i = 0; i < n; i++) await client.get(floorPath);
      metering = false;
      const floor = Math.round(median(samples.get(`GET ${floorPath}`) ?? [0]));
      out[`${kind} floor`] = [{ step: `GET ${floorPath}`, cpuUs: floor }];
      log(`${kind}: GET ${floorPath} (reference) ${floor} µs`);
      client.close();
    } finally {
      await server.stop();
      if (store === 'redis') await cleanRedis(server.spec.redisPrefix);
    }
    if (args.profile) {
      const main = readdirSync(sub).find((f) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(f));
      if (!main) throw new Error(`no main-thread profile in ${sub}: ${readdirSync(sub).join(', ')}`);
      const file = join(profileDir, `${kind}-steps-${store}.cpuprofile`);
      renameSync(join(sub, main), file);
      rmSync(sub, { recursive: true, force: true });
      log(`${kind}: where each request's main-thread CPU goes (${file}):`);
      for (const [step, ws] of windows) log(stepReport(file, step, ws));
    }
  }
  rmSync(keyDir, { recursive: true, force: true });
  mkdirSync(RESULTS, { recursive: true });
  writeFileSync(join(RESULTS, 'steps.json'), `${JSON.stringify({ store, flows: n, steps: out }, null, 2)}\n`);
  log(`wrote ${join('bench', 'results', 'steps.json')}`);
}

/** --soak: 100,000 requests on the memory store; RSS/heap and store size before, during, after, and after expiry. */
async function soakRun(): Promise<void> {
  mkdirSync(RESULTS, { recursive: true });
  const total = Number(args['soak-requests'] ?? process.env.BENCH_SOAK_REQUESTS ?? 100_000);
  // every record the flows leave expires within this: the wallet provider keeps grants and access tokens
  // for offer + ACCESS_TOKEN_LIFETIME; a redeemed offer's status lives while its access token can be used,
  // plus STATUS_GRACE_SECONDS (src/issuance/offers.ts)
  const maxTtl = Math.max(
    SOAK_LIFETIMES.offer + ACCESS_TOKEN_LIFETIME,
    ACCESS_TOKEN_LIFETIME + STATUS_GRACE_SECONDS,
    SOAK_LIFETIMES.interaction,
    SOAK_LIFETIMES.code + SOAK_LIFETIMES.token,
    30 + SOAK_LIFETIMES.offer + STATUS_GRACE_SECONDS,
  );
  const wait = Number(args['soak-wait'] ?? process.env.BENCH_SOAK_WAIT ?? maxTtl + 15);
  const keyDir = await makeKeys();
  const server = await startServer(await serverSpec('ours', 'memory', keyDir, SOAK_LIFETIMES), { nodeFlags: ['--expose-gc'] });
  const samples: { at: string; requests: number; rssMb: number; heapUsedMb: number; storeSize?: number }[] = [];
  const sample = async (requests: number, gc = false) => {
    if (gc) await server.gc();
    const s = await server.snapshot();
    const row = { at: new Date(s.at).toISOString(), requests, rssMb: round(s.mem.rss / 2 ** 20, 1), heapUsedMb: round(s.mem.heapUsed / 2 ** 20, 1), storeSize: s.storeSize };
    samples.push(row);
    log(`  ${String(requests).padStart(7)} requests: rss ${row.rssMb} MB, heap ${row.heapUsedMb} MB, store ${row.storeSize} entries${gc ? ' (after gc)' : ''}`);
    return row;
  };
  log(`soak: ${total} requests on the memory store (lifetimes ${JSON.stringify(SOAK_LIFETIMES)}), then ${wait} s for every record to expire`);
  const load = await startLoad();
  let result: PhaseResult;
  const before = await sample(0, true);
  try {
    await load.prepare({ scenario: 'soak', kind: 'ours', url: server.url, concurrency: 12, warmupMs: 0, durationMs: 30 * 60_000, maxOps: total, tokenPool: 0, mintConcurrency: 1, soakRequests: total, hintLifetime: 5 });
    const pending: Promise<unknown>[] = [];
    result = await load.measure((n) => pending.push(sample(n)), 31 * 60_000);
    await Promise.all(pending);
  } finally {
    await load.exit();
  }
  const end = await sample(Number(result.extra.totalHttpRequests ?? 0), true);
  log(`  waiting ${wait} s for the records to expire (the memory store sweeps every 10 s)`);
  const deadline = Date.now() + wait * 1000;
  while (Date.now() < deadline) await new Promise((r) => setTimeout(r, Math.min(30_000, deadline - Date.now())));
  const expired = await sample(end.requests, true);
  await server.stop();
  rmSync(keyDir, { recursive: true, force: true });
  const peakStore = Math.max(...samples.map((s) => s.storeSize ?? 0));
  const out = {
    requests: end.requests,
    issuanceFlows: result.extra.issuanceFlows,
    abandonedPars: result.extra.abandonedPars,
    errors: result.errors,
    firstError: result.firstError,
    seconds: round(result.elapsedMs / 1000, 1),
    lifetimes: SOAK_LIFETIMES,
    before,
    end,
    afterExpiry: expired,
    peakStoreSize: peakStore,
    heapGrowthMb: round(expired.heapUsedMb - before.heapUsedMb, 1),
    rssGrowthMb: round(expired.rssMb - before.rssMb, 1),
    samples,
  };
  writeFileSync(join(RESULTS, 'soak.json'), `${JSON.stringify(out, null, 2)}\n`);
  log(`\nsoak: ${out.requests} requests in ${out.seconds} s (${out.errors} errors); heap ${before.heapUsedMb} -> ${end.heapUsedMb} -> ${expired.heapUsedMb} MB after expiry (growth ${out.heapGrowthMb} MB), rss ${before.rssMb} -> ${end.rssMb} -> ${expired.rssMb} MB, store ${before.storeSize} -> peak ${peakStore} -> ${expired.storeSize} entries after expiry`);
  log(`wrote ${join('bench', 'results', 'soak.json')}`);
}

// our server runs the compiled JavaScript, as production does (docs/operations.md); --from-src: the
// TypeScript through tsx, as `npm start` runs it
if (args['from-src']) {
  process.env.BENCH_OURS_FROM = 'src';
} else {
  process.env.BENCH_OURS_FROM = 'dist';
  execFileSync(process.execPath, [join(process.cwd(), 'node_modules', 'typescript', 'bin', 'tsc'), '-p', 'tsconfig.build.json'], { stdio: 'inherit' });
}

const run = args.steps ? stepsRun : args.profile ? profileRun : SOAK ? soakRun : mainRun;
run().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
