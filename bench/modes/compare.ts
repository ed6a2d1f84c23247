/**
 * `npm run bench` (the default mode): our service against bare oidc-provider, each store in turn, both
 * servers up side by side; each scenario interleaved (below) or, with --sequential, in whole phases
 * (./sequential.ts); with --repeat N, N such whole runs. Writes bench/results/latest.json and
 * latest-details.json, or with --quick quick.json and quick-details.json (../lib/report.ts).
 */
import { mkdirSync, rmSync } from 'node:fs';
import { cpus, loadavg } from 'node:os';
import { cryptoRates, startServer, type ServerHandle } from '../lib/children.js';
import type { Phase, Scenario } from '../lib/load.js';
import { machineBusyMs, measurePhase, preparePhase, type PhaseDetail, type PreparedPhase } from '../lib/measure.js';
import { log, type BenchOptions } from '../lib/options.js';
import { report, type RunRecord } from '../lib/report.js';
import type { CryptoRates } from '../lib/evaluate.js';
import { cleanRedis, makeKeys, redisReachable, serverSpec } from '../lib/setup.js';
import { sequential } from './sequential.js';

const ALL_SCENARIOS: Scenario[] = [
  'discovery',
  'par',
  'token',
  'issuance_flow',
  'external_issuance_flow',
  'verification_flow',
  'identity_flow',
  'dc_api_verification_flow',
  'annex_c_verification_flow',
];

/**
 * What runs in a scenario's rounds besides ours and the baseline: for issuance_flow, the baseline's
 * wallet_steps (they price its allowance) and, when asked for, our external_issuance_flow, whose
 * allowance is issuance_flow's: its slices then sit between the baseline slices that price it, as ours
 * and the baseline's do. For verification_flow, when asked for, our identity_flow, whose target is our
 * verification_flow's CPU, and our dc_api_verification_flow and annex_c_verification_flow, whose target is the
 * same: their slices take turns. external_issuance_flow, identity_flow, dc_api_verification_flow and
 * annex_c_verification_flow have no rounds of their own.
 */
function companions(
  scenario: Scenario,
  scenarios: Scenario[],
  ours: ServerHandle,
  base: ServerHandle,
): [ServerHandle, Phase][] {
  if (scenario === 'verification_flow')
    return (['identity_flow', 'dc_api_verification_flow', 'annex_c_verification_flow'] as const)
      .filter((s) => scenarios.includes(s))
      .map((s) => [ours, s] as [ServerHandle, Phase]);
  if (scenario !== 'issuance_flow') return [];
  return [
    [base, 'wallet_steps'],
    ...(scenarios.includes('external_issuance_flow')
      ? [[ours, 'external_issuance_flow'] as [ServerHandle, Phase]]
      : []),
  ];
}

/**
 * A scenario interleaved: ours, the baseline and its companions (above) each get a prepared load process
 * (pools, warm-up), then take turns in slices (at most opts.sliceMs, or a share of the pool), opts.rounds
 * times, the order rotating each round; a row is the median of the rounds. This machine's speed drifts by
 * ±20 % within seconds: slices of a second hit both servers alike, where whole phases one after the other
 * put that drift between them.
 */
async function interleaved(
  opts: BenchOptions,
  scenario: Scenario,
  ours: ServerHandle,
  base: ServerHandle,
  others: [ServerHandle, Phase][],
): Promise<PhaseDetail[]> {
  const entries: [ServerHandle, Phase][] = [[ours, scenario], [base, scenario], ...others];
  const prepared: PreparedPhase[] = [];
  try {
    for (const [server, phaseName] of entries) prepared.push(await preparePhase(opts, server, phaseName));
    const out: PhaseDetail[] = [];
    for (let r = 1; r <= opts.rounds; r++) {
      const shift = (r - 1) % prepared.length;
      for (const p of [...prepared.slice(shift), ...prepared.slice(0, shift)]) {
        const cfg = opts.phases[p.scenario];
        // a slice's share of the pool: what the warm-up left (90 %), spread over the rounds
        const pool = cfg.maxOps || cfg.tokenPool || 0;
        out.push(
          await measurePhase(opts, p, r, {
            durationMs: opts.sliceMs,
            maxOps: Math.max(1, Math.floor((pool * 0.9) / opts.rounds)),
          }),
        );
      }
    }
    return out;
  } finally {
    for (const p of prepared) await p.load.exit();
  }
}

export async function compareRun(opts: BenchOptions): Promise<void> {
  const stores = (opts.stores ?? ['memory', 'redis']) as ('memory' | 'redis')[];
  const scenarios = (opts.scenarios ?? [...ALL_SCENARIOS]) as Scenario[];
  for (const s of scenarios) if (!ALL_SCENARIOS.includes(s)) throw new Error(`unknown scenario ${s}`);
  // external_issuance_flow's allowance is issuance_flow's plus one webhook signature, and it runs in issuance_flow's rounds
  if (scenarios.includes('external_issuance_flow') && !scenarios.includes('issuance_flow')) {
    log('also running issuance_flow: external_issuance_flow runs in its rounds and its allowance is priced from it');
    scenarios.splice(scenarios.indexOf('external_issuance_flow'), 0, 'issuance_flow');
  }
  // identity_flow's target is our verification_flow's CPU, and it runs in verification_flow's rounds
  for (const s of ['identity_flow', 'dc_api_verification_flow', 'annex_c_verification_flow'] as const)
    if (scenarios.includes(s) && !scenarios.includes('verification_flow')) {
      log(`also running verification_flow: ${s} runs in its rounds and its target is our verification_flow CPU`);
      scenarios.splice(scenarios.indexOf(s), 0, 'verification_flow');
    }
  // the issuance flow's allowance prices the offer-by-reference GET with the baseline's discovery request
  // (the wallet's other requests with its wallet_steps phase, run after each issuance_flow round); the
  // previous approximation, reported next to it, also needs the baseline's token request
  if (scenarios.includes('issuance_flow')) {
    const missing = (['discovery', 'token'] as Scenario[]).filter((s) => !scenarios.includes(s));
    if (missing.length)
      log(
        `also running ${missing.join(' and ')}: the issuance flow's allowance (discovery) and its previous approximation (discovery, token) are priced with them`,
      );
    scenarios.unshift(...missing);
  }
  mkdirSync(opts.results, { recursive: true });
  const started = Date.now();
  log(
    `method: ${opts.interleave ? `interleaved: ${opts.rounds} rounds, each server in turn for a slice of at most ${opts.sliceMs} ms (--sequential: whole phases one after the other)` : `sequential: ${opts.rounds} rounds of whole phases`}${opts.repeat > 1 ? `; ${opts.repeat} whole runs` : ''}`,
  );
  const runs: RunRecord[] = [];
  for (let i = 1; i <= opts.repeat; i++) runs.push(await oneRun(opts, stores, scenarios, i));
  report(opts, { stores, scenarios, runs, started });
}

/** The crypto prices on one core (a child process), with the other processes' load meanwhile. */
async function pricedRates(opts: BenchOptions): Promise<{ rates: CryptoRates; other: number | null }> {
  const busyBefore = machineBusyMs();
  const t0 = Date.now();
  const rates = await cryptoRates(opts.quick ? 300 : 2_000);
  const busyAfter = machineBusyMs();
  const other =
    busyBefore !== undefined && busyAfter !== undefined
      ? Math.max(0, (busyAfter - busyBefore) / (Date.now() - t0) - 1)
      : null;
  return { rates, other };
}

/**
 * One whole run: the crypto prices, both stores (both servers started afresh, every scenario), the crypto
 * prices again; RS256's move between the two says whether the machine stayed the same (../lib/report.ts).
 */
async function oneRun(
  opts: BenchOptions,
  stores: ('memory' | 'redis')[],
  scenarios: Scenario[],
  index: number,
): Promise<RunRecord> {
  const started = Date.now();
  log(
    `bench ${opts.quick ? '(quick) ' : ''}run ${opts.runId}${opts.repeat > 1 ? `, ${index} of ${opts.repeat}` : ''}: ${cpus().length} cores (${cpus()[0]?.model ?? '?'}), node ${process.version}, load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}`,
  );

  log('machine limits (one core):');
  const { rates, other: ratesOther } = await pricedRates(opts);
  log(
    `  RS256 crypto.sign (2048-bit): ${(1000 / rates.rs256.cpuMsPerOp).toFixed(0)} signs per CPU-second (${rates.rs256.cpuMsPerOp.toFixed(3)} ms each), ${rates.rs256.perSecond.toFixed(0)} per wall-clock second (other load on the machine meanwhile: ${ratesOther?.toFixed(2) ?? '?'} cores); via WebCrypto as jose calls it: ${rates.rs256WebCrypto.cpuMsPerOp.toFixed(3)} ms CPU per sign`,
  );
  log(
    `  ES256 sign ${rates.es256Sign.cpuMsPerOp.toFixed(3)} ms, verify ${rates.es256Verify.cpuMsPerOp.toFixed(3)} ms; one SD-JWT VC (src/issuance/sdJwtVc.ts) ${rates.sdJwtVc.cpuMsPerOp.toFixed(3)} ms CPU; one webhook signature (standardwebhooks) ${rates.webhookSignature.cpuMsPerOp.toFixed(4)} ms`,
  );

  const keyDir = await makeKeys();
  const details: PhaseDetail[] = [];
  const redisOk = stores.includes('redis') ? await redisReachable(opts.redisUrl) : false;
  if (stores.includes('redis') && !redisOk)
    log(`Redis at ${opts.redisUrl} is not reachable: the redis rows are skipped`);

  for (const store of stores) {
    if (store === 'redis' && !redisOk) continue;
    log(`store ${store}: both servers run with ${opts.comparisonFlags.join(' ') || "V8's defaults"}`);
    const flags = { nodeFlags: opts.comparisonFlags };
    const ours = await startServer(await serverSpec(opts, 'ours', store, keyDir), flags);
    const base = await startServer(await serverSpec(opts, 'baseline', store, keyDir), flags);
    try {
      for (const scenario of scenarios) {
        // measured in issuance_flow's, verification_flow's rounds
        if (
          ['external_issuance_flow', 'identity_flow', 'dc_api_verification_flow', 'annex_c_verification_flow'].includes(
            scenario,
          )
        )
          continue;
        const others = companions(scenario, scenarios, ours, base);
        details.push(...(await (opts.interleave ? interleaved : sequential)(opts, scenario, ours, base, others)));
      }
    } finally {
      await ours.stop();
      await base.stop();
      if (store === 'redis') {
        const removed =
          (await cleanRedis(opts.redisUrl, ours.spec.redisPrefix)) +
          (await cleanRedis(opts.redisUrl, base.spec.redisPrefix));
        log(`  removed this run's ${removed} Redis keys (prefix bench:${opts.runId}:)`);
      }
    }
  }
  rmSync(keyDir, { recursive: true, force: true });

  const { rates: after, other: afterOther } = await pricedRates(opts);
  const before = 1000 / rates.rs256.cpuMsPerOp;
  const now = 1000 / after.rs256.cpuMsPerOp;
  log(
    `  at the run's end: RS256 ${now.toFixed(0)} signs per CPU-second (${((now / before - 1) * 100).toFixed(1)} % against its start; other load meanwhile: ${afterOther?.toFixed(2) ?? '?'} cores)`,
  );
  return {
    index,
    at: new Date(started).toISOString(),
    seconds: Math.round((Date.now() - started) / 1000),
    ratesBefore: rates,
    ratesAfter: after,
    ratesOtherBefore: ratesOther,
    ratesOtherAfter: afterOther,
    details,
  };
}
