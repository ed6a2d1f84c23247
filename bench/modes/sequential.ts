/**
 * `--sequential`: a scenario of the comparison in whole phases, one after the other, each with its own
 * load process and warm-up (the method before the interleaved slices); ours and the baseline alternate
 * which goes first each round, so that drift on the machine hits both.
 */
import type { ServerHandle } from '../lib/children.js';
import type { Phase, Scenario } from '../lib/load.js';
import { phase, type PhaseDetail } from '../lib/measure.js';
import type { BenchOptions } from '../lib/options.js';

/**
 * `others`: the scenario's companions (./compare.ts), each a phase of its own after ours and the baseline
 * in every round: for issuance_flow, what bare oidc-provider spends serving the wallet's requests (the
 * allowance's price for them, same store, same round) and our external_issuance_flow; for verification_flow,
 * our identity_flow, dc_api_verification_flow and annex_c_verification_flow.
 */
export async function sequential(
  opts: BenchOptions,
  scenario: Scenario,
  ours: ServerHandle,
  base: ServerHandle,
  others: [ServerHandle, Phase][] = [],
): Promise<PhaseDetail[]> {
  const out: PhaseDetail[] = [];
  for (let r = 1; r <= opts.rounds; r++) {
    for (const server of r % 2 === 1 ? [ours, base] : [base, ours]) out.push(await phase(opts, server, scenario, r));
    for (const [server, name] of others) out.push(await phase(opts, server, name, r));
  }
  return out;
}
