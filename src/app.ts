import Koa from 'koa';
import type Provider from 'oidc-provider';
import type { Config } from './config/schema.js';
import type { LoadedConfig } from './config/load.js';
import type { KeyOrigin, KeySet } from './keys/keys.js';
import type { KeyRing, SigningKeys } from './keys/keyRing.js';
import type { IssuerIdentity } from './keys/issuerIdentity.js';
import type { Store } from './store/types.js';
import type { VersionProfile } from './oidc/versions.js';
import type { WalletIssuer } from './issuance/walletIssuer.js';
import type { Verifier } from './verification/verifier.js';
import type { ClientIdentityOrigin } from './verification/clientIdentity.js';
import type { WebhookQueue } from './webhooks/queue.js';
import type { ExternalFlows } from './external/flows.js';
import type { Logger } from './log.js';
import type { Metrics } from './metrics/metrics.js';
import { buildCore, type Core, type CoreOptions } from './service/core.js';
import {
  mountAdmin,
  mountDemo,
  mountInteraction,
  mountOperations,
  mountRelyingPartyEdges,
  mountVerifier,
  mountWalletIssuer,
  otherProviderOf,
} from './service/sides.js';
import { outerApp } from './service/middleware.js';
import { exactPaths } from './http/exactPaths.js';
import { edgePaths } from './oidc/edge.js';
import type { Registrations } from './verification/registration.js';
import { walletIssuerPaths } from './issuance/issuerPaths.js';

export { trustedForwarding } from './service/middleware.js';

export interface Service {
  app: Koa;
  config: Config;
  store: Store;
  keys: KeySet;
  providers: Record<VersionProfile['id'], Provider>;
  walletIssuer: WalletIssuer;
  verifier: Verifier;
  logger: Logger;
  /** where each key set came from at start-up (D20), for the start-up log */
  keyOrigins: KeyOrigin[];
  /** the keys in use, kept current after a rotation (D20) */
  keyRing: KeyRing;
  /** where the verifier's certificate came from, and what an operator must read about it */
  verifierOrigin: ClientIdentityOrigin;
  /** ETSI TS 119 475: the clients' registration certificates, verified at start-up */
  registrations: Registrations;
  /** how our credentials are certified (HAIP 1.0 §6.1.1): where the issuer certificate came from */
  issuerOrigin: Omit<IssuerIdentity, 'operator' | 'ca'>;
  /** the credential keys as they sign: the operator's issuer.key, or the key ring's active key */
  credentialKeys: SigningKeys;
  /** D13: the webhook deliveries (every instance sends what is due) and the External Client flows */
  webhooks: WebhookQueue;
  external: ExternalFlows;
  /** Prometheus metrics; `listen()` (src/server.ts) serves them when metrics.port is set */
  metrics: Metrics;
  close(): Promise<void>;
}

export type ServiceOptions = CoreOptions;

/** The service's own app, inside the base URL's path: signed cookies, and the holder pages' texts and brand. */
function innerApp(core: Core): Koa {
  const inner = new Koa();
  inner.keys = core.cookieKeys;
  inner.proxy = true; // host and scheme are baseUrl's: trustedForwarding sets the headers proxy mode reads
  // first: another spelling of a provider's path is a 404 before any control or provider sees it
  inner.use(exactPaths(providerPaths(core)));
  // every holder page reads its language and the brand from here (src/ui/ui.ts pageTexts)
  inner.use((ctx, next) => {
    ctx.state.ui = core.ui;
    return next();
  });
  inner.use(core.ui.routes());
  return inner;
}

/**
 * The one list of the paths the oidc-provider instances serve and what the service serves beside them under
 * their mounts: the version edges' (both versions) and the wallet-facing issuers' (the configured one, and
 * the demo's PID issuer). The demo's identity provider (/demo/idv) has no control in front of it.
 */
function providerPaths(core: Core): string[] {
  return [...Object.values(core.profiles).flatMap(edgePaths), ...core.issuerPaths.flatMap(walletIssuerPaths)];
}

/**
 * The composition root (docs/architecture.md): the core first (store, keys, metrics, rate limits, where
 * wallet steps end), then each side mounted in the order requests are matched.
 */
export async function createService(loaded: LoadedConfig, opts: ServiceOptions = {}): Promise<Service> {
  const core = await buildCore(loaded, opts);
  const inner = innerApp(core);
  const otherProvider = otherProviderOf(core);
  mountRelyingPartyEdges(inner, core, otherProvider);
  const walletIssuer = mountWalletIssuer(inner, core);
  const verifier = mountVerifier(inner, core, walletIssuer);
  mountInteraction(inner, core, { walletIssuer, verifier, otherProvider });
  mountAdmin(inner, core, walletIssuer);
  await mountDemo(inner, core, walletIssuer);
  mountOperations(inner, core);
  const { config, issuerIdentity } = core;
  return {
    app: outerApp(core, inner),
    config,
    store: core.store,
    keys: core.keys,
    providers: core.providers,
    walletIssuer,
    verifier,
    logger: core.logger,
    keyOrigins: core.origins,
    keyRing: core.keyRing,
    verifierOrigin: core.verifierOrigin,
    registrations: core.registrations,
    issuerOrigin: { origin: issuerIdentity.origin, caFile: issuerIdentity.caFile, warnings: issuerIdentity.warnings },
    credentialKeys: core.credentialKeys,
    webhooks: core.webhooks,
    external: core.external,
    metrics: core.metrics,
    close: core.close,
  };
}
