import { StatusChecks } from '../verification/statusCheck.js';
import type Koa from 'koa';
import type { VersionProfile } from '../oidc/versions.js';
import { createVersionEdge } from '../oidc/edge.js';
import { PinHasher } from '../rules/pinHash.js';
import { createWalletIssuer, type WalletIssuer } from '../issuance/walletIssuer.js';
import { AttestationKeys } from '../issuance/attestationKeys.js';
import { cardSourcesFrom } from '../issuance/card.js';
import { createVerifier, type Verifier } from '../verification/verifier.js';
import { pidRequestKind } from '../identity/pid.js';
import { CALLBACK_PATH, OtherProvider } from '../identity/otherProvider.js';
import { createInteractionRoutes } from '../interaction/routes.js';
import { adminRoutes } from '../admin/routes.js';
import { changeStatus } from '../admin/credentials.js';
import { createDemoRoutes } from '../demo/routes.js';
import { createDemoPidIssuer } from '../demo/pid.js';
import { createDemoMdocs, MDL_DOCTYPE } from '../demo/mdocs.js';
import { createDemoIdvProvider } from '../demo/idvProvider.js';
import { router } from '../http/router.js';
import { notFound } from '../http/respond.js';
import { documentSignersOf } from '../keys/issuerIdentity.js';
import { ownMdocAnchor, pidMdocAnchors } from '../keys/trustAnchors.js';
import { readPemCertificates, subjectKeyIdentifier } from '../keys/x509.js';
import type { ClientIdentity } from '../verification/clientIdentity.js';
import type { Core } from './core.js';

/** D12: the second identity-verification flow, through another OpenID Connect provider (when configured). */
export function otherProviderOf(core: Core): OtherProvider | undefined {
  const { config, store, subjects, steps, grantClaims, providers, logger, flowEnds } = core;
  const upstreamIdv = config.identity.VerifiedIdentity_Other;
  return upstreamIdv
    ? new OtherProvider({
        config: upstreamIdv,
        baseUrl: config.baseUrl,
        store,
        lifetimes: config.lifetimes,
        subjects,
        steps,
        grantClaims,
        providers,
        logger,
        outbound: core.outbound,
        onEnded: (journey, outcome) => flowEnds.journeyEnded(journey, outcome),
      })
    : undefined;
}

/** The relying parties' side: one version edge per version profile, each in front of its provider. */
export function mountRelyingPartyEdges(app: Koa, core: Core, otherProvider: OtherProvider | undefined): void {
  const { config, store, clients, credentialTypes, publicKeys, external, grantClaims, rateLimits } = core;
  // PINs are kept as a salted hash under a key every instance derives alike (src/rules/pinHash.ts)
  const pinHasher = new PinHasher(core.derivedRoot);
  const edgeDeps = {
    config,
    store,
    clients,
    credentialTypes,
    publicKeys,
    idTokenKeys: core.keyRing.idToken,
    pinHasher,
    external,
    grantClaims,
    otherProvider,
    rateLimits,
    outbound: core.outbound,
    registrations: core.registrations,
  };
  // a version the operator turned off (versions.v1: false) has no endpoints and no documents
  for (const profile of Object.values(core.profiles).filter((p) => p.served))
    app.use(createVersionEdge({ ...edgeDeps, profile, provider: core.providers[profile.id] }));
}

/** The wallet-facing issuer (OpenID4VCI, D10); its steps end in core.stepOutcomes. */
export function mountWalletIssuer(app: Koa, core: Core): WalletIssuer {
  const { config, loaded, stepOutcomes } = core;
  const walletIssuer = createWalletIssuer({
    baseUrl: config.baseUrl,
    path: config.walletPath,
    store: core.store,
    credentialKeys: core.credentialKeys,
    // a type verified only (an mDL for age checks, say) is never offered nor issued here
    credentialTypes: config.credentialTypes.filter((t) => !t.verifyOnly),
    offerLifetime: config.lifetimes.offer,
    pinAttempts: config.pinAttempts,
    cookieKeys: core.cookieKeys,
    secret: core.derivedRoot,
    statusList: config.statusList,
    batchSize: config.issuance.batchSize,
    reissuesPerDay: config.issuance.reissuesPerDay,
    // re-issuance tells no relying party (docs/decisions.md, "Re-issuance"): the operator's audit line only
    onReissued: (record, issued) =>
      core.logger.info(
        {
          audit: 'credential_reissue',
          client: record.clientId,
          credentialType: record.credentialType,
          serialNumber: record.serialNumber,
          format: issued.format,
          credentials: issued.count,
          expiresAt: new Date(issued.expiresAt * 1000).toISOString(),
        },
        'credential re-issued',
      ),
    attestationKeys: AttestationKeys.fromConfig(config.walletAttestation.trustedProviders, loaded.baseDir),
    attestationRequired: config.walletAttestation.required,
    // wallet and key attestations that name a status list: the verifier's bounded fetch and its rule
    attestationStatusChecks: {
      checks: new StatusChecks(core.outbound, config.statusList.maxEntries),
      onUnavailable: config.statusList.onUnavailable,
    },
    onIssued: (offer, issued) => stepOutcomes.issued(offer, issued),
    onFailed: (offer, message) => stepOutcomes.issuanceFailed(offer, message),
    onPinFailure: () => core.metrics.pinFailure(),
    onNotification: (notice) => stepOutcomes.credentialNotified(notice),
    rateLimits: core.rateLimits,
    // the cards wallets show, in the holder pages' languages; the operator's name and logo as the issuer's
    cards: cardSourcesFrom({
      baseUrl: config.baseUrl,
      catalogues: core.ui.catalogues,
      images: core.ui.cardImages,
      issuerName: config.ui.name,
      issuerLogo: core.ui.logo,
    }),
    // ISO mdocs beside SD-JWT VCs, signed by a document signer under the issuer CA
    documentSigners: documentSignersOf(core.issuerIdentity, {
      cfg: config.issuer,
      baseDir: loaded.baseDir,
      credential: core.origins.find((o) => o.set === 'credential')!,
      issuers: core.issuers,
      store: core.store.kind === 'redis' ? core.store : undefined,
      activeKid: () => core.credentialKeys.signing().kid,
      validForMs: core.keep.credential,
    }),
  });
  app.use(walletIssuer.middleware);
  return walletIssuer;
}

/** The wallet-facing verifier (OpenID4VP); its steps end in core.stepOutcomes. */
export function mountVerifier(app: Koa, core: Core, walletIssuer: WalletIssuer): Verifier {
  const { config, stepOutcomes } = core;
  // the local issuer CA (when we made one): what our own SD-JWT VCs chain to, and our own mdocs' IACA
  const issuerCa = core.issuerIdentity.ca
    ? readPemCertificates(core.issuerIdentity.ca.certificate, 'the local issuer CA')[0]
    : undefined;
  const verifier = createVerifier({
    baseUrl: config.baseUrl,
    store: core.store,
    credentialTypes: config.credentialTypes,
    trustedIssuers: config.trustedIssuers,
    // our own credentials: by their x5c chain to the issuer CA we made, else by kid (src/verification/issuerKeys.ts)
    ownIssuer: {
      issuer: walletIssuer.credentialIssuer,
      jwks: () => core.credentialKeys.published(),
      ...(issuerCa ? { issuerCa } : {}),
    },
    clientIdentity: withOwnMdocAnchor(core, issuerCa),
    requestLifetime: config.lifetimes.offer,
    freshRequestAfter: config.verifier.freshRequestAfter,
    // D12: an mdoc PID's query names the IACAs listed for VerifiedIdentity by their key identifiers (OpenID4VP 1.0 §6.1.1.1)
    identity:
      config.identity.VerifiedIdentity &&
      pidRequestKind(
        config.identity.VerifiedIdentity,
        pidMdocAnchors(core.clientIdentity.trustAnchors)
          .map(subjectKeyIdentifier)
          .filter((v): v is string => v !== undefined),
      ),
    onStatusUnavailable: config.statusList.onUnavailable,
    // our own mdocs, which carry no status: known by their MSO's digest (src/status/registry.ts)
    ownMdocStatus: (msoDigest) => walletIssuer.statuses.mdocStatus(msoDigest),
    statusListMaxEntries: config.statusList.maxEntries,
    rateLimits: core.rateLimits,
    outbound: core.outbound,
    registrations: core.registrations,
    onVerified: (record, result) => stepOutcomes.verified(record, result),
    onFailed: (record, failure) => stepOutcomes.verificationFailed(record, failure),
  });
  app.use(verifier.middleware);
  return verifier;
}

/** Our own mdocs verify under the local issuer CA, their IACA, where the operator names none for the type. */
function withOwnMdocAnchor(core: Core, issuerCa: Uint8Array | undefined): ClientIdentity {
  const { clientIdentity } = core;
  if (!issuerCa) return clientIdentity;
  const own = ownMdocAnchor(issuerCa, core.config.credentialTypes, clientIdentity.trustAnchors);
  return { ...clientIdentity, trustAnchors: [...clientIdentity.trustAnchors, ...own] };
}

/** The holder's prompt (src/interaction): checks at authorise, the wallet step, progress, finish. */
export function mountInteraction(
  app: Koa,
  core: Core,
  sides: { walletIssuer: WalletIssuer; verifier: Verifier; otherProvider: OtherProvider | undefined },
): void {
  const { config, store, steps, providers, clients, credentialTypes, external, flowEnds, ui } = core;
  const { walletIssuer, verifier } = sides;
  // a version's non-PAR authorise endpoint (Version 1: /oidc/authorizev1), where a journey continues with context_id
  const nonParAuthorize = (p: VersionProfile) => `${config.baseUrl}${p.paths.authorizeNonPar ?? p.paths.authorize}`;
  const authorizeUrls = Object.fromEntries(
    Object.values(core.profiles).map((p) => [p.id, nonParAuthorize(p)]),
  ) as Record<VersionProfile['id'], string>;
  const identity = { pid: config.identity.VerifiedIdentity, other: sides.otherProvider };
  app.use(
    createInteractionRoutes({
      config,
      store,
      steps,
      providers,
      walletIssuer,
      verifier,
      clients,
      credentialTypes,
      external,
      identity,
      authorizeUrls,
      flowEnds,
      ui,
      rateLimits: core.rateLimits,
    }),
  );
}

/** D18: the operator's API for credential statuses, when admin.token is set. */
export function mountAdmin(app: Koa, core: Core, walletIssuer: WalletIssuer): void {
  if (core.config.admin.token) app.use(adminRoutes(core.config.admin.token, walletIssuer.statuses, core.logger));
}

/** config demo: true: the built-in relying party, its PID issuer, and its identity provider when the config points at it. */
export async function mountDemo(app: Koa, core: Core, walletIssuer: WalletIssuer): Promise<void> {
  const { config, store, logger, derivedRoot } = core;
  if (!config.demo) return;
  // the demo's PID issuer (demo only): a PID for trying VerifiedIdentity with the dev wallet
  const pid = createDemoPidIssuer({
    baseUrl: config.baseUrl,
    store,
    credentialKeys: core.credentialKeys,
    cookieKeys: core.cookieKeys,
    secret: derivedRoot,
    offerLifetime: config.lifetimes.offer,
    statusList: config.statusList,
    // mDLs and mdoc PIDs under the demo's test IACA; the verification types that ask an mDL, for its page
    ...(core.demoIaca ? { mdocs: createDemoMdocs(core.demoIaca, new URL(config.baseUrl).hostname) } : {}),
    ageTypes: config.credentialTypes.filter((t) => t.verifyOnly && t.mdoc?.doctype === MDL_DOCTYPE).map((t) => t.name),
  });
  app.use(
    createDemoRoutes(config, store, core.publicKeys, {
      pidIssuer: pid.credentialIssuer,
      changeStatus: (serialNumber, action) => changeStatus(walletIssuer.statuses, logger, serialNumber, action, 'demo'),
      formKey: derivedRoot,
      languages: core.ui.catalogues.locales,
      mdocs: core.demoIaca !== undefined,
    }),
  );
  app.use(pid.middleware);
  // the built-in identity provider for VerifiedIdentity_Other (at /demo/idv), only when the config points the flow at it
  const idv = config.identity.VerifiedIdentity_Other;
  if (idv?.issuer === `${config.baseUrl}/demo/idv`) {
    const demoIdv = await createDemoIdvProvider({
      issuer: idv.issuer,
      clients: [
        {
          clientId: idv.clientId,
          clientSecret: idv.clientSecret,
          clientAuth: idv.clientAuth,
          redirectUris: [`${config.baseUrl}${CALLBACK_PATH}`],
        },
      ],
      verifiedClaims: idv.verifiedClaims,
    });
    app.use(demoIdv.middleware);
  }
}

/** Health and readiness for the operator's probes, and a JSON 404 for every other path. */
export function mountOperations(app: Koa, core: Core): void {
  const { store } = core;
  app.use(
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
  app.use((ctx) => notFound(ctx));
}
