/**
 * Child process: the load generator. One process per phase, driven over IPC by bench/run.ts:
 *   parent -> {type:'prepare', spec}   discovery, pools (hints, codes, credentials, offers), warm-up
 *   load   -> {type:'prepared', info}
 *   parent -> {type:'measure'}          (the parent samples the server's CPU around this)
 *   load   -> {type:'result', result}
 * A fixed number of workers (the concurrency), each sending its next request when the previous one
 * answered, over a keep-alive agent with as many sockets; every request's (or flow's) latency is kept.
 * Every loop is bounded in count and in time.
 */
import { performance } from 'node:perf_hooks';
import { HttpClient, json } from './http.js';
import { summarize } from './stats.js';
import {
  baselineFlow,
  discover,
  held,
  newHolderKey,
  oursExternalIssuance,
  oursIdentity,
  oursDcApiVerification,
  oursAnnexCVerification,
  mdlCredentials,
  oursIssuance,
  oursVerification,
  par,
  parParams,
  pidCredentials,
  pkce,
  redeem,
  rs256JwtsIn,
  signHint,
  walletRedeem,
  type CredentialOffer,
  type Endpoints,
  type HeldCredential,
  type HolderKey,
} from './flows.js';
import { ISSUE_SCOPE, readPidIssuerKey, VERIFY_SCOPE, WEBHOOK_SECRET } from './config.js';
import { startWebhookReceiver, type WebhookReceiver } from './webhookReceiver.js';

/** What latest.json reports, ours against the baseline (external_issuance_flow, identity_flow, dc_api_verification_flow, annex_c_verification_flow: ours only, the baseline has no such flow). */
export type Scenario =
  | 'discovery'
  | 'par'
  | 'token'
  | 'issuance_flow'
  | 'external_issuance_flow'
  | 'verification_flow'
  | 'identity_flow'
  | 'dc_api_verification_flow'
  | 'annex_c_verification_flow';
/**
 * Every phase: the scenarios, and `wallet_steps` (baseline only, never a row): the wallet's requests of
 * an issuance flow against bare oidc-provider's OpenID4VCI issuer, which prices them in the allowance.
 */
export type Phase = Scenario | 'wallet_steps';

export interface LoadSpec {
  scenario: Phase | 'soak';
  kind: 'ours' | 'baseline';
  url: string;
  concurrency: number;
  warmupMs: number;
  durationMs: number;
  /** measured operations at most */
  maxOps: number;
  /** token: codes minted before the phase (the phase ends when they are used up) */
  tokenPool: number;
  mintConcurrency: number;
  /** soak: HTTP requests to send in all */
  soakRequests?: number;
  /** soak: hint lifetime (s), so hint records expire within the run */
  hintLifetime?: number;
  /** external_issuance_flow: where this process receives our server's webhooks (its config names the port) */
  webhookPort?: number;
  /** the run's key folder (setup.ts makeKeys): identity_flow signs its PIDs with the bench PID issuer's key there */
  keyDir?: string;
}

export interface PhaseResult {
  ok: number;
  errors: number;
  firstError?: string;
  elapsedMs: number;
  rps: number;
  p50: number;
  p99: number;
  mean: number;
  /** HTTP requests the phase sent (a flow is several) */
  httpRequests: number;
  /** the load process's own CPU during the phase (to see whether it, not the server, was the limit) */
  loadCpuMs: number;
  extra: Record<string, unknown>;
}

type Op = (vu: number, i: number) => Promise<void>;

/** Runs `op` with `concurrency` workers until `durationMs` passes or `maxOps` operations started. */
async function runPhase(
  client: HttpClient,
  op: Op,
  o: { concurrency: number; durationMs: number; maxOps: number; stop?: () => boolean },
): Promise<PhaseResult> {
  const latencies: number[] = [];
  let errors = 0;
  let firstError: string | undefined;
  let started = 0;
  const sent0 = client.sent;
  const cpu0 = process.cpuUsage();
  const start = performance.now();
  const deadline = start + o.durationMs;
  const errorBudget = Math.max(50, o.maxOps * 0.2);
  const worker = async (vu: number) => {
    while (started < o.maxOps && performance.now() < deadline && errors < errorBudget && !o.stop?.()) {
      const i = started++;
      const t0 = performance.now();
      try {
        await op(vu, i);
        latencies.push(performance.now() - t0);
      } catch (err) {
        errors++;
        firstError ??= (err as Error).message;
      }
    }
  };
  await Promise.all(Array.from({ length: o.concurrency }, (_, vu) => worker(vu)));
  const elapsedMs = performance.now() - start;
  const cpu = process.cpuUsage(cpu0);
  const s = summarize(latencies);
  return {
    ok: latencies.length,
    errors,
    firstError,
    elapsedMs,
    rps: latencies.length / (elapsedMs / 1000),
    p50: s.p50,
    p99: s.p99,
    mean: s.mean,
    httpRequests: client.sent - sent0,
    loadCpuMs: (cpu.user + cpu.system) / 1000,
    extra: {},
  };
}

const discoveryPath = (kind: LoadSpec['kind']) =>
  kind === 'ours' ? '/v2.0/.well-known/openid-configuration' : '/.well-known/openid-configuration';

interface Prepared {
  op: Op;
  maxOps: number;
  info: Record<string, unknown>;
  /** before a measured part (not the warm-up) */
  before?: () => void;
  /** after the phase: anything to add to the result */
  after?: (r: PhaseResult) => void;
}

/** Mints authorization codes by running complete flows (ours: with the wallet step) without redeeming them. */
async function mintCodes(
  client: HttpClient,
  ep: Endpoints,
  spec: LoadSpec,
  n: number,
  issuer: string,
): Promise<{ code: string; verifier: string }[]> {
  const out: { code: string; verifier: string }[] = [];
  const holders = await Promise.all(Array.from({ length: spec.mintConcurrency }, () => newHolderKey()));
  const r = await runPhase(
    client,
    async (vu) => {
      const f =
        spec.kind === 'ours'
          ? await oursIssuance(client, ep, { hint: signHint(issuer), holder: holders[vu], redeem: false })
          : await baselineFlow(client, ep, { redeem: false });
      out.push({ code: f.code, verifier: f.verifier });
    },
    { concurrency: spec.mintConcurrency, durationMs: 240_000, maxOps: n },
  );
  if (out.length < n) throw new Error(`minted ${out.length} of ${n} codes (${r.errors} errors: ${r.firstError})`);
  return out;
}

/** wallet_steps: offers per minting request (the baseline's route takes at most 1000) */
const MINT_BATCH = 1_000;

async function prepare(client: HttpClient, spec: LoadSpec): Promise<Prepared> {
  const ep = await discover(client, discoveryPath(spec.kind));
  const issuer = spec.kind === 'ours' ? new URL(spec.url).origin : spec.url;
  const ours = spec.kind === 'ours';
  switch (spec.scenario) {
    case 'discovery': {
      return {
        maxOps: spec.maxOps,
        info: {},
        op: async () => {
          const res = await client.get(ep.discovery, { accept: 'application/json' });
          if (res.status !== 200) throw new Error(`discovery: ${res.status}`);
        },
      };
    }
    case 'par': {
      // hints are single use: a fresh jti per request, all signed before measuring
      const n = spec.maxOps;
      const t0 = performance.now();
      const hints = ours ? Array.from({ length: n }, () => signHint(issuer)) : [];
      const { challenge } = pkce();
      const base = parParams(ISSUE_SCOPE, challenge);
      return {
        maxOps: n,
        info: { hintsPresigned: hints.length, presignMs: Math.round(performance.now() - t0) },
        op: async (_vu, i) => {
          await par(client, ep, ours ? { ...base, id_token_hint: hints[i] } : base);
        },
      };
    }
    case 'token': {
      const t0 = performance.now();
      const codes = await mintCodes(client, ep, spec, spec.tokenPool, issuer);
      const decoded: { distinct: number; same: boolean }[] = [];
      return {
        maxOps: codes.length,
        info: { codesMinted: codes.length, mintMs: Math.round(performance.now() - t0) },
        op: async (_vu, i) => {
          const res = await redeem(client, ep, codes[i].code, codes[i].verifier);
          if (decoded.length < 500) {
            const d = rs256JwtsIn(res.body);
            decoded.push({ distinct: d.distinct, same: d.accessTokenIsIdToken });
          }
        },
        after: (r) => {
          r.extra.decodedResponses = decoded.length;
          r.extra.rs256JwtsPerResponse = decoded.length
            ? decoded.reduce((a, d) => a + d.distinct, 0) / decoded.length
            : null;
          r.extra.accessTokenIsIdToken = decoded.length ? decoded.every((d) => d.same) : null;
        },
      };
    }
    case 'issuance_flow': {
      const holders: HolderKey[] = await Promise.all(Array.from({ length: spec.concurrency }, () => newHolderKey()));
      return {
        maxOps: spec.maxOps,
        info: {},
        op: async (vu) => {
          if (ours) await oursIssuance(client, ep, { hint: signHint(issuer), holder: holders[vu], redeem: true });
          else await baselineFlow(client, ep, { redeem: true, scope: ISSUE_SCOPE });
        },
      };
    }
    case 'external_issuance_flow': {
      if (!ours)
        throw new Error(
          'external_issuance_flow runs against ours only (bare oidc-provider has no External Client flow)',
        );
      if (spec.webhookPort === undefined) throw new Error('external_issuance_flow: no port for the webhook receiver');
      receiver = await startWebhookReceiver(spec.webhookPort, WEBHOOK_SECRET);
      const webhooks = receiver;
      const holders: HolderKey[] = await Promise.all(Array.from({ length: spec.concurrency }, () => newHolderKey()));
      let waits: number[] = [];
      return {
        maxOps: spec.maxOps,
        info: {},
        op: async (vu) => {
          const f = await oursExternalIssuance(client, ep, {
            hint: signHint(issuer),
            holder: holders[vu],
            webhooks,
            redeem: true,
          });
          waits.push(f.webhookWaitMs);
        },
        before: () => {
          waits = [];
        },
        // the flow's latency includes this wait (the service's poller sends at once on enqueue)
        after: (r) => {
          const w = summarize(waits);
          r.extra.webhookWaitMs = { p50: w.p50, p99: w.p99 };
          r.extra.webhooksSoFar = { ...webhooks.counts };
        },
      };
    }
    case 'verification_flow': {
      // the holders' wallets: one credential each, issued through our issuance flow
      const credentials: HeldCredential[] = [];
      if (ours) {
        for (let vu = 0; vu < spec.concurrency; vu++) {
          const holder = await newHolderKey();
          const f = await oursIssuance(client, ep, { hint: signHint(issuer), holder, redeem: true });
          credentials.push(held(f.credential!, holder));
        }
      }
      return {
        maxOps: spec.maxOps,
        info: { credentialsIssued: credentials.length },
        op: async (vu) => {
          if (ours) await oursVerification(client, ep, { credential: credentials[vu], redeem: true });
          else await baselineFlow(client, ep, { redeem: true, scope: VERIFY_SCOPE });
        },
      };
    }
    case 'dc_api_verification_flow': {
      if (!ours)
        throw new Error('dc_api_verification_flow runs against ours only (bare oidc-provider has no wallet step)');
      // the holders' wallets: one credential each, issued through our issuance flow (before the warm-up)
      const credentials: HeldCredential[] = [];
      for (let vu = 0; vu < spec.concurrency; vu++) {
        const holder = await newHolderKey();
        const f = await oursIssuance(client, ep, { hint: signHint(issuer), holder, redeem: true });
        credentials.push(held(f.credential!, holder));
      }
      return {
        maxOps: spec.maxOps,
        info: { credentialsIssued: credentials.length },
        op: async (vu) => {
          await oursDcApiVerification(client, ep, { credential: credentials[vu], redeem: true });
        },
      };
    }
    case 'annex_c_verification_flow': {
      if (!ours)
        throw new Error('annex_c_verification_flow runs against ours only (bare oidc-provider has no wallet step)');
      if (spec.keyDir === undefined) throw new Error('annex_c_verification_flow: no key folder for the bench IACA');
      // the holders' wallets: one mDL each, from the bench IACA (not our server: none of its CPU)
      const credentials = await mdlCredentials(spec.keyDir, spec.concurrency);
      // once, before the warm-up: the ID token carries the mDL's claims (so the flow measured is the Annex C flow)
      const first = await oursAnnexCVerification(client, ep, { credential: credentials[0], redeem: true });
      const idToken = JSON.parse(
        Buffer.from(String(JSON.parse(first.token!.body).id_token).split('.')[1], 'base64url').toString('utf8'),
      ) as Record<string, unknown>;
      if (idToken.family_name !== 'Lovelace' || idToken.given_name !== 'Ada')
        throw new Error(
          `annex_c_verification_flow: the ID token does not carry the mDL's claims: ${JSON.stringify(idToken).slice(0, 300)}`,
        );
      return {
        maxOps: spec.maxOps,
        info: { credentialsIssued: credentials.length },
        op: async (vu) => {
          await oursAnnexCVerification(client, ep, { credential: credentials[vu], redeem: true });
        },
      };
    }
    case 'identity_flow': {
      if (!ours)
        throw new Error('identity_flow runs against ours only (bare oidc-provider has no VerifiedIdentity flow)');
      if (spec.keyDir === undefined) throw new Error('identity_flow: no key folder for the bench PID issuer');
      // the holders' wallets: one PID each, from the bench PID issuer (not our server: none of its CPU)
      const credentials = await pidCredentials(readPidIssuerKey(spec.keyDir).privateJwk, spec.concurrency);
      // once, before the warm-up: the ID token carries the PID's claims (so the flow measured is the identity flow)
      const first = await oursIdentity(client, ep, { credential: credentials[0], redeem: true });
      const idToken = JSON.parse(
        Buffer.from(String(JSON.parse(first.token!.body).id_token).split('.')[1], 'base64url').toString('utf8'),
      ) as Record<string, unknown>;
      if (
        idToken.given_name !== 'Ada' ||
        idToken.birthdate !== '1815-12-10' ||
        typeof idToken.sub !== 'string' ||
        'personal_administrative_number' in idToken
      ) {
        throw new Error(
          `identity_flow: the ID token does not carry the PID's claims: ${JSON.stringify(idToken).slice(0, 300)}`,
        );
      }
      return {
        maxOps: spec.maxOps,
        info: { pidsIssued: credentials.length },
        op: async (vu) => {
          await oursIdentity(client, ep, { credential: credentials[vu], redeem: true });
        },
      };
    }
    case 'wallet_steps': {
      if (ours) throw new Error('wallet_steps runs against the baseline only');
      // offers by value, minted on the bare issuer before the warm-up (the server's CPU is sampled later)
      const t0 = performance.now();
      const offers: CredentialOffer[] = [];
      let mintCpuUs = 0;
      let statusCpuUs = 0;
      const batches = Math.ceil(spec.maxOps / MINT_BATCH);
      for (let b = 0; b < batches; b++) {
        const n = Math.min(MINT_BATCH, spec.maxOps - offers.length);
        const answer = json(
          await client.request('POST', `/bench/offers?n=${n}`, {
            headers: { accept: 'application/json' },
            timeoutMs: 120_000,
          }),
          200,
          'minting offers',
        );
        const minted = answer.offers as CredentialOffer[];
        if (minted.length !== n) throw new Error(`minting offers: asked for ${n}, got ${minted.length}`);
        offers.push(...minted);
        mintCpuUs += Number(answer.cpuUs);
        statusCpuUs += Number(answer.statusCpuUs);
      }
      // one holder key per virtual user, as issuance_flow
      const holders: HolderKey[] = await Promise.all(Array.from({ length: spec.concurrency }, () => newHolderKey()));
      return {
        maxOps: offers.length,
        // the server's CPU per offer minted (measured in the server around the minting itself)
        info: {
          offersMinted: offers.length,
          mintMs: Math.round(performance.now() - t0),
          mintCpuMsPerOffer: mintCpuUs / 1000 / offers.length,
          statusEntryCpuMsPerOffer: statusCpuUs / 1000 / offers.length,
        },
        op: async (vu, i) => {
          // bare oidc-provider serves the metadata under its mount path and needs the wallet client's id at the token endpoint
          await walletRedeem(client, offers[i], holders[vu], { metadata: 'appended', clientId: 'wallet' });
        },
      };
    }
    default:
      throw new Error(`unknown scenario ${spec.scenario}`);
  }
}

/** --soak: issuance flows and abandoned PAR requests (hint + PAR record, never redeemed) until N requests. */
async function soak(client: HttpClient, spec: LoadSpec): Promise<PhaseResult> {
  const ep = await discover(client, discoveryPath('ours'));
  const issuer = new URL(spec.url).origin;
  const total = spec.soakRequests ?? 100_000;
  const holders = await Promise.all(Array.from({ length: spec.concurrency }, () => newHolderKey()));
  const { challenge } = pkce();
  const base = parParams(ISSUE_SCOPE, challenge);
  const flows = Math.max(1, Math.floor(spec.concurrency / 2));
  let lastReport = performance.now();
  let issuanceFlows = 0;
  let abandonedPars = 0;
  const r = await runPhase(
    client,
    async (vu) => {
      if (vu < flows) {
        await oursIssuance(client, ep, {
          hint: signHint(issuer, spec.hintLifetime),
          holder: holders[vu],
          redeem: true,
        });
        issuanceFlows++;
      } else {
        await par(client, ep, { ...base, id_token_hint: signHint(issuer, spec.hintLifetime) });
        abandonedPars++;
      }
      if (performance.now() - lastReport > 5_000) {
        lastReport = performance.now();
        process.send?.({ type: 'progress', requests: client.sent });
      }
    },
    { concurrency: spec.concurrency, durationMs: spec.durationMs, maxOps: total, stop: () => client.sent >= total },
  );
  r.extra.totalHttpRequests = client.sent;
  r.extra.issuanceFlows = issuanceFlows;
  r.extra.abandonedPars = abandonedPars;
  return r;
}

let client: HttpClient | undefined;
let receiver: WebhookReceiver | undefined;
let prepared: Prepared | undefined;
let spec: LoadSpec | undefined;

process.on('message', (msg: { type: string; spec?: LoadSpec; slice?: { durationMs: number; maxOps: number } }) => {
  void (async () => {
    try {
      if (msg.type === 'prepare') {
        spec = msg.spec!;
        client = new HttpClient(spec.url, Math.max(spec.concurrency, spec.mintConcurrency));
        if (spec.scenario === 'soak') {
          process.send?.({ type: 'prepared', info: {} });
          return;
        }
        prepared = await prepare(client, spec);
        // warm-up: the same operation, not measured (PAR and token take their own fresh hints/codes first)
        const warm = await runPhase(client, prepared.op, {
          concurrency: spec.concurrency,
          durationMs: spec.warmupMs,
          maxOps: Math.floor(prepared.maxOps / 10),
        });
        if (warm.ok === 0 && warm.errors > 0) throw new Error(`warm-up failed: ${warm.firstError}`);
        const skip = warm.ok + warm.errors; // operations the warm-up used up (by index)
        const inner = prepared.op;
        prepared = { ...prepared, maxOps: prepared.maxOps - skip, op: (vu, i) => inner(vu, i + skip) };
        process.send?.({
          type: 'prepared',
          info: { ...prepared.info, warmupOps: warm.ok, warmupErrors: warm.errors, warmupError: warm.firstError },
        });
      } else if (msg.type === 'measure') {
        if (spec!.scenario === 'soak') {
          process.send?.({ type: 'result', result: await soak(client!, spec!) });
          return;
        }
        const p = prepared!;
        // a slice (interleaved measurement): a part of the phase; the next one goes on with the pools' next items
        const slice = msg.slice;
        p.before?.();
        const result = await runPhase(client!, p.op, {
          concurrency: spec!.concurrency,
          durationMs: slice?.durationMs ?? spec!.durationMs,
          maxOps: slice ? Math.min(slice.maxOps, p.maxOps) : p.maxOps,
        });
        p.after?.(result);
        const used = result.ok + result.errors;
        const inner = p.op;
        prepared = { ...p, maxOps: p.maxOps - used, op: (vu, i) => inner(vu, i + used) };
        process.send?.({ type: 'result', result });
      } else if (msg.type === 'exit') {
        client?.close();
        await receiver?.close();
        process.exit(0);
      }
    } catch (err) {
      process.send?.({ type: 'error', error: (err as Error).stack ?? String(err) });
    }
  })();
});
process.on('disconnect', () => process.exit(0));
process.send?.({ type: 'up' });
