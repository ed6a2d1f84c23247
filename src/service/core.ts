import type { LookupFunction } from 'node:net';
import type Provider from 'oidc-provider';
import type { JWK } from 'jose';
import type { Config, ClientConfig, CredentialType } from '../config/schema.js';
import { ConfigError, type LoadedConfig } from '../config/load.js';
import type { KeyOrigin, KeySet } from '../keys/keys.js';
import { KeyRing, keepPeriods, type SigningKeys } from '../keys/keyRing.js';
import { operatorSigningKeys, type IssuerIdentity } from '../keys/issuerIdentity.js';
import type { Store } from '../store/types.js';
import { createStore } from '../store/create.js';
import { RedisStore } from '../store/redis.js';
import { versionProfiles, type VersionProfile } from '../oidc/versions.js';
import { createRpProvider } from '../oidc/provider.js';
import type { ClientIdentity, ClientIdentityOrigin } from '../verification/clientIdentity.js';
import type { Registrations } from '../verification/registration.js';
import { OfferBook } from '../issuance/offers.js';
import { WalletSteps } from '../interaction/steps.js';
import { GrantClaims } from '../flow/flowClaims.js';
import { WebhookQueue, webhookTargets } from '../webhooks/queue.js';
import { ExternalFlows } from '../external/flows.js';
import { PairwiseSubjects } from '../identity/subject.js';
import { HolderUi } from '../ui/ui.js';
import { ImageError } from '../ui/images.js';
import { CatalogueError } from '../i18n/catalogues.js';
import { DEMO_PID_PATH } from '../demo/pid.js';
import { createLogger, type Logger } from '../log.js';
import { Metrics } from '../metrics/metrics.js';
import { FlowEvents } from '../metrics/flowEvents.js';
import { RateLimits, storeKeyPrefix } from '../http/rateLimits.js';
import { outboundFromConfig, type OutboundFetch } from '../http/outboundFetch.js';
import type { CookieKeys } from '../http/cookieKeys.js';
import { tracingOn } from '../telemetry/tracing.js';
import { tracedStore } from '../telemetry/store.js';
import { StepOutcomes } from './stepOutcomes.js';
import { keyRingOf, loadIdentities } from './identities.js';
import type { IssuerCa } from '../keys/issuerCertificate.js';

export interface CoreOptions {
  store?: Store;
  logger?: Logger;
  /** false: no periodic webhook deliveries, expiry watch or key reloads from this process */
  background?: boolean;
  /** the DNS of outbound fetches (node's dns.lookup; a test names its hosts here) */
  lookup?: LookupFunction;
}

/** What every side of the service is built on: the store, the keys, metrics and limits, and the flows' ends. */
export interface Core {
  loaded: LoadedConfig;
  config: Config;
  logger: Logger;
  ui: HolderUi;
  store: Store;
  keys: KeySet;
  origins: KeyOrigin[];
  keyRing: KeyRing;
  issuerIdentity: IssuerIdentity;
  /** the issuer identifiers we sign credentials as (the wallet issuer, the demo's PID issuer) */
  issuers: string[];
  /** how long what each key set signed may still be checked (D20) */
  keep: ReturnType<typeof keepPeriods>;
  clientIdentity: ClientIdentity;
  verifierOrigin: ClientIdentityOrigin;
  /** ETSI TS 119 475: the clients' registration certificates, verified at start-up */
  registrations: Registrations;
  /** config demo: true: the demo's test IACA (src/demo/iaca.ts) */
  demoIaca?: IssuerCa;
  credentialKeys: SigningKeys;
  cookieKeys: CookieKeys;
  /** the root of secrets derived alike on every instance and never rotated (PIN hashes, nonces, demo forms) */
  derivedRoot: string;
  /** the ID-token keys published now (D20: they change with a rotation) */
  publicKeys: () => { keys: JWK[] };
  clients: ReadonlyMap<string, ClientConfig>;
  credentialTypes: ReadonlyMap<string, CredentialType>;
  profiles: Record<VersionProfile['id'], VersionProfile>;
  providers: Record<VersionProfile['id'], Provider>;
  metrics: Metrics;
  flowEnds: FlowEvents;
  rateLimits: RateLimits;
  webhooks: WebhookQueue;
  steps: WalletSteps;
  subjects: PairwiseSubjects;
  external: ExternalFlows;
  grantClaims: GrantClaims;
  stepOutcomes: StepOutcomes;
  /** every fetch of keys, metadata and status lists, under the operator's rules (src/http/outboundFetch.ts) */
  outbound: OutboundFetch;
  /** the wallet issuers' paths (the configured one, and the demo's PID issuer) and the base URL's path */
  issuerPaths: string[];
  basePath: string;
  close(): Promise<void>;
}

/** One relying-party provider per version profile (src/oidc/versions.ts). */
async function providersOf(
  profiles: Record<VersionProfile['id'], VersionProfile>,
  deps: Parameters<typeof createRpProvider>[1],
): Promise<Record<VersionProfile['id'], Provider>> {
  const providers: Partial<Record<VersionProfile['id'], Provider>> = {};
  for (const profile of Object.values(profiles)) providers[profile.id] = await createRpProvider(profile, deps);
  return providers as Record<VersionProfile['id'], Provider>;
}

/** The metrics, and the flows' ends, each counted and audited once where it is decided (src/metrics/flowEvents.ts). */
function observe(config: Config, store: Store, logger: Logger, paths: { issuerPaths: string[]; basePath: string }) {
  const metrics = new Metrics(config.metrics, { clients: config.clients.map((c) => c.clientId), ...paths });
  const flowEnds = new FlowEvents(metrics, logger);
  // per client and per source address, on the store (shared by every instance on Redis)
  const rateLimits = new RateLimits(config.rateLimits, store, {
    keyPrefix: storeKeyPrefix(config.store),
    onLimited: (endpoint) => metrics.rateLimited(endpoint),
  });
  const stopCountingStoreErrors =
    store instanceof RedisStore ? store.onUnavailable(() => metrics.storeError()) : undefined;
  return { metrics, flowEnds, rateLimits, stopCountingStoreErrors };
}

/**
 * Where wallet steps end: the steps, External Client flows (D13: events delivered from the store by every
 * instance) and the one object that owns a step's outcome (StepOutcomes), built before the sides that call it.
 */
function flowsOf(
  core: { config: Config; store: Store; logger: Logger; flowEnds: FlowEvents; metrics: Metrics; pairwise: string },
  poll: boolean,
) {
  const { config, store, logger, flowEnds, metrics } = core;
  const webhooks = new WebhookQueue(store, webhookTargets(config.clients), config.webhooks, logger, {
    poll,
    onAttempt: (outcome) => metrics.webhookDelivery(outcome),
  });
  const steps = new WalletSteps(store);
  const offers = new OfferBook(store);
  const external = new ExternalFlows(store, webhooks, config.lifetimes, logger, {
    poll,
    // an offer redeemed in time can still be issued after the prompt's expiry (until its record is kept);
    // a presentation the holder asked afresh for is open until its fresh request expires
    openUntil: async (stepId) => {
      const step = await steps.find(stepId);
      if (step?.offerId) return offers.issuableUntil(step.offerId);
      return step?.requestId ? step.expiresAt : undefined;
    },
    onEnded: (stepId, request, outcome) => flowEnds.externalEnded(stepId, request, outcome),
  });
  // D12: pairwise subjects of the identity flows, alike on every instance
  const subjects = new PairwiseSubjects(core.pairwise);
  const clients = new Map<string, ClientConfig>(config.clients.map((c) => [c.clientId, c]));
  const stepOutcomes = new StepOutcomes({
    steps,
    external,
    flowEnds,
    subjects,
    clients,
    interactionLifetime: config.lifetimes.interaction,
  });
  return { webhooks, steps, external, subjects, clients, stepOutcomes, grantClaims: new GrantClaims(store) };
}

/** Closes the store the service opened itself (not one it was given) when the start-up fails. */
const closingOnFailure = <T>(work: Promise<T>, store: Store, owned: boolean): Promise<T> =>
  work.catch(async (err) => {
    if (owned) await store.close();
    throw err;
  });

/**
 * The core, in order: catalogues and logos first (a broken one stops the start-up before anything opens),
 * the store, the identities, the key ring, one provider per version, metrics and limits, the flows' ends.
 */
export async function buildCore(loaded: LoadedConfig, opts: CoreOptions = {}): Promise<Core> {
  const { config } = loaded;
  const logger = opts.logger ?? createLogger(config.logLevel);
  const background = opts.background !== false;
  const ui = await HolderUi.load(config, loaded.baseDir, logger).catch((err) => {
    throw err instanceof CatalogueError || err instanceof ImageError
      ? new ConfigError(loaded.file, [err.message])
      : err;
  });
  const untraced = opts.store ?? (await createStore(config.store));
  // with tracing on, a span per store operation (src/telemetry/store.ts); off, the store itself
  const store = tracingOn() ? tracedStore(untraced) : untraced;
  const id = await closingOnFailure(loadIdentities(loaded, store), store, !opts.store);
  const keyRing = keyRingOf(id, store, logger);
  if (background) keyRing.start(config.keys.rotation.reloadInterval * 1000);
  const cookieKeys = keyRing.cookieKeys;
  const profiles = versionProfiles(config.baseUrl, config.versions);
  const providers = await providersOf(profiles, { config, store, idTokenKeys: keyRing.idToken, cookieKeys });
  const basePath = new URL(config.baseUrl).pathname.replace(/\/$/, '');
  const issuerPaths = config.demo ? [config.walletPath, DEMO_PID_PATH] : [config.walletPath];
  const seen = observe(config, store, logger, { issuerPaths, basePath });
  const outbound = outboundFromConfig(config, opts.lookup);
  const flows = flowsOf(
    { config, store, logger, flowEnds: seen.flowEnds, metrics: seen.metrics, pairwise: id.keys.pairwise[0] },
    background,
  );
  return {
    ...seen,
    ...flows,
    loaded,
    config,
    logger,
    ui,
    store,
    keys: id.keys,
    origins: id.origins,
    keyRing,
    issuerIdentity: id.issuerIdentity,
    issuers: id.issuers,
    keep: id.keep,
    clientIdentity: id.clientIdentity,
    verifierOrigin: id.verifierOrigin,
    registrations: id.registrations,
    ...(id.demoIaca ? { demoIaca: id.demoIaca } : {}),
    // with the operator's certificate, issuer.key signs; otherwise the key ring's active credential key
    credentialKeys: id.issuerIdentity.operator
      ? operatorSigningKeys(id.issuerIdentity.operator, keyRing.credential)
      : keyRing.credential,
    cookieKeys,
    derivedRoot: keyRing.pairwise,
    publicKeys: () => keyRing.idToken.published(),
    credentialTypes: new Map<string, CredentialType>(config.credentialTypes.map((t) => [t.name, t])),
    profiles,
    providers,
    issuerPaths,
    basePath,
    outbound,
    close: async () => {
      seen.stopCountingStoreErrors?.();
      await seen.metrics.close();
      keyRing.close();
      await Promise.all([flows.webhooks.close(), flows.external.close()]);
      await Promise.all([store.close(), outbound.close()]);
    },
  };
}
