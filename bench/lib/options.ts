/** What a bench run was asked for (bench/run.ts parses the command line into this) and each phase's size. */
import type { Phase } from './load.js';

/** Per phase: workers, warm-up, measured time (a whole phase: --sequential, --profile), at most this many operations; token: codes minted first. */
export interface PhaseConfig {
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  maxOps: number;
  tokenPool?: number;
}

export interface BenchOptions {
  quick: boolean;
  /** interleaved slices (the default) or, with --sequential, whole phases one after the other */
  interleave: boolean;
  rounds: number;
  /** --repeat N: whole runs of the comparison, combined into one report (bench/lib/report.ts) */
  repeat: number;
  /** an interleaved slice's length at most (it also ends when its share of the pool is used) */
  sliceMs: number;
  phases: Record<Phase, PhaseConfig>;
  /** --concurrency N: every phase with N workers instead of its own */
  concurrency: number | undefined;
  /** node's --cpu-prof-interval flag for --profile */
  profileInterval: string;
  /** Node/V8 flags for both servers of the comparison */
  comparisonFlags: string[];
  /** --gc-before: each measured part starts with a collected heap */
  gcBefore: boolean;
  /** --profile (with --steps: a profile per request) */
  profile: boolean;
  /** the raw lists; each mode has its own defaults */
  stores: string[] | undefined;
  scenarios: string[] | undefined;
  profileKinds: string[] | undefined;
  soakRequests: string | undefined;
  soakWait: string | undefined;
  redisUrl: string;
  runId: string;
  /** bench/results, or --results-dir */
  results: string;
}

/**
 * Per scenario: workers, warm-up, measured time, at most this many operations; token: codes minted before
 * the measured part. wallet_steps (baseline only, no row): the wallet's requests against bare
 * oidc-provider's OpenID4VCI issuer, after each round's issuance_flow; maxOps is also the pool of offers
 * minted before it. external_issuance_flow (ours only) runs in issuance_flow's rounds too, identity_flow
 * dc_api_verification_flow and annex_c_verification_flow (ours only) in verification_flow's. Interleaved, a slice takes its share of the pool (bench/modes/compare.ts).
 */
export function phaseConfig(quick: boolean, interleave: boolean, rounds: number): Record<Phase, PhaseConfig> {
  return quick
    ? {
        discovery: { concurrency: 16, warmupMs: 300, durationMs: 1_000, maxOps: 20_000 },
        par: { concurrency: 16, warmupMs: 300, durationMs: 1_000, maxOps: 3_000 },
        token: { concurrency: 16, warmupMs: 200, durationMs: 2_000, maxOps: 0, tokenPool: 100 },
        issuance_flow: { concurrency: 8, warmupMs: 300, durationMs: 1_500, maxOps: 2_000 },
        external_issuance_flow: { concurrency: 8, warmupMs: 300, durationMs: 1_500, maxOps: 2_000 },
        verification_flow: { concurrency: 8, warmupMs: 300, durationMs: 1_500, maxOps: 2_000 },
        identity_flow: { concurrency: 8, warmupMs: 300, durationMs: 1_500, maxOps: 2_000 },
        dc_api_verification_flow: { concurrency: 8, warmupMs: 300, durationMs: 1_500, maxOps: 2_000 },
        annex_c_verification_flow: { concurrency: 8, warmupMs: 300, durationMs: 1_500, maxOps: 2_000 },
        wallet_steps: { concurrency: 8, warmupMs: 300, durationMs: 1_500, maxOps: 600 },
      }
    : {
        discovery: { concurrency: 16, warmupMs: 1_000, durationMs: 3_000, maxOps: 100_000 },
        par: { concurrency: 16, warmupMs: 1_000, durationMs: 3_000, maxOps: 10_000 },
        token: {
          concurrency: 16,
          warmupMs: 1_000,
          durationMs: 10_000,
          maxOps: 0,
          tokenPool: interleave ? 500 * rounds : 1_500,
        },
        issuance_flow: { concurrency: 8, warmupMs: 10_000, durationMs: 4_000, maxOps: 50_000 },
        // shorter warm-up: it runs on a server issuance_flow has just warmed (the same path up to the wallet's credential)
        external_issuance_flow: { concurrency: 8, warmupMs: 5_000, durationMs: 4_000, maxOps: 50_000 },
        verification_flow: { concurrency: 8, warmupMs: 10_000, durationMs: 4_000, maxOps: 50_000 },
        // shorter warm-up: it runs on a server verification_flow has just warmed (the same verifier, another credential)
        identity_flow: { concurrency: 8, warmupMs: 5_000, durationMs: 4_000, maxOps: 50_000 },
        // as identity_flow: verification_flow has just warmed the same verifier
        dc_api_verification_flow: { concurrency: 8, warmupMs: 5_000, durationMs: 4_000, maxOps: 50_000 },
        annex_c_verification_flow: { concurrency: 8, warmupMs: 5_000, durationMs: 4_000, maxOps: 50_000 },
        wallet_steps: { concurrency: 8, warmupMs: 3_000, durationMs: 4_000, maxOps: 4_000 },
      };
}

export const log = (s: string) => process.stdout.write(`${s}\n`);
