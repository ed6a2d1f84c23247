import compose from 'koa-compose';
import mount from 'koa-mount';
import type { JWK } from 'jose';
import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';
import type { CredentialType } from '../config/schema.js';
import type { Store } from '../store/types.js';
import { configurationIdsOf, scopeFor, vctFor } from './credentialConfigurations.js';
import { longLivedMdocWarnings, MdocSigner } from './mdoc.js';
import type { DocumentSigners } from '../keys/issuerIdentity.js';
import { issueCredentialFor, type IssuedCredential } from './issueCredential.js';
import { createOffer, type CreatedOffer, type CreateOfferInput } from './createOffer.js';
import { offerByReference } from './offerReference.js';
import { OfferBook, type OfferRecord, type OfferStatus } from './offers.js';
import { PinAttempts } from './pinAttempts.js';
import { PinHasher } from '../rules/pinHash.js';
import { SdJwtVcSigner } from './sdJwtVc.js';
import { signingKeysOf, type SigningKeys } from '../keys/keyRing.js';
import { CookieKeys } from '../http/cookieKeys.js';
import { reissueUntil, tokenEdge } from './tokenEdge.js';
import { ReissueBook, reissueEdgeDeps, type ReissueRecord } from './reissues.js';
import { codeFor, revokeOffer } from './providerCodes.js';
import { limitByAddress, type RateLimits } from '../http/rateLimits.js';
import { AttestationKeys } from './attestationKeys.js';
import { AttestationStatus } from './attestationStatus.js';
import type { StatusChecks } from '../verification/statusCheck.js';
import { StatusRegistry } from '../status/registry.js';
import { batchSizeOf } from '../rules/batch.js';
import { StatusListService } from '../status/listToken.js';
import { statusListRoute } from '../status/routes.js';
import { createWalletProvider, DPOP_SIGNING_ALGS, NOTIFICATION_PATH, WALLET_CLIENT_ID } from './walletProvider.js';
import { NotificationBook, type CredentialNotice } from './notification.js';
import { notificationEndpoint } from './notificationEndpoint.js';
import { jwtVcIssuerMetadata, metadataAliases } from './wellKnown.js';
import type { CardSources } from './card.js';
import { TypeMetadata } from './typeMetadata.js';
import { signedMetadata } from './signedMetadata.js';

export type { OfferRecord, OfferStatus } from './offers.js';
export type { CreatedOffer, CreateOfferInput } from './createOffer.js';

export interface WalletIssuerOptions {
  /** e.g. http://127.0.0.1:3000 (no trailing slash) */
  baseUrl: string;
  /** e.g. 'wallet' -> credential issuer identifier `${baseUrl}/wallet` */
  path: string;
  store: Store;
  /** ES256 private JWKs with kid: rotating keys (src/keys/keyRing.ts), or a fixed set whose first one signs */
  credentialKeys: SigningKeys | { keys: JWK[] };
  credentialTypes: CredentialType[];
  /** seconds an offer (and its pre-authorized code) lives */
  offerLifetime: number;
  /** D10, default 3 */
  pinAttempts: number;
  /** the signer of the provider's cookies (or its secrets, the first signing) */
  cookieKeys: CookieKeys | string[];
  /**
   * the root of the secrets derived for PIN hashes and nonces, alike on every instance and never rotated
   * (the service passes its pairwise secret); default: the first cookie secret given as a string
   */
  secret?: string;
  /**
   * Called once the credential is signed, with the offer it was issued for: the holder's prompt finishes
   * the authorisation from here, so that the browser can go straight back to the provider. When it
   * fails, the wallet gets an error instead of the credential and the offer stays redeemable.
   */
  onIssued?: (offer: OfferRecord, issued: IssuedCredential) => Promise<void>;
  /** the wallet providers whose wallet and key attestations are trusted (none: attestations are refused) */
  attestationKeys?: AttestationKeys;
  /** walletAttestation.required: only attested wallets get a token */
  attestationRequired?: boolean;
  /** D18: the credentials' Token Status Lists (default: cacheable 300 s, 2^17 entries) */
  statusList?: { ttl: number; size: number };
  /** Called when an offer fails for good (its PIN attempts used up), with the holder's message. */
  onFailed?: (offer: OfferRecord, message: string) => Promise<void>;
  /** the token endpoint's (`walletToken`) and the credential endpoint's (`credential`, per address) rate limits */
  rateLimits?: RateLimits;
  /** told of every wrong PIN a wallet sends (metrics) */
  onPinFailure?: () => void;
  /** the wallet's first notification about a credential (OpenID4VCI 1.0 §11): the relying party's event, the audit line */
  onNotification?: (notice: CredentialNotice) => Promise<void>;
  /** mdoc document signers (src/keys/issuerIdentity.ts): a type with `mdoc` is then offered as `<name>.mso_mdoc` too */
  documentSigners?: DocumentSigners;
  /** what the cards wallets show are made from (src/issuance/card.ts); default: no images, no issuer display */
  cards?: CardSources;
  /** the batch size of types that set none (config `issuance.batchSize`, src/rules/batch.ts); default 1 */
  batchSize?: number;
  /** re-issuance: the refreshes one credential's wallet may make per day (config `issuance.reissuesPerDay`); default 24 */
  reissuesPerDay?: number;
  /** a batch was re-issued to a wallet that refreshed (the audit line) */
  onReissued?: (record: ReissueRecord, issued: IssuedCredential) => void;
  /**
   * the status checks of wallet and key attestations that name a status list entry (ARF ISSU_21, ISSU_30):
   * the verifier's bounded fetch (src/verification/statusCheck.ts); without it they are not checked
   */
  attestationStatusChecks?: { checks: StatusChecks; onUnavailable: 'refuse' | 'accept' };
}

export interface WalletIssuer {
  credentialIssuer: string;
  /** the status of every credential issued, by SerialNumber (D18) */
  statuses: StatusRegistry;
  /** serves everything wallet-facing, calls next() for other paths */
  middleware: Middleware;
  /** what the operator must read at start-up: types whose mdocs cannot be revoked for longer than a day */
  warnings: string[];
  /** Mints an offer: its pre-authorized code, the grant behind it, and the offer record. */
  createOffer(input: CreateOfferInput): Promise<CreatedOffer>;
  /** `expiresAt` as `createOffer` returned it */
  offerStatus(offerId: string, expiresAt: number): Promise<OfferStatus>;
}

/** How long a wallet's access token lasts: enough for the nonce and credential requests that follow. */
export const ACCESS_TOKEN_LIFETIME = 300;

/**
 * The wallet-facing side of issuance (D10): OpenID4VCI 1.0, pre-authorized code flow, SD-JWT VC. The
 * protocol is oidc-provider's `features.openid4vci`; this module supplies offers, the PIN attempts edge,
 * the credential itself and the metadata locations wallets and verifiers look at.
 */
export function createWalletIssuer(opts: WalletIssuerOptions): WalletIssuer {
  const parts = issuerParts(opts);
  const { credentialIssuer, offers, statuses } = parts;
  const provider = walletProvider(opts, parts);
  provider.use(walletTokenEdge(opts, parts, provider));
  return {
    credentialIssuer,
    statuses,
    middleware: walletMiddleware(opts, parts, provider),
    warnings: parts.mdoc ? longLivedMdocWarnings(opts.credentialTypes) : [],
    createOffer: (input) =>
      createOffer(
        offers,
        credentialIssuer,
        parts.types,
        { offer: opts.offerLifetime, token: ACCESS_TOKEN_LIFETIME },
        input,
      ),
    offerStatus: (offerId, expiresAt) => offers.status(offerId, expiresAt),
  };
}

/** What the wallet-facing issuer is built from: its identifier, keys, secrets and the books in the store. */
interface IssuerParts {
  credentialIssuer: string;
  credentialKeys: SigningKeys;
  cookieKeys: CookieKeys;
  secret: string;
  types: Map<string, CredentialType>;
  offers: OfferBook;
  pins: PinAttempts;
  statuses: StatusRegistry;
  notifications: NotificationBook;
  statusLists: StatusListService;
  mdoc: MdocSigner | undefined;
  typeMetadata: TypeMetadata;
  /** re-issuance, when a type has `reissue` */
  reissues: ReissueBook | undefined;
}

function issuerParts(opts: WalletIssuerOptions): IssuerParts {
  const credentialIssuer = `${opts.baseUrl}/${opts.path}`;
  const credentialKeys = signingKeysOf(opts.credentialKeys);
  const cookieKeys = Array.isArray(opts.cookieKeys) ? new CookieKeys(opts.cookieKeys) : opts.cookieKeys;
  const secret = opts.secret ?? (Array.isArray(opts.cookieKeys) ? opts.cookieKeys[0] : undefined);
  if (!secret) throw new TypeError('createWalletIssuer: secret is required with a CookieKeys signer');
  const statuses = new StatusRegistry(opts.store, opts.statusList?.size ?? 1 << 17, opts.path);
  return {
    typeMetadata: new TypeMetadata(opts.credentialTypes, opts.baseUrl, opts.cards),
    credentialIssuer,
    credentialKeys,
    cookieKeys,
    secret,
    types: new Map(opts.credentialTypes.map((t) => [t.name, t])),
    offers: new OfferBook(opts.store),
    pins: new PinAttempts(opts.store, opts.pinAttempts, opts.onPinFailure),
    statuses,
    notifications: new NotificationBook(opts.store),
    statusLists: new StatusListService({
      registry: statuses,
      credentialIssuer,
      keys: credentialKeys,
      ttl: opts.statusList?.ttl ?? 300,
    }),
    mdoc: opts.documentSigners ? new MdocSigner(opts.documentSigners) : undefined,
    reissues: opts.credentialTypes.some((t) => t.reissue === true)
      ? new ReissueBook(opts.store, opts.reissuesPerDay ?? 24)
      : undefined,
  };
}

/** The oidc-provider instance, issuing the credential of the offer a wallet's access token names. */
function walletProvider(opts: WalletIssuerOptions, parts: IssuerParts): Provider {
  const { credentialIssuer, credentialKeys, types, statuses, statusLists, mdoc } = parts;
  const attestationKeys = opts.attestationKeys ?? new AttestationKeys([]);
  const attestationStatus =
    opts.attestationStatusChecks &&
    new AttestationStatus(
      opts.attestationStatusChecks.checks,
      attestationKeys,
      opts.attestationStatusChecks.onUnavailable,
    );
  return createWalletProvider({
    credentialIssuer,
    baseUrl: opts.baseUrl,
    store: opts.store,
    // the provider's keystore takes the key without its certificate chain (it signs nothing with it)
    credentialKeys: { keys: [withoutChain(credentialKeys.signing())] },
    credentialTypes: opts.credentialTypes,
    cookieKeys: parts.cookieKeys,
    secret: parts.secret,
    offerLifetime: opts.offerLifetime,
    accessTokenLifetime: ACCESS_TOKEN_LIFETIME,
    attestationKeys,
    ...(attestationStatus
      ? { walletAttestationRefusal: (p) => attestationStatus.refusal(p, 'wallet attestation') }
      : {}),
    mdoc: mdoc !== undefined,
    cards: opts.cards,
    batchSize: (type) => batchSizeOf(type, opts.batchSize ?? 1),
    ...(parts.reissues ? { reissueUntil } : {}),
    issueCredential: issueCredentialFor({
      credentialIssuer,
      offers: parts.offers,
      signer: new SdJwtVcSigner(credentialKeys, { integrityOf: (vct) => parts.typeMetadata.integrityOf(vct) }),
      vctOf: (name) => vctFor(types.get(name)!, opts.baseUrl),
      mdoc,
      typeOf: (name) => types.get(name),
      batchSizeOf: (name) => batchSizeOf(types.get(name) ?? {}, opts.batchSize ?? 1),
      statusEntries: async (serialNumber, exp, count, mdocDigests, first) =>
        (await statuses.allocateMany(serialNumber, exp, count, mdocDigests, first)).map((e) => ({
          ...e,
          uri: statusLists.uriOf(e.listId),
        })),
      releaseEntries: (serialNumber, entries, mdocDigests) => statuses.release(serialNumber, entries, mdocDigests),
      onIssued: opts.onIssued,
      notifications: parts.notifications,
      reissues: parts.reissues,
      statusOf: async (serialNumber) => (await statuses.status(serialNumber))?.status,
      onReissued: opts.onReissued,
      ...(attestationStatus ? { attestationRefusal: (p, what) => attestationStatus.refusal(p, what) } : {}),
    }),
  });
}

/** The token edge in front of the provider (src/issuance/tokenEdge.ts), with the provider's codes per offer. */
function walletTokenEdge(opts: WalletIssuerOptions, parts: IssuerParts, provider: Provider): Middleware {
  const { credentialIssuer, types } = parts;
  return tokenEdge({
    offers: parts.offers,
    pins: parts.pins,
    pinHasher: new PinHasher(parts.secret),
    walletClientId: WALLET_CLIENT_ID,
    revoke: (offer) => revokeOffer(provider, opts.store, offer),
    onFailed: opts.onFailed,
    codeFor: (offer, clientId) => {
      const type = types.get(offer.credentialType)!;
      const until = parts.reissues && type.reissue ? offer.credentialExpiresAt : undefined;
      return codeFor(provider, opts.store, credentialIssuer, scopeFor(type), offer, clientId, until);
    },
    attestationRequired: opts.attestationRequired ?? false,
    rateLimits: opts.rateLimits,
    ...(parts.reissues ? { reissue: reissueEdgeDeps(parts.reissues, parts.types, parts.statuses, provider) } : {}),
  });
}

/** Everything wallet-facing: offers by reference, status lists, metadata, limits, notifications, the provider. */
function walletMiddleware(opts: WalletIssuerOptions, parts: IssuerParts, provider: Provider): Middleware {
  const { credentialIssuer, types, mdoc } = parts;
  const configurationIds = (typeName: string) => configurationIdsOf(types.get(typeName)!, mdoc !== undefined);
  // koa-mount strips `/<path>`; the provider derives the same mount path from its issuer identifier
  const mounted = mount(`/${opts.path}`, provider);
  return compose([
    offerByReference(opts.path, credentialIssuer, parts.offers, configurationIds),
    statusListRoute(opts.path, parts.statusLists),
    parts.typeMetadata.routes(),
    signedMetadata(opts.path, credentialIssuer, parts.credentialKeys),
    metadataAliases(opts.path, mounted),
    jwtVcIssuerMetadata(opts.path, credentialIssuer, parts.credentialKeys),
    limitByAddress(opts.rateLimits, 'credential', 'POST', `/${opts.path}/credential`),
    limitByAddress(opts.rateLimits, 'credential', 'POST', `/${opts.path}/${NOTIFICATION_PATH}`),
    notificationEndpoint({
      path: `/${opts.path}/${NOTIFICATION_PATH}`,
      url: `${credentialIssuer}/${NOTIFICATION_PATH}`,
      notifications: parts.notifications,
      store: opts.store,
      findAccessToken: (value) => provider.AccessToken.find(value),
      onNotification: opts.onNotification,
      dpopAlgorithms: DPOP_SIGNING_ALGS,
    }),
    mounted,
  ]);
}

function withoutChain({ x5c: _x5c, ...jwk }: JWK): JWK {
  return jwk;
}
