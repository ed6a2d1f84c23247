/**
 * `--sequential`: a scenario of the comparison in whole phases, one after the other, each with its own
 * load process and warm-up (the method before the interleaved slices); ours and the baseline alternate
 * which goes first each round, so that drift on the machine hits both.
 */
import type { ServerHandle } from '../lib/children.js';
import type { Scenario } from '../lib/load.js';
import { phase, type PhaseDetail } from '../lib/measure.js';
import type { BenchOptions } from '../lib/options.js';

export async function sequential(opts: BenchOptions, scenario: Scenario, ours: ServerHandle, base: ServerHandle): Promise<PhaseDetail[]> {
  const out: PhaseDetail[] = [];
  for (let r = 1; r <= opts.rounds; r++) {
    for (const server of r % 2 === 1 ? [ours, base] : [base, ours]) out.push(await phase(opts, server, scenario, r));
    // what bare oidc-provider spends serving the wallet's requests: the allowance's price for them (same store, same round)
    if (scenario === 'issuance_flow') out.push(await phase(opts, base, 'wallet_steps', r));
  }
  return out;
}
