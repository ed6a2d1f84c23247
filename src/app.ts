import { randomUUID } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import Koa, { type Context } from 'koa';
import mount from 'koa-mount';
import type Provider from 'oidc-provider';
import type { Config, ClientConfig, CredentialType } from './config/schema.js';
import { ConfigError, type LoadedConfig } from './config/load.js';
import { loadKeys, type KeyOrigin, type KeySet } from './keys/keys.js';
import { KeyRing, keepPeriods, type SigningKeys } from './keys/keyRing.js';
import { certifyCredentialKeys, certifySet, loadIssuerIdentity, signingIssuers, operatorSigningKeys, type IssuerIdentity } from './keys/issuerIdentity.js';
import type { Store } from './store/types.js';
import { createStore } from './store/create.js';
import { RedisStore, StoreUnavailableError } from './store/redis.js';
import { versionProfiles, type VersionProfile } from './oidc/versions.js';
import { createRpProvider } from './oidc/provider.js';
import { createVersionEdge } from './oidc/edge.js';
import { PinHasher } from './rules/pinHash.js';
import { createWalletIssuer, type WalletIssuer } from './issuance/walletIssuer.js';
import { adminRoutes } from './admin/routes.js';
import { changeStatus } from './admin/credentials.js';
import { AttestationKeys } from './issuance/attestationKeys.js';
import { createInteractionRoutes } from './interaction/routes.js';
import { WalletSteps } from './interaction/steps.js';
import { router } from './http/router.js';
import { GrantClaims, issuanceFlowClaims, verificationFlowClaims, type FlowClaims } from './flow/flowClaims.js';
import { WebhookQueue, webhookTargets } from './webhooks/queue.js';
import { ExternalFlows } from './external/flows.js';
import { createVerifier, type Verifier } from './verification/verifier.js';
import { loadClientIdentity, type ClientIdentityOrigin } from './verification/clientIdentity.js';
import { PairwiseSubjects } from './identity/subject.js';
import { pidFlowClaims, pidRequestKind } from './identity/pid.js';
import { CALLBACK_PATH, OtherProvider } from './identity/otherProvider.js';
import { renderMessage } from './interaction/views/message.js';
import { HolderUi, pageTexts } from './ui/ui.js';
import { ImageError } from './ui/images.js';
import { CatalogueError } from './i18n/catalogues.js';
import { createDemoRoutes } from './demo/routes.js';
import { createDemoPidIssuer, DEMO_PID_PATH, DEMO_PID_TYPE } from './demo/pid.js';
import { createDemoIdvProvider } from './demo/idvProvider.js';
import { createLogger, loggablePath, type Logger } from './log.js';
import { Metrics } from './metrics/metrics.js';
import { FlowEvents } from './metrics/flowEvents.js';
import { ClientAborted } from './http/form.js';
import { RateLimited, RateLimits, storeKeyPrefix } from './http/rateLimits.js';
import { sendPage } from './http/page.js';
import { sendError } from './http/respond.js';
import { ProtocolError } from './rules/errors.js';
import { tracingOn } from './telemetry/tracing.js';
import { requestSpans } from './telemetry/spans.js';
import { tracedStore } from './telemetry/store.js';
import { routeTemplates } from './telemetry/routes.js';

export interface Service {
  app: Koa;
  config: Config;
  store: Store;
  keys: KeySet;
  providers: Record<'v1' | 'v2', Provider>;
  walletIssuer: WalletIssuer;
  verifier: Verifier;
  logger: Logger;
  /** where each key set came from at start-up (D20), for the start-up log */
  keyOrigins: KeyOrigin[];
  /** the keys in use, kept current after a rotation (D20) */
  keyRing: KeyRing;
  /** where the verifier's certificate came from, and what an operator must read about it */
  verifierOrigin: ClientIdentityOrigin;
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

export interface ServiceOptions {
  store?: Store;
  logger?: Logger;
  /** false: no periodic webhook deliveries or expiry watch from this process */
  background?: boolean;
}

/**
 * The outermost edge, once: nothing the service publishes or builds comes from request headers.
 * - `Forwarded` and every `X-Forwarded-*` header are dropped, except `X-Forwarded-For` from a connection
 *   whose address is in `trustedProxies` (config; none by default). The client address (`ctx.ip`, in the
 *   request log) is the rightmost `X-Forwarded-For` entry that is not itself a trusted proxy, or the
 *   connection's address.
 * - `Host`, `X-Forwarded-Host` and `X-Forwarded-Proto` are set from `baseUrl`. The apps keep `proxy` on,
 *   so Koa and oidc-provider (which builds its URLs from the request's origin, e.g. the wallet issuer's
 *   metadata) see baseUrl's host and scheme, and cookies are `Secure` when baseUrl is `https://`.
 */
export function trustedForwarding(baseUrl: string, trustedProxies: readonly string[]): Koa.Middleware {
  const base = new URL(baseUrl);
  const proto = base.protocol.slice(0, -1);
  const trusted = new BlockList();
  for (const entry of trustedProxies) {
    const [address, prefix] = entry.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) trusted.addAddress(address, family);
    else trusted.addSubnet(address, Number(prefix), family);
  }
  // BlockList matches IPv4-mapped IPv6 addresses (::ffff:10.0.0.1) against IPv4 rules and back
  const isTrusted = (address: string | undefined): boolean => {
    if (trustedProxies.length === 0) return false; // the default: no proxy is trusted
    const family = address ? isIP(address) : 0;
    return family !== 0 && trusted.check(address!, family === 6 ? 'ipv6' : 'ipv4');
  };
  return function forwarding(ctx, next) {
    const headers = ctx.req.headers;
    const peer = ctx.req.socket.remoteAddress;
    const forwardedFor = isTrusted(peer) ? headers['x-forwarded-for'] : undefined;
    for (const name in headers) {
      if (name === 'forwarded' || name.startsWith('x-forwarded-')) delete headers[name];
    }
    let client = peer ?? '';
    if (forwardedFor !== undefined) {
      headers['x-forwarded-for'] = forwardedFor;
      // each entry was appended by the hop to its right: walk left while that hop is a trusted proxy
      const hops = String(forwardedFor).split(',').map((h) => h.trim());
      for (let i = hops.length - 1; i >= 0; i--) {
        if (!isIP(hops[i])) break;
        client = hops[i];
        if (!isTrusted(client)) break;
      }
    }
    ctx.request.ip = client;
    headers.host = base.host;
    headers['x-forwarded-host'] = base.host;
    headers['x-forwarded-proto'] = proto;
    return next();
  };
}

/** Headers every answer carries. */
function securityHeaders(ctx: Context, next: Koa.Next): Promise<void> {
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Frame-Options', 'DENY');
  return next();
}

/**
 * The last line: a client that went away before its body ended is an aborted request (logged at info by
 * the request log, never a 500); a ProtocolError is answered with its own status and JSON (D4); anything
 * unexpected becomes a 500 with a generic body and is logged with a reference (never the request's
 * secrets); Node's own HTTP errors (bad JSON, oversized) keep their status. Pages carry the CSP of every
 * page (src/http/page.ts).
 */
function errorBoundary(logger: Logger) {
  return async (ctx: Context, next: Koa.Next) => {
    try {
      await next();
    } catch (err) {
      const e = err as { status?: number; expose?: boolean; message?: string };
      if (err instanceof ClientAborted) {
        // nobody is left to read an answer; should one still go out, it is a 400
        ctx.state.clientAborted = true;
        sendError(ctx, new ProtocolError('invalid_request', err.message));
        return;
      }
      if (err instanceof StoreUnavailableError) {
        if (ctx.accepts('json', 'html') === 'html') {
          const { texts, brand } = pageTexts(ctx);
          sendPage(ctx, 503, (nonce) => renderMessage({ nonce, texts, brand, title: texts.t('message.unavailableTitle'), message: texts.t('message.unavailable'), status: 503, saysWhatToDo: true }));
        } else {
          ctx.status = 503;
          ctx.set('Cache-Control', 'no-store');
          ctx.body = { error: 'temporarily_unavailable', error_description: err.error_description };
        }
        ctx.set('Retry-After', '2');
        return;
      }
      if (err instanceof RateLimited) {
        // docs/decisions.md, "Rate limits": a registered code that clients retry, and when
        sendError(ctx, new ProtocolError('temporarily_unavailable', err.message, 429), { 'Retry-After': String(err.retryAfter) });
        return;
      }
      if (err instanceof ProtocolError) {
        sendError(ctx, err);
        return;
      }
      if (e.status && e.status < 500 && e.expose) {
        ctx.status = e.status;
        ctx.body = { error: 'invalid_request', error_description: e.message };
        return;
      }
      const ref = randomUUID();
      logger.error({ ref, path: loggablePath(ctx.path), err: { name: (err as Error).name, message: (err as Error).message, stack: (err as Error).stack } }, 'unexpected error');
      ctx.status = 500;
      ctx.set('Cache-Control', 'no-store');
      if (ctx.accepts('json', 'html') === 'html') {
        const { texts, brand } = pageTexts(ctx);
        sendPage(ctx, 500, (nonce) => renderMessage({ nonce, texts, brand, title: texts.t('message.errorTitle'), message: texts.t('message.error', { ref }), status: 500, saysWhatToDo: true }));
      } else {
        ctx.body = { error: 'server_error', error_description: `unexpected error, reference ${ref}` };
      }
    }
  };
}

const PROGRESS_POLL = /^\/interaction\/[^/]+\/[^/]+\/status$/;

function requestLog(logger: Logger) {
  return async (ctx: Context, next: Koa.Next) => {
    if (!logger.isLevelEnabled('error')) return next(); // a silent logger: nothing to time or describe
    const start = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      // a client that went away before its body ended: an aborted request, at info, never an error
      const aborted = ctx.state.clientAborted === true;
      // the prompt asks for its progress every few seconds per holder: answered polls only at debug
      const level = ctx.status >= 500 && !aborted ? 'error' : ctx.status < 400 && PROGRESS_POLL.test(ctx.path) ? 'debug' : 'info';
      // ip: the connection's address, or X-Forwarded-For's client from a trusted proxy (trustedForwarding)
      const line = { method: ctx.method, path: loggablePath(ctx.path), status: ctx.status, ms: Math.round(ms * 10) / 10, ip: ctx.ip, error: (ctx.body as { error?: string } | undefined)?.error };
      logger[level](aborted ? { ...line, aborted: true } : line, aborted ? 'request aborted' : 'request');
    }
  };
}

export async function createService(loaded: LoadedConfig, opts: ServiceOptions = {}): Promise<Service> {
  const { config } = loaded;
  const logger = opts.logger ?? createLogger(config.logLevel);
  // catalogues and logos first, so that a broken one stops the start-up before anything opens
  const ui = await HolderUi.load(config, loaded.baseDir, logger).catch((err) => {
    throw err instanceof CatalogueError || err instanceof ImageError ? new ConfigError(loaded.file, [err.message]) : err;
  });
  const untraced = opts.store ?? (await createStore(config.store));
  // with tracing on, a span per store operation (src/telemetry/store.ts); off, the store itself
  const store = tracingOn() ? tracedStore(untraced) : untraced;
  // D20: with Redis (shared by every instance) generated keys live in the store, so all instances sign
  // with one key set; the memory store is one process's and lost on restart, so keys go to files there
  const loadedKeys = await loadKeys(config.keys, loaded.baseDir, { shared: store.kind === 'redis' ? store : undefined }).catch(async (err) => {
    if (!opts.store) await store.close();
    throw err;
  });
  // the verifier's certificate is shared as the key sets are (D20)
  const { identity: clientIdentity, origin: verifierOrigin } = await loadClientIdentity(config.verifier, {
    baseUrl: config.baseUrl,
    responseUri: `${config.baseUrl}/vp/response`,
    baseDir: loaded.baseDir,
    generate: config.keys.generate,
    shared: store.kind === 'redis' ? store : undefined,
  }).catch(async (err) => {
    if (!opts.store) await store.close();
    throw err;
  });
  const { origins } = loadedKeys;
  let { keys } = loadedKeys;
  const keep = keepPeriods(config, config.demo ? [DEMO_PID_TYPE.validity] : []);
  // HAIP 1.0 §6.1.1: the issuer certificate names every issuer identifier we sign SD-JWT VCs as
  const issuers = signingIssuers(config, DEMO_PID_PATH);
  const until = new Date(Date.now() + keep.credential);
  const credentialOrigin = origins.find((o) => o.set === 'credential')!;
  const shared = store.kind === 'redis' ? store : undefined;
  const issuerIdentity = await (async () => {
    const identity = await loadIssuerIdentity(config.issuer, { baseDir: loaded.baseDir, generate: config.keys.generate, issuers, credential: credentialOrigin, store: shared, until });
    // the local CA certifies each credential key (its leaf is kept in the set, as the key's x5c)
    if (identity.ca) {
      const certified = await certifyCredentialKeys(credentialOrigin, { store: shared, ca: identity.ca, issuers, until });
      keys = { ...keys, credential: { keys: certified.keys } };
      if (certified.readOnly) identity.warnings.push(`${certified.readOnly} is read-only: this instance signs under issuer leaves of its own (the same local CA); give issuer.certificateChain and issuer.key to sign under one chain`);
    }
    return identity;
  })().catch(async (err) => {
    if (!opts.store) await store.close();
    throw err;
  });
  const clients = new Map<string, ClientConfig>(config.clients.map((c) => [c.clientId, c]));
  const credentialTypes = new Map<string, CredentialType>(config.credentialTypes.map((t) => [t.name, t]));
  const profiles = versionProfiles(config.baseUrl);
  // D20: the keys that sign and are published now, reloaded from where they came from (a rotation
  // reaches every instance within keys.rotation.reloadInterval); one signer for every signed cookie
  const keyRing = new KeyRing(keys, origins, {
    keep,
    store: store.kind === 'redis' ? store : undefined,
    certifyCredential: issuerIdentity.ca ? async (set) => (await certifySet(set, { ca: issuerIdentity.ca!, issuers, until: new Date(Date.now() + keep.credential) })) : undefined,
    logger,
  });
  if (opts.background !== false) keyRing.start(config.keys.rotation.reloadInterval * 1000);
  const cookieKeys = keyRing.cookieKeys;
  // with the operator's certificate, issuer.key signs; otherwise the key ring's active credential key
  const credentialKeys = issuerIdentity.operator ? operatorSigningKeys(issuerIdentity.operator, keyRing.credential) : keyRing.credential;
  // the root of secrets derived alike on every instance and never rotated (PIN hashes, nonces, demo forms)
  const derivedRoot = keyRing.pairwise;
  const deps = { config, store, idTokenKeys: keyRing.idToken, cookieKeys };
  const providers = { v1: await createRpProvider(profiles.v1, deps), v2: await createRpProvider(profiles.v2, deps) };
  const publicKeys = () => keyRing.idToken.published();

  // the metrics, and the flows' ends, each counted and audited once where it is decided (src/metrics/flowEvents.ts)
  const metrics = new Metrics(config.metrics, {
    clients: config.clients.map((c) => c.clientId),
    issuerPaths: config.demo ? [config.walletPath, DEMO_PID_PATH] : [config.walletPath],
    basePath: new URL(config.baseUrl).pathname.replace(/\/$/, ''),
  });
  const flowEnds = new FlowEvents(metrics, logger);
  // per client and per source address, on the store (shared by every instance on Redis)
  const rateLimits = new RateLimits(config.rateLimits, store, { keyPrefix: storeKeyPrefix(config.store), onLimited: (endpoint) => metrics.rateLimited(endpoint) });
  const stopCountingStoreErrors = store instanceof RedisStore ? store.onUnavailable(() => metrics.storeError()) : undefined;

  // D13: External Client flow events, delivered from the store by every instance
  const webhooks = new WebhookQueue(store, webhookTargets(config.clients), config.webhooks, logger, { poll: opts.background !== false, onAttempt: (outcome) => metrics.webhookDelivery(outcome) });

  // the wallet's request that completes a step keeps the ID token's claims for the holder's browser;
  // an External Client flow's client is told by webhook instead
  const steps = new WalletSteps(store);
  // D12: pairwise subjects of the identity flows, alike on every instance
  const subjects = new PairwiseSubjects(keys.pairwise[0]);
  const stepSucceeded = async (stepId: string, claims: FlowClaims, isExternal: boolean | undefined) => {
    await steps.succeeded(stepId, claims, config.lifetimes.interaction);
    if (isExternal) await external.completed(stepId, claims);
  };
  const stepFailed = (stepId: string, message: string, isExternal: boolean | undefined, reported: 'failed' | 'denied' = 'failed') =>
    isExternal ? external.failed(stepId, message, reported) : Promise.resolve();
  const walletIssuer = createWalletIssuer({
    baseUrl: config.baseUrl,
    path: config.walletPath,
    store,
    credentialKeys,
    credentialTypes: config.credentialTypes,
    offerLifetime: config.lifetimes.offer,
    pinAttempts: config.pinAttempts,
    cookieKeys,
    secret: derivedRoot,
    statusList: config.statusList,
    attestationKeys: AttestationKeys.fromConfig(config.walletAttestation.trustedProviders, loaded.baseDir),
    attestationRequired: config.walletAttestation.required,
    onIssued: async (offer) => {
      await stepSucceeded(offer.stepId, issuanceFlowClaims(offer), offer.external);
      flowEnds.issued(offer); // after: a credential whose step could not be told is not issued (the offer is put back)
    },
    onFailed: (offer, message) => {
      flowEnds.issuanceFailed(offer);
      return stepFailed(offer.stepId, message, offer.external);
    },
    onPinFailure: () => metrics.pinFailure(),
    rateLimits,
  });

  const verifier = createVerifier({
    baseUrl: config.baseUrl,
    store,
    credentialTypes: config.credentialTypes,
    trustedIssuers: config.trustedIssuers,
    ownIssuer: { issuer: walletIssuer.credentialIssuer, jwks: () => credentialKeys.published() },
    clientIdentity,
    requestLifetime: config.lifetimes.offer,
    identity: config.identity.VerifiedIdentity && pidRequestKind(config.identity.VerifiedIdentity),
    onStatusUnavailable: config.statusList.onUnavailable,
    statusListMaxEntries: config.statusList.maxEntries,
    rateLimits,
    onVerified: async (record, result) => {
      await stepSucceeded(record.requestId, record.identity ? pidFlowClaims(result, record.clientId!, subjects) : verificationFlowClaims(result, { issuerClaim: clients.get(record.clientId!)?.vcIssuerClaim }), record.external);
      flowEnds.verified(record);
    },
    onFailed: (record, failure) => stepFailed(record.requestId, failure.description, record.external, flowEnds.verificationFailed(record, failure.declined === true)),
  });
  const external = new ExternalFlows(store, webhooks, config.lifetimes, logger, {
    poll: opts.background !== false,
    // an offer redeemed in time can still be issued after the prompt's expiry
    openUntil: async (stepId) => {
      const step = await steps.find(stepId);
      return step?.offerId ? walletIssuer.issuableUntil(step.offerId) : undefined;
    },
    onEnded: (stepId, request, outcome) => flowEnds.externalEnded(stepId, request, outcome),
  });
  const grantClaims = new GrantClaims(store);
  // D12: the second identity-verification flow, through another OpenID Connect provider
  const upstreamIdv = config.identity.VerifiedIdentity_Other;
  const otherProvider =
    upstreamIdv &&
    new OtherProvider({ config: upstreamIdv, baseUrl: config.baseUrl, store, lifetimes: config.lifetimes, subjects, steps, grantClaims, providers, logger, onEnded: (journey, outcome) => flowEnds.journeyEnded(journey, outcome) });
  // a version's non-PAR authorise endpoint (Version 1: /oidc/authorizev1), where a journey continues with context_id
  const nonParAuthorize = (p: VersionProfile) => `${config.baseUrl}${p.paths.authorizeNonPar ?? p.paths.authorize}`;
  const authorizeUrls = { v1: nonParAuthorize(profiles.v1), v2: nonParAuthorize(profiles.v2) };
  const identity = { pid: config.identity.VerifiedIdentity, other: otherProvider };
  const interaction = createInteractionRoutes({ config, store, steps, providers, walletIssuer, verifier, clients, credentialTypes, external, identity, authorizeUrls, flowEnds, ui });

  const inner = new Koa();
  inner.keys = cookieKeys;
  inner.proxy = true; // host and scheme are baseUrl's: trustedForwarding sets the headers proxy mode reads
  // PINs are kept as a salted hash under a key every instance derives alike (src/rules/pinHash.ts)
  const pinHasher = new PinHasher(derivedRoot);
  const edgeDeps = { config, store, clients, credentialTypes, publicKeys, pinHasher, external, grantClaims, otherProvider, rateLimits };
  // every holder page reads its language and the brand from here (src/ui/ui.ts pageTexts)
  inner.use((ctx, next) => {
    ctx.state.ui = ui;
    return next();
  });
  inner.use(ui.routes());
  inner.use(createVersionEdge({ ...edgeDeps, profile: profiles.v2, provider: providers.v2 }));
  inner.use(createVersionEdge({ ...edgeDeps, profile: profiles.v1, provider: providers.v1 }));
  inner.use(walletIssuer.middleware);
  inner.use(verifier.middleware);
  inner.use(interaction);
  if (config.admin.token) inner.use(adminRoutes(config.admin.token, walletIssuer.statuses, logger));
  if (config.demo) {
    // the demo's PID issuer (demo only): a PID for trying VerifiedIdentity with the dev wallet
    const pid = createDemoPidIssuer({
      baseUrl: config.baseUrl,
      store,
      credentialKeys,
      cookieKeys,
      secret: derivedRoot,
      offerLifetime: config.lifetimes.offer,
      statusList: config.statusList,
    });
    inner.use(
      createDemoRoutes(config, store, publicKeys, {
        pidIssuer: pid.credentialIssuer,
        changeStatus: (serialNumber, action) => changeStatus(walletIssuer.statuses, logger, serialNumber, action, 'demo'),
        formKey: derivedRoot,
        languages: ui.catalogues.locales,
      }),
    );
    inner.use(pid.middleware);
    // the built-in identity provider for VerifiedIdentity_Other (at /demo/idv), only when the config points the flow at it
    const idv = config.identity.VerifiedIdentity_Other;
    if (idv?.issuer === `${config.baseUrl}/demo/idv`) {
      const demoIdv = await createDemoIdvProvider({
        issuer: idv.issuer,
        clients: [{ clientId: idv.clientId, clientSecret: idv.clientSecret, clientAuth: idv.clientAuth, redirectUris: [`${config.baseUrl}${CALLBACK_PATH}`] }],
        verifiedClaims: idv.verifiedClaims,
      });
      inner.use(demoIdv.middleware);
    }
  }
  inner.use(
    router([
      { method: 'GET', path: '/healthz', handle: (ctx) => void (ctx.body = { status: 'ok' }) },
      {
        method: 'GET',
        path: '/readyz',
        handle: async (ctx) => {
          try {
            await store.ping();
            ctx.body = { status: 'ready', store: store.kind };
          } catch {
            ctx.status = 503;
            ctx.body = { status: 'unavailable', store: store.kind };
          }
        },
      },
    ]),
  );
  inner.use(async (ctx) => {
    ctx.status = 404;
    ctx.body = { error: 'not_found', error_description: `no endpoint at ${ctx.method} ${ctx.path}` };
  });

  const app = new Koa();
  app.keys = cookieKeys;
  // on, so that Koa and oidc-provider read host and scheme from the X-Forwarded-* headers trustedForwarding
  // sets from baseUrl (and nothing a client sent)
  app.proxy = true;
  app.silent = true;
  app.use(trustedForwarding(config.baseUrl, config.trustedProxies));
  // a span per request, named by its route template (src/telemetry/spans.ts), only with tracing on
  if (tracingOn()) app.use(requestSpans(routeTemplates(config.demo ? [config.walletPath, DEMO_PID_PATH] : [config.walletPath], new URL(config.baseUrl).pathname.replace(/\/$/, ''))));
  app.use(securityHeaders);
  app.use(requestLog(logger));
  // inside the request log, outside the error boundary: it sees the status every answer goes out with
  if (metrics.enabled) app.use(metrics.middleware);
  app.use(errorBoundary(logger));
  const basePath = new URL(config.baseUrl).pathname.replace(/\/$/, '');
  app.use(basePath ? mount(basePath, inner) : mount(inner));

  return {
    app,
    config,
    store,
    keys,
    providers,
    walletIssuer,
    verifier,
    logger,
    keyOrigins: origins,
    keyRing,
    verifierOrigin,
    issuerOrigin: { origin: issuerIdentity.origin, caFile: issuerIdentity.caFile, warnings: issuerIdentity.warnings },
    credentialKeys,
    webhooks,
    external,
    metrics,
    close: async () => {
      stopCountingStoreErrors?.();
      await metrics.close();
      keyRing.close();
      await Promise.all([webhooks.close(), external.close()]);
      await store.close();
    },
  };
}
