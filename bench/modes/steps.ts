/**
 * `--steps`: where a flow's server CPU goes, request by request. Flows run one at a time (no concurrency), so
 * the server's CPU between two snapshots belongs to the one request in between; the cost of a snapshot
 * itself (measured back to back) is subtracted. Medians over the flows, per step; writes
 * bench/results/steps.json. With --profile: a CPU profile of each server (100 µs sampling), its samples
 * attributed to the request they fall in.
 */
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer } from '../lib/children.js';
import { keepMainThreadProfile, stepReport } from '../lib/cpuProfile.js';
import * as flows from '../lib/flows.js';
import { HttpClient } from '../lib/http.js';
import { log, type BenchOptions } from '../lib/options.js';
import { readPidIssuerKey } from '../lib/config.js';
import { cleanRedis, makeKeys, serverSpec } from '../lib/setup.js';
import { median } from '../lib/stats.js';

export async function stepsRun(opts: BenchOptions): Promise<void> {
  const store = (opts.stores?.[0] ?? 'memory') as 'memory' | 'redis';
  const n = opts.quick ? 5 : 40;
  const keyDir = await makeKeys();
  const out: Record<string, { step: string; cpuUs: number }[]> = {};
  const profileDir = join(opts.results, 'profiles');
  for (const kind of (opts.profileKinds ?? ['ours', 'baseline']) as ('ours' | 'baseline')[]) {
    const sub = join(profileDir, `${kind}-steps-${store}`);
    if (opts.profile) {
      rmSync(sub, { recursive: true, force: true });
      mkdirSync(sub, { recursive: true });
    }
    const windows = new Map<string, { from: number; to: number }[]>();
    let variantNow = '';
    const server = await startServer(
      await serverSpec(opts, kind, store, keyDir),
      opts.profile ? { nodeFlags: ['--cpu-prof', '--cpu-prof-interval=100', `--cpu-prof-dir=${sub}`] } : {},
    );
    try {
      // the cost of a snapshot itself
      const gaps: number[] = [];
      for (let i = 0; i < 30; i++) {
        const a = await server.snapshot();
        const b = await server.snapshot();
        gaps.push(b.cpu.user - a.cpu.user + b.cpu.system - a.cpu.system);
      }
      const overhead = median(gaps);
      const samples = new Map<string, number[]>();
      let metering = false;
      class Metered extends HttpClient {
        override async request(method: string, target: string, o: Parameters<HttpClient['request']>[2] = {}) {
          if (!metering) return super.request(method, target, o);
          const a = await server.snapshot();
          const res = await super.request(method, target, o);
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
      const discovery =
        kind === 'ours' ? '/v2.0/.well-known/openid-configuration' : '/.well-known/openid-configuration';
      const ep = await flows.discover(client, discovery);
      const holder = await flows.newHolderKey();
      // the baseline's wallet steps: the wallet's requests against bare oidc-provider's issuer (offers minted unmetered)
      const variants = kind === 'ours' ? ['issuance', 'verification', 'identity'] : ['code flow', 'wallet steps'];
      const offers: flows.CredentialOffer[] =
        kind === 'baseline'
          ? (
              JSON.parse((await client.request('POST', `/bench/offers?n=${n + (opts.quick ? 3 : 20)}`)).body) as {
                offers: flows.CredentialOffer[];
              }
            ).offers
          : [];
      for (const variant of variants) {
        samples.clear();
        variantNow = variant;
        let credential: flows.HeldCredential | undefined;
        if (variant === 'verification') {
          const f = await flows.oursIssuance(client, ep, { hint: flows.signHint(server.url), holder, redeem: true });
          credential = flows.held(f.credential!, holder);
        }
        if (variant === 'identity') [credential] = await flows.pidCredentials(readPidIssuerKey(keyDir).privateJwk, 1);
        const once = async () => {
          if (variant === 'issuance')
            await flows.oursIssuance(client, ep, { hint: flows.signHint(server.url), holder, redeem: true });
          else if (variant === 'verification')
            await flows.oursVerification(client, ep, { credential: credential!, redeem: true });
          else if (variant === 'identity')
            await flows.oursIdentity(client, ep, { credential: credential!, redeem: true });
          else if (variant === 'wallet steps')
            await flows.walletRedeem(client, offers.shift()!, holder, { metadata: 'appended', clientId: 'wallet' });
          else await flows.baselineFlow(client, ep, { redeem: true });
        };
        for (let i = 0; i < (opts.quick ? 3 : 20); i++) await once(); // warm-up
        metering = true;
        for (let i = 0; i < n; i++) await once();
        metering = false;
        const rows = [...samples.entries()].map(([step, us]) => ({ step, cpuUs: Math.round(median(us)) }));
        const total = rows.reduce((a, r) => a + r.cpuUs, 0);
        out[`${kind} ${variant}`] = rows;
        log(
          `${kind} ${variant} (${store}, ${n} flows one at a time; median server CPU per request, snapshot cost ${Math.round(overhead)} µs subtracted):`,
        );
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
      if (store === 'redis') await cleanRedis(opts.redisUrl, server.spec.redisPrefix);
    }
    if (opts.profile) {
      const file = join(profileDir, `${kind}-steps-${store}.cpuprofile`);
      keepMainThreadProfile(sub, file);
      log(`${kind}: where each request's main-thread CPU goes (${file}):`);
      for (const [step, ws] of windows) log(stepReport(file, step, ws));
    }
  }
  rmSync(keyDir, { recursive: true, force: true });
  mkdirSync(opts.results, { recursive: true });
  writeFileSync(join(opts.results, 'steps.json'), `${JSON.stringify({ store, flows: n, steps: out }, null, 2)}\n`);
  log(`wrote ${join('bench', 'results', 'steps.json')}`);
}
