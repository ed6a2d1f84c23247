/**
 * `--soak`: 100,000 requests (issuance flows and abandoned PAR requests) to our server on the memory store
 * with short lifetimes; RSS/heap and store size before, during, after, and after every record expired.
 * Writes bench/results/soak.json. The server keeps V8's defaults, as operators run it.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { ACCESS_TOKEN_LIFETIME } from '../../src/issuance/walletIssuer.js';
import { STATUS_GRACE_SECONDS } from '../../src/issuance/offers.js';
import { startLoad, startServer } from '../lib/children.js';
import { SOAK_LIFETIMES } from '../lib/config.js';
import type { PhaseResult } from '../lib/load.js';
import { log, type BenchOptions } from '../lib/options.js';
import { makeKeys, serverSpec } from '../lib/setup.js';
import { round } from '../lib/stats.js';

export async function soakRun(opts: BenchOptions): Promise<void> {
  mkdirSync(opts.results, { recursive: true });
  const total = Number(opts.soakRequests ?? 100_000);
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
  const wait = Number(opts.soakWait ?? maxTtl + 15);
  const keyDir = await makeKeys();
  const server = await startServer(await serverSpec(opts, 'ours', 'memory', keyDir, SOAK_LIFETIMES), {
    nodeFlags: ['--expose-gc'],
  });
  const samples: { at: string; requests: number; rssMb: number; heapUsedMb: number; storeSize?: number }[] = [];
  const sample = async (requests: number, gc = false) => {
    if (gc) await server.gc();
    const s = await server.snapshot();
    const row = {
      at: new Date(s.at).toISOString(),
      requests,
      rssMb: round(s.mem.rss / 2 ** 20, 1),
      heapUsedMb: round(s.mem.heapUsed / 2 ** 20, 1),
      storeSize: s.storeSize,
    };
    samples.push(row);
    log(
      `  ${String(requests).padStart(7)} requests: rss ${row.rssMb} MB, heap ${row.heapUsedMb} MB, store ${row.storeSize} entries${gc ? ' (after gc)' : ''}`,
    );
    return row;
  };
  log(
    `soak: ${total} requests on the memory store (lifetimes ${JSON.stringify(SOAK_LIFETIMES)}), then ${wait} s for every record to expire`,
  );
  const load = await startLoad();
  let result: PhaseResult;
  const before = await sample(0, true);
  try {
    await load.prepare({
      scenario: 'soak',
      kind: 'ours',
      url: server.url,
      concurrency: 12,
      warmupMs: 0,
      durationMs: 30 * 60_000,
      maxOps: total,
      tokenPool: 0,
      mintConcurrency: 1,
      soakRequests: total,
      hintLifetime: 5,
    });
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
  writeFileSync(join(opts.results, 'soak.json'), `${JSON.stringify(out, null, 2)}\n`);
  log(
    `\nsoak: ${out.requests} requests in ${out.seconds} s (${out.errors} errors); heap ${before.heapUsedMb} -> ${end.heapUsedMb} -> ${expired.heapUsedMb} MB after expiry (growth ${out.heapGrowthMb} MB), rss ${before.rssMb} -> ${end.rssMb} -> ${expired.rssMb} MB, store ${before.storeSize} -> peak ${peakStore} -> ${expired.storeSize} entries after expiry`,
  );
  log(`wrote ${join('bench', 'results', 'soak.json')}`);
}
