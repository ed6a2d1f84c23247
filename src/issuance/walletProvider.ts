import type { JWK } from 'jose';
import Provider, {
  errors,
  type Adapter,
  type AdapterPayload,
  type Configuration,
  type OpenID4VCIIssueCredential,
} from 'oidc-provider';
import type { CredentialType } from '../config/schema.js';
import { adapterScope, createOidcAdapterFactory } from '../store/oidcAdapter.js';
import type { Store } from '../store/types.js';
import { credentialConfigurationsFor, providerConfigurations, scopeFor } from './credentialConfigurations.js';
import { nonceSecretFrom } from './nonceSecret.js';
import { issuerBatchSize } from '../rules/batch.js';
import { REISSUE_UNTIL, refreshTokens, secondsUntil } from './refreshTokens.js';
import { NOTIFICATION_PATH, WALLET_ROUTES } from './issuerPaths.js';
import { PRE_AUTHORIZED_CODE_GRANT } from './offerUri.js';
import { OFFER_CLAIM } from './issueCredential.js';
import { redeemedOffer } from './tokenEdge.js';
import type { CookieKeys } from '../http/cookieKeys.js';
import type { AttestationKeys } from './attestationKeys.js';
import { issuerDisplay, type CardSources } from './card.js';

/**
 * The one public client every wallet uses: pre-authorized code grant only, no redirects. Wallets usually
 * send no client_id in the pre-authorized token request (OpenID4VCI 1.0 §6.1); the token edge supplies it.
 */
export const WALLET_CLIENT_ID = 'wallet';

export interface WalletProviderOptions {
  credentialIssuer: string;
  baseUrl: string;
  store: Store;
  /** oidc-provider needs a keystore of private keys, though it signs nothing here (src/issuance signs the credential and its lists; wellKnown.ts publishes the keys) */
  credentialKeys: { keys: JWK[] };
  credentialTypes: CredentialType[];
  cookieKeys: CookieKeys;
  /** the root of the nonce secrets (every instance derives the same ones) */
  secret: string;
  offerLifetime: number;
  accessTokenLifetime: number;
  issueCredential: OpenID4VCIIssueCredential;
  /** wallet providers' keys, for wallet and key attestations */
  attestationKeys: AttestationKeys;
  /** whether mdocs can be signed: types with `mdoc` then have an mso_mdoc configuration too */
  mdoc?: boolean;
  /** what the cards and the issuer's own display are made from (src/issuance/card.ts) */
  cards?: CardSources;
  /** each type's batch size (src/rules/batch.ts): one credential per proved key, up to it */
  batchSize?: (type: CredentialType) => number;
  /**
   * re-issuance (a type's `reissue`): the wallet's token response carries a refresh_token, rotated at each
   * use, living until this instant (epoch seconds: the credential's expiry), which the token edge leaves on
   * the request (`reissueUntil`); undefined for a token request of a type without re-issuance
   */
  reissueUntil?: (ctx: unknown) => number | undefined;
  /** why a wallet attestation with a `status` is refused (src/issuance/attestationStatus.ts), or undefined */
  walletAttestationRefusal?: (payload: Record<string, unknown>) => Promise<string | undefined>;
}

/** A client identifier an attestation may name: printable, bounded, and not the anonymous wallet client's. */
const ATTESTED_CLIENT_ID = /^[\x21-\x7E]{1,200}$/;

/**
 * The clients attested wallets authenticate as (attestation-based client authentication: the attestation's
 * `sub` is the client_id). Any identifier is a client, whose only way to authenticate is an attestation
 * signed by a trusted wallet provider, and whose only grant is the pre-authorized code: the wallet
 * provider, not this issuer, decides which identifiers exist. Read-only: there is no registration.
 */
const attestedWallets = (grantTypes: string[]): Adapter => ({
  async find(clientId: string): Promise<AdapterPayload | undefined> {
    if (!ATTESTED_CLIENT_ID.test(clientId) || clientId === WALLET_CLIENT_ID) return undefined;
    return {
      client_id: clientId,
      token_endpoint_auth_method: 'attest_jwt_client_auth',
      grant_types: grantTypes,
      redirect_uris: [],
      response_types: [],
      id_token_signed_response_alg: 'ES256',
    };
  },
  async upsert() {},
  async findByUid() {
    return undefined;
  },
  async findByUserCode() {
    return undefined;
  },
  async consume() {},
  async destroy() {},
  async revokeByGrantId() {},
});

export { NOTIFICATION_PATH };

/** RFC 9449 §5.1: what wallets may sign DPoP proofs with, at the provider's endpoints and the notification endpoint. */
export const DPOP_SIGNING_ALGS: ('ES256' | 'EdDSA')[] = ['ES256', 'EdDSA'];

/** How much longer a wallet grant lives than the access token minted right after it, in the same request. */
const GRANT_SLACK_SECONDS = 5;

/** The store namespace of the wallet provider's records (src/store/oidcAdapter.ts). */
const WALLET_NAMESPACE = 'wallet';

/**
 * The part of the wallet provider's configuration no option changes: the one anonymous wallet client,
 * the code-only response type, JSON errors, and the features the wallet flow leaves off. Made fresh for
 * each provider: oidc-provider keeps (and may extend) the objects it is given, and a process runs several.
 */
const fixedConfiguration = (grantTypes: string[]) =>
  ({
    clients: [
      {
        client_id: WALLET_CLIENT_ID,
        token_endpoint_auth_method: 'none',
        grant_types: grantTypes,
        redirect_uris: [],
        response_types: [],
        // never used (no ID tokens in this flow); must name an algorithm of the keystore
        id_token_signed_response_alg: 'ES256',
      },
    ],
    responseTypes: ['code'],
    scopes: ['openid'],
    // the account behind a wallet grant is the holder's prompt step
    findAccount: async (_ctx, accountId) => ({ accountId, claims: async () => ({ sub: accountId }) }),
    // the access token names the offer it redeems, for the credential request (src/issuance/issueCredential.ts);
    // the token edge found the offer (src/issuance/tokenEdge.ts)
    extraTokenClaims: async (ctx) => {
      const offerId = redeemedOffer(ctx);
      return offerId ? { [OFFER_CLAIM]: offerId } : undefined;
    },
    clientBasedCORS: () => true,
    // wallets and scripts get JSON errors, never an HTML page (D4)
    renderError: async (ctx, out) => {
      ctx.type = 'json';
      ctx.body = out;
    },
    // what the wallet may sign DPoP proofs and attestations with (RFC 9449 §5.1 dpop_signing_alg_values_supported)
    enabledJWA: { dPoPSigningAlgValues: [...DPOP_SIGNING_ALGS], attestSigningAlgValues: ['ES256', 'EdDSA'] },
  }) satisfies Configuration;

/** The features the wallet flow does not use. */
const featuresOff = () =>
  ({
    devInteractions: { enabled: false },
    userinfo: { enabled: false },
    pushedAuthorizationRequests: { enabled: false },
    rpInitiatedLogout: { enabled: false },
  }) satisfies Configuration['features'];

/**
 * The wallet-facing issuer: an oidc-provider instance of its own with `features.openid4vci` on, issuer
 * `{base_url}/<path>`: turning the feature on adds the pre-authorized code grant to the discovery
 * document, which the relying parties' providers must not list. Its own discovery lists that grant next
 * to `authorization_code` only (responseTypes `code`, no `offline_access`: no implicit grant), and
 * `refresh_token` when a type has `reissue` (`refreshTokens`).
 */
export function createWalletProvider(o: WalletProviderOptions): Provider {
  const published = credentialConfigurationsFor(o.credentialTypes, o.baseUrl, {
    mdoc: o.mdoc,
    cards: o.cards,
    batchSize: o.batchSize,
  });
  const provider = new Provider(o.credentialIssuer, walletConfiguration(o, published));
  // first: the token edge's codes and the provider's reads of them share one request scope
  provider.use(adapterScope);
  publishConfigurations(provider, published);
  return provider;
}

/** The fixed configuration with what the options decide: store, keys, lifetimes, attestations, credentials. */
function walletConfiguration(
  o: WalletProviderOptions,
  published: ReturnType<typeof credentialConfigurationsFor>,
): Configuration {
  const StoreAdapter = createOidcAdapterFactory(o.store, WALLET_NAMESPACE);
  const attested = o.attestationKeys.configured;
  const reissue = o.reissueUntil !== undefined && o.credentialTypes.some((t) => t.reissue === true);
  const grantTypes = reissue ? [PRE_AUTHORIZED_CODE_GRANT, 'refresh_token'] : [PRE_AUTHORIZED_CODE_GRANT];
  const wallets = attestedWallets(grantTypes);
  return {
    ...fixedConfiguration(grantTypes),
    ...(reissue ? refreshTokens(o) : {}),
    routes: WALLET_ROUTES,
    // with wallet providers configured, an attested wallet is the client its attestation names (attestedWallets)
    adapter: attested ? (name: string) => (name === 'Client' ? wallets : new StoreAdapter(name)) : StoreAdapter,
    jwks: { keys: o.credentialKeys.keys as NonNullable<Configuration['jwks']>['keys'] },
    cookies: { keys: o.cookieKeys },
    clientAuthMethods: attested ? ['none', 'attest_jwt_client_auth'] : ['none'],
    ttl: {
      AccessToken: o.accessTokenLifetime,
      PreAuthorizedCode: o.offerLifetime,
      // minted at redemption, with the access token it stands behind: it lives as long, and no longer; a
      // re-issuable credential's as long as the credential (its refresh tokens name it)
      Grant: (_ctx, grant) => {
        const until = (grant as { [REISSUE_UNTIL]?: number })[REISSUE_UNTIL];
        return (until ? secondsUntil(until) : 0) + o.accessTokenLifetime + GRANT_SLACK_SECONDS;
      },
      AuthorizationCode: 60,
      BackchannelAuthenticationRequest: 60,
      ClientCredentials: 60,
      DeviceCode: 60,
      IdToken: 60,
      Interaction: 60,
      // a re-issuable credential's refresh token lives until the credential expires (`refreshTokens`)
      RefreshToken: (ctx) => secondsUntil(o.reissueUntil?.(ctx)),
      Session: 60,
    },
    features: {
      ...featuresOff(),
      // RFC 9449, OpenID4VC HAIP 1.0: sender-constrained access tokens, with server-provided nonces (derived
      // from the shared cookie keys, so any instance accepts any instance's nonce)
      dPoP: { enabled: true, nonceSecret: nonceSecretFrom(o.secret, 'DPoP nonce secret'), requireNonce: () => true },
      // OAuth 2.0 Attestation-Based Client Authentication: a wallet attestation signed by a trusted wallet
      // provider (walletAttestation.trustedProviders) and its PoP with a server challenge
      attestClientAuth: attested
        ? {
            enabled: true,
            ack: 'draft-12',
            challengeSecret: nonceSecretFrom(o.secret, 'attestation challenge secret'),
            getAttestationSignaturePublicKey: (_ctx, header) => o.attestationKeys.keyFor(header),
            // ARF ISSU_21: a wallet attestation that names a status list entry must be valid there (checked once
            // its signature and PoP are verified)
            assertAttestationJwtAndPop: async (_ctx, attestation) => {
              const refusal = await o.walletAttestationRefusal?.(attestation.payload as Record<string, unknown>);
              if (refusal) throw new errors.InvalidClientAuth(refusal);
            },
          }
        : { enabled: false },
      resourceIndicators: resourceIndicators(o),
      openid4vci: {
        enabled: true,
        ack: 'experimental-01',
        nonceSecret: nonceSecretFrom(o.secret),
        preAuthorizedCodeGrant: true,
        credentialConfigurationsSupported: providerConfigurations(published),
        credentialEndpointExpectedAudience: () => o.credentialIssuer,
        // OpenID4VCI 1.0 Appendix D: a proof's key_attestation, signed by a trusted wallet provider
        getKeyAttestationSignaturePublicKey: (_ctx, _iss, header) => o.attestationKeys.keyFor(header),
        issueCredential: o.issueCredential,
        metadata: issuerMetadata(o),
      },
    },
  };
}

/**
 * OpenID4VCI 1.0 §12.2.4: the notification endpoint is ours (src/issuance/notificationEndpoint.ts), the issuer's
 * own name and logo (ui.name, ui.logo) per language, and `batch_credential_issuance` when some type takes
 * batches: the largest of their sizes (the provider refuses more proofs; each type's own limit is checked in
 * src/issuance/issueCredential.ts).
 */
function issuerMetadata(o: WalletProviderOptions) {
  const display = o.cards && issuerDisplay(o.cards);
  const size = issuerBatchSize(o.credentialTypes.map((t) => o.batchSize?.(t) ?? 1));
  return {
    notification_endpoint: `${o.credentialIssuer}/${NOTIFICATION_PATH}`,
    ...(display ? { display } : {}),
    ...(size ? { batch_credential_issuance: { batch_size: size } } : {}),
  };
}

/**
 * The credential issuer identifier is the resource the access token is for (RFC 8707); wallets often send
 * it as `resource`, and the credential endpoint expects it as the token's audience.
 */
function resourceIndicators(o: WalletProviderOptions): NonNullable<Configuration['features']>['resourceIndicators'] {
  const issuer = o.credentialIssuer;
  const scope = o.credentialTypes.map(scopeFor).join(' ');
  return {
    enabled: true,
    defaultResource: async () => issuer,
    useGrantedResource: async () => true,
    getResourceServerInfo: async (_ctx, resource) => {
      if (resource !== issuer) throw new errors.InvalidTarget();
      return { scope, audience: issuer, accessTokenFormat: 'opaque', accessTokenTTL: o.accessTokenLifetime };
    },
  };
}

/**
 * The credential issuer metadata publishes the configurations as OpenID4VCI 1.0 gives them (an mdoc's
 * binding method is cose_key), where oidc-provider would serve its own copy (providerConfigurations).
 */
function publishConfigurations(provider: Provider, published: ReturnType<typeof credentialConfigurationsFor>): void {
  provider.use(async (ctx, next) => {
    await next();
    const body = ctx.body as { credential_configurations_supported?: unknown } | undefined;
    if (
      ctx.path === '/.well-known/openid-credential-issuer' &&
      body &&
      typeof body === 'object' &&
      'credential_configurations_supported' in body
    ) {
      body.credential_configurations_supported = published;
    }
  });
}
