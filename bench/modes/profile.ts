/**
 * `--profile`: a server under node --cpu-prof during whole phases (default: ours, par and issuance_flow,
 * memory store), then the profile's top functions; profiles in bench/results/profiles/ (git-ignored).
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startServer } from '../lib/children.js';
import { keepMainThreadProfile, profileReport } from '../lib/cpuProfile.js';
import type { Phase } from '../lib/load.js';
import { phase, type PhaseDetail } from '../lib/measure.js';
import { log, type BenchOptions } from '../lib/options.js';
import { cleanRedis, makeKeys, serverSpec } from '../lib/setup.js';

export async function profileRun(opts: BenchOptions): Promise<void> {
  const dir = join(opts.results, 'profiles');
  mkdirSync(dir, { recursive: true });
  const keyDir = await makeKeys();
  const scenarios = (opts.scenarios ?? ['par', 'issuance_flow']) as Phase[]; // wallet_steps: the baseline's only
  const store = (opts.stores?.[0] ?? 'memory') as 'memory' | 'redis';
  const kinds = (opts.profileKinds ?? ['ours']) as ('ours' | 'baseline')[];
  for (const scenario of scenarios) {
    for (const kind of kinds) {
      // one folder per run, of which the main thread's profile is kept
      const sub = join(dir, `${kind}-${scenario}-${store}`);
      rmSync(sub, { recursive: true, force: true });
      mkdirSync(sub, { recursive: true });
      const server = await startServer(await serverSpec(opts, kind, store, keyDir), {
        nodeFlags: ['--cpu-prof', opts.profileInterval, `--cpu-prof-dir=${sub}`],
      });
      let measured: PhaseDetail | undefined;
      try {
        measured = await phase(opts, server, scenario);
      } finally {
        await server.stop();
        if (store === 'redis') await cleanRedis(opts.redisUrl, server.spec.redisPrefix);
      }
      const file = join(dir, `${kind}-${scenario}-${store}.cpuprofile`);
      keepMainThreadProfile(sub, file);
      writeFileSync(`${file}.window.json`, JSON.stringify({ ...measured.window, ops: measured.result.ok })); // for offline analysis
      log(profileReport(file, 25, measured.window, measured.result.ok));
    }
  }
  rmSync(keyDir, { recursive: true, force: true });
  log(`profiles in ${dir} (open in Chrome DevTools or speedscope): ${readdirSync(dir).join(', ')}`);
}
