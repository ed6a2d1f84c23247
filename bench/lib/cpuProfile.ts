/**
 * Reads a V8 .cpuprofile (node --cpu-prof) and ranks functions by self time and by inclusive time
 * (each function counted once per sample however deep it recurses).
 *   npx tsx bench/lib/cpuProfile.ts <file.cpuprofile>...   the same report for saved profiles
 */
import { readdirSync, readFileSync, renameSync, rmSync } from 'node:fs';
import { join } from 'node:path';

interface CpuNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}
interface CpuProfile {
  nodes: CpuNode[];
  samples: number[];
  timeDeltas: number[];
  startTime: number;
  endTime: number;
}

export interface FunctionCost {
  fn: string;
  where: string;
  selfMs: number;
  totalMs: number;
}

function shortUrl(url: string): string {
  if (!url) return '(native)';
  const s = url.replace(/^file:\/\//, '');
  const nm = s.lastIndexOf('/node_modules/');
  if (nm !== -1) return s.slice(nm + '/node_modules/'.length);
  const src = s.indexOf('/src/');
  if (src !== -1) return s.slice(src + 1);
  // our compiled JavaScript (the bench runs dist/): reported under the source file it was compiled from
  const dist = s.indexOf('/dist/');
  if (dist !== -1) return `src/${s.slice(dist + '/dist/'.length).replace(/\.js$/, '.ts')}`;
  const bench = s.indexOf('/bench/');
  if (bench !== -1) return s.slice(bench + 1);
  return s;
}

type Window = { from: number; to: number };

/**
 * `window`: monotonic µs [from, to] (the measured phase), or several such windows (one per request, --steps);
 * samples outside them (start-up, warm-up, other requests) are left out.
 */
export function analyse(
  file: string,
  window?: Window | Window[],
): { totalMs: number; idleMs: number; gcMs: number; functions: FunctionCost[] } {
  const windows =
    window === undefined
      ? undefined
      : (Array.isArray(window) ? window : [window]).slice().sort((a, b) => a.from - b.from);
  let w = 0;
  const inWindow = (t: number): boolean => {
    if (!windows) return true;
    while (w < windows.length && windows[w].to < t) w++; // samples come in time order
    return w < windows.length && windows[w].from <= t;
  };
  const p = JSON.parse(readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const keyOf = (n: CpuNode) => {
    const cf = n.callFrame;
    return `${cf.functionName || '(anonymous)'}\u0000${shortUrl(cf.url)}:${cf.lineNumber + 1}`;
  };
  const self = new Map<string, number>();
  const total = new Map<string, number>();
  let totalUs = 0;
  let idleUs = 0;
  let gcUs = 0;
  let t = p.startTime;
  for (let i = 0; i < p.samples.length; i++) {
    const dt = p.timeDeltas[i] ?? 0;
    t += dt;
    if (!inWindow(t)) continue;
    const node = byId.get(p.samples[i]);
    if (!node) continue;
    totalUs += dt;
    const name = node.callFrame.functionName;
    if (name === '(idle)') {
      idleUs += dt;
      continue;
    }
    if (name === '(garbage collector)') gcUs += dt;
    const k = keyOf(node);
    self.set(k, (self.get(k) ?? 0) + dt);
    const seen = new Set<string>();
    for (
      let id: number | undefined = node.id, guard = 0;
      id !== undefined && guard < 10_000;
      id = parent.get(id), guard++
    ) {
      const key = keyOf(byId.get(id)!);
      if (seen.has(key)) continue;
      seen.add(key);
      total.set(key, (total.get(key) ?? 0) + dt);
    }
  }
  const functions = [...total.entries()].map(([k, t]) => {
    const [fn, where] = k.split('\u0000');
    return { fn, where, selfMs: (self.get(k) ?? 0) / 1000, totalMs: t / 1000 };
  });
  return { totalMs: totalUs / 1000, idleMs: idleUs / 1000, gcMs: gcUs / 1000, functions };
}

/** Where self time goes, by package (our src/, each library, node internals, native). */
function byPackage(functions: FunctionCost[]): [string, number][] {
  const out = new Map<string, number>();
  for (const f of functions) {
    let pkg: string;
    if (f.where.startsWith('src/')) pkg = 'src (ours)';
    else if (f.where.startsWith('node:')) pkg = 'node internals';
    else if (f.where.startsWith('(native)') || f.where === '') pkg = `native: ${f.fn}`;
    else if (f.where.startsWith('bench/')) pkg = 'bench instrumentation';
    else pkg = f.where.startsWith('@') ? f.where.split('/').slice(0, 2).join('/') : f.where.split('/')[0];
    out.set(pkg, (out.get(pkg) ?? 0) + f.selfMs);
  }
  return [...out.entries()].sort((a, b) => b[1] - a[1]);
}

/** One step of a flow (--steps --profile): its self time per request by package and by function. */
export function stepReport(file: string, step: string, windows: Window[], top = 12): string {
  const a = analyse(file, windows);
  const n = windows.length;
  const busy = a.totalMs - a.idleMs;
  const lines = [`  ${step}: ${((busy / n) * 1000).toFixed(0)} µs main-thread CPU per request (${n} requests)`];
  lines.push(
    `    by package: ${byPackage(a.functions)
      .slice(0, 6)
      .map(([pkg, ms]) => `${pkg} ${((ms / n) * 1000).toFixed(0)}`)
      .join(', ')} (µs)`,
  );
  for (const f of [...a.functions].sort((x, y) => y.selfMs - x.selfMs).slice(0, top)) {
    lines.push(`    ${((f.selfMs / n) * 1000).toFixed(0).padStart(5)} µs self  ${f.fn}  ${f.where}`);
  }
  return lines.join('\n');
}

export function profileReport(file: string, top = 25, window?: Window, ops?: number): string {
  const a = analyse(file, window);
  const busy = a.totalMs - a.idleMs;
  const pct = (ms: number) => `${((ms / busy) * 100).toFixed(1).padStart(5)}%`;
  const lines: string[] = [];
  lines.push(
    `${file}: ${busy.toFixed(0)} ms busy of ${a.totalMs.toFixed(0)} ms sampled (main thread${window ? ', measured phase only' : ''}; GC ${pct(a.gcMs)})${ops ? `; ${ops} ops, ${(busy / ops).toFixed(3)} ms main-thread CPU per op` : ''}`,
  );
  lines.push('  self time by package:');
  for (const [pkg, ms] of byPackage(a.functions).slice(0, 14))
    lines.push(`    ${pct(ms)}  ${ops ? `${(ms / ops).toFixed(3)} ms/op  ` : ''}${pkg}`);
  lines.push('  by self time:');
  for (const f of [...a.functions].sort((x, y) => y.selfMs - x.selfMs).slice(0, top)) {
    lines.push(`    ${pct(f.selfMs)}  ${f.fn}  ${f.where}`);
  }
  lines.push('  our code (src/), by inclusive time:');
  for (const f of a.functions
    .filter((x) => x.where.startsWith('src/'))
    .sort((x, y) => y.totalMs - x.totalMs)
    .slice(0, top)) {
    lines.push(`    ${pct(f.totalMs)} incl ${pct(f.selfMs)} self  ${f.fn}  ${f.where}`);
  }
  lines.push('  libraries, by inclusive time:');
  for (const f of a.functions
    .filter((x) => !x.where.startsWith('src/') && !x.where.startsWith('node:') && x.where !== '(native)')
    .sort((x, y) => y.totalMs - x.totalMs)
    .slice(0, top)) {
    lines.push(`    ${pct(f.totalMs)} incl ${pct(f.selfMs)} self  ${f.fn}  ${f.where}`);
  }
  return lines.join('\n');
}

/**
 * node --cpu-prof writes one profile per thread (tsx's module hooks run on a worker) into `dir`: the main
 * thread's (thread id 0) is moved to `file`, `dir` removed.
 */
export function keepMainThreadProfile(dir: string, file: string): void {
  const main = readdirSync(dir).find((f) => /^CPU\.\d+\.\d+\.\d+\.0\.\d+\.cpuprofile$/.test(f));
  if (!main) throw new Error(`no main-thread profile in ${dir}: ${readdirSync(dir).join(', ')}`);
  renameSync(join(dir, main), file);
  rmSync(dir, { recursive: true, force: true });
}

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const f of process.argv.slice(2)) console.log(profileReport(f, 30));
}
