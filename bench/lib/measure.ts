/**
 * One measured phase (or slice of one): a load process prepares its pools and warm-up, then the server's
 * CPU, memory and signature counters are sampled right before and right after the measured part.
 */
import { readFileSync } from 'node:fs';
import { startLoad, type LoadHandle, type ServerHandle } from './children.js';
import type { LoadSpec, Phase, PhaseResult } from './load.js';
import type { Snapshot } from './serverCommon.js';
import { round } from './stats.js';
import { log, type BenchOptions } from './options.js';

export interface PhaseDetail {
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

export interface PreparedPhase {
  server: ServerHandle;
  scenario: Phase;
  load: LoadHandle;
  prepared: Record<string, unknown>;
}

/** The whole machine's busy CPU (ms, all cores) from /proc/stat, to see other processes' load during a phase; undefined off Linux. */
export function machineBusyMs(): number | undefined {
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

/** A fresh load process for one server and scenario, prepared: pools minted, warm-up done. */
export async function preparePhase(opts: BenchOptions, server: ServerHandle, scenario: Phase): Promise<PreparedPhase> {
  const cfg = opts.phases[scenario];
  const load = await startLoad();
  try {
    const spec: LoadSpec = {
      scenario,
      kind: server.spec.kind,
      url: server.url,
      concurrency: opts.concurrency ?? cfg.concurrency,
      warmupMs: cfg.warmupMs,
      durationMs: cfg.durationMs,
      maxOps: cfg.maxOps,
      tokenPool: cfg.tokenPool ?? 0,
      mintConcurrency: 8,
      webhookPort: server.spec.kind === 'ours' ? server.spec.webhookPort : undefined,
      keyDir: server.spec.keyDir,
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
export async function measurePhase(
  opts: BenchOptions,
  p: PreparedPhase,
  roundNo: number,
  slice?: { durationMs: number; maxOps: number },
): Promise<PhaseDetail> {
  const { server, scenario, load, prepared } = p;
  if (opts.gcBefore) await server.gc(); // both servers start the measured part with a collected heap
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
    mainThreadCpuMsPerOp:
      before.mainThreadCpuMs !== undefined && after.mainThreadCpuMs !== undefined
        ? round((after.mainThreadCpuMs - before.mainThreadCpuMs) / ops, 3)
        : null,
    syscallsPerOp:
      before.syscalls && after.syscalls
        ? {
            reads: round((after.syscalls.reads - before.syscalls.reads) / ops, 2),
            writes: round((after.syscalls.writes - before.syscalls.writes) / ops, 2),
          }
        : null,
    serverCores: serverCpuMs / result.elapsedMs,
    loadCores: result.loadCpuMs / result.elapsedMs,
    otherCores:
      busy0 !== undefined && busy1 !== undefined
        ? Math.max(0, (busy1 - busy0 - serverCpuMs - result.loadCpuMs) / result.elapsedMs)
        : null,
    signs,
    signsPerOp: Object.fromEntries(Object.entries(signs).map(([k, v]) => [k, round(v / ops, 3)])),
    rssMb: round(after.mem.rss / 2 ** 20, 1),
    heapUsedMb: round(after.mem.heapUsed / 2 ** 20, 1),
    window: { from: before.monoUs, to: after.monoUs },
  };
  const err = result.errors ? `  ERRORS ${result.errors}: ${result.firstError}` : '';
  log(
    `  ${scenario.padEnd(22)} ${server.spec.store.padEnd(6)} ${server.spec.kind.padEnd(8)} ${result.rps.toFixed(1).padStart(8)} /s  p50 ${result.p50.toFixed(2).padStart(7)} ms  p99 ${result.p99.toFixed(2).padStart(7)} ms  cpu ${detail.serverCpuMsPerOp.toFixed(3).padStart(7)} ms/op (main ${detail.mainThreadCpuMsPerOp?.toFixed(3) ?? '?'}, heap ${detail.heapUsedMb} MB${detail.syscallsPerOp ? `, syscalls r/w ${detail.syscallsPerOp.reads}/${detail.syscallsPerOp.writes}` : ''})  (cores: server ${detail.serverCores.toFixed(2)}, load ${detail.loadCores.toFixed(2)}, other ${detail.otherCores?.toFixed(2) ?? '?'})${err}`,
  );
  return detail;
}

/** One whole phase: a fresh load process prepares (pools, warm-up), the server's CPU is sampled around the measured part. */
export async function phase(
  opts: BenchOptions,
  server: ServerHandle,
  scenario: Phase,
  roundNo = 1,
): Promise<PhaseDetail> {
  const p = await preparePhase(opts, server, scenario);
  try {
    return await measurePhase(opts, p, roundNo);
  } finally {
    await p.load.exit();
  }
}
