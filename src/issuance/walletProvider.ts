import type { JWK } from 'jose';
import Provider, { errors, type Configuration, type OpenID4VCIIssueCredential } from 'oidc-provider';
import type { CredentialType } from '../config/schema.js';
import { createOidcAdapterFactory } from '../store/oidcAdapter.js';
import type { Store } from '../store/types.js';
import { credentialConfigurationsFor, scopeFor } from './credentialConfigurations.js';
import { nonceSecretFrom } from './nonceSecret.js';
import { PRE_AUTHORIZED_CODE_GRANT } from './offerUri.js';
import { OFFER_CLAIM } from './issueCredential.js';
import { offerIdOf } from './offers.js';
import { CookieKeys } from '../http/cookieKeys.js';
import type { AttestationKeys } from './attestationKeys.js';

/**
 * The one public client every wallet uses: pre-authorized code grant only, no redirects. Wallets usually
 * send no client_id in the pre-authorized token request (OpenID4VCI 1.0 §6.1); the token edge supplies it.
 */
export const WALLET_CLIENT_ID = 'wallet';

export interface WalletProviderOptions {
  credentialIssuer: string;
  baseUrl: string;
  store: Store;
  credentialKeys: { keys: JWK[] };
  credentialTypes: CredentialType[];
  cookieKeys: string[];
  offerLifetime: number;
  accessTokenLifetime: number;
  issueCredential: OpenID4VCIIssueCredential;
  /** wallet providers' keys, for wallet and key attestations */
  attestationKeys: AttestationKeys;
}

/** The store namespace of the wallet provider's records (src/store/oidcAdapter.ts). */
const WALLET_NAMESPACE = 'wallet';

/**
 * The wallet-facing issuer: an oidc-provider instance of its own with `features.openid4vci` on, issuer
 * `{base_url}/<path>`: turning the feature on adds the pre-authorized code grant to the discovery
 * document, which the relying parties' providers must not list. Its own discovery lists that grant next
 * to `authorization_code` only (responseTypes `code`, no `offline_access`: no implicit or refresh grants).
 */
export function createWalletProvider(o: WalletProviderOptions): Provider {
  const issuer = o.credentialIssuer;
  const scope = o.credentialTypes.map(scopeFor).join(' ');

  const configuration: Configuration = {
    adapter: createOidcAdapterFactory(o.store, WALLET_NAMESPACE),
    clients: [
      {
        client_id: WALLET_CLIENT_ID,
        token_endpoint_auth_method: 'none',
        grant_types: [PRE_AUTHORIZED_CODE_GRANT],
        redirect_uris: [],
        response_types: [],
        // never used (no ID tokens in this flow); must name an algorithm of the keystore
        id_token_signed_response_alg: 'ES256',
      },
    ],
    jwks: { keys: o.credentialKeys.keys as NonNullable<Configuration['jwks']>['keys'] },
    cookies: { keys: new CookieKeys(o.cookieKeys) },
    responseTypes: ['code'],
    clientAuthMethods: ['none'],
    scopes: ['openid'],
    // the account behind a wallet grant is the holder's prompt step
    findAccount: async (_ctx, accountId) => ({ accountId, claims: async () => ({ sub: accountId }) }),
    // the access token names the offer it redeems, for the credential request (src/issuance/issueCredential.ts)
    extraTokenClaims: async (ctx) => {
      const code = ctx.oidc.params?.['pre-authorized_code'];
      return typeof code === 'string' ? { [OFFER_CLAIM]: offerIdOf(code) } : undefined;
    },
    clientBasedCORS: () => true,
    // wallets and scripts get JSON errors, never an HTML page (D4)
    renderError: async (ctx, out) => {
      ctx.type = 'json';
      ctx.body = out;
    },
    ttl: {
      AccessToken: o.accessTokenLifetime,
      PreAuthorizedCode: o.offerLifetime,
      Grant: o.offerLifetime + o.accessTokenLifetime,
      AuthorizationCode: 60,
      BackchannelAuthenticationRequest: 60,
      ClientCredentials: 60,
      DeviceCode: 60,
      IdToken: 60,
      Interaction: 60,
      RefreshToken: 60,
      Session: 60,
    },
    // what the wallet may sign DPoP proofs and attestations with (RFC 9449 §5.1 dpop_signing_alg_values_supported)
    enabledJWA: { dPoPSigningAlgValues: ['ES256', 'EdDSA'], attestSigningAlgValues: ['ES256', 'EdDSA'] },
    features: {
      devInteractions: { enabled: false },
      // RFC 9449, OpenID4VC HAIP 1.0: sender-constrained access tokens, with server-provided nonces (derived
      // from the shared cookie keys, so any instance accepts any instance's nonce)
      dPoP: { enabled: true, nonceSecret: nonceSecretFrom(o.cookieKeys, 'DPoP nonce secret'), requireNonce: () => true },
      userinfo: { enabled: false },
      pushedAuthorizationRequests: { enabled: false },
      rpInitiatedLogout: { enabled: false },
      // the credential issuer identifier is the resource the access token is for (RFC 8707); wallets
      // often send it as `resource`, and the credential endpoint expects it as the token's audience
      resourceIndicators: {
        enabled: true,
        defaultResource: async () => issuer,
        useGrantedResource: async () => true,
        getResourceServerInfo: async (_ctx, resource) => {
          if (resource !== issuer) throw new errors.InvalidTarget();
          return { scope, audience: issuer, accessTokenFormat: 'opaque', accessTokenTTL: o.accessTokenLifetime };
        },
      },
      openid4vci: {
        enabled: true,
        ack: 'experimental-01',
        nonceSecret: nonceSecretFrom(o.cookieKeys),
        preAuthorizedCodeGrant: true,
        credentialConfigurationsSupported: credentialConfigurationsFor(o.credentialTypes, o.baseUrl),
        credentialEndpointExpectedAudience: () => issuer,
        // OpenID4VCI 1.0 Appendix D: a proof's key_attestation, signed by a trusted wallet provider
        getKeyAttestationSignaturePublicKey: (_ctx, _iss, header) => o.attestationKeys.keyFor(header),
        issueCredential: o.issueCredential,
      },
    },
  };

  return new Provider(issuer, configuration);
}
