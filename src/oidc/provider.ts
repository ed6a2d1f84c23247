import Provider, { interactionPolicy, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import type { JWK } from 'jose';
import { VC_ISSUER_CLAIM, type Config } from '../config/schema.js';
import type { Store } from '../store/types.js';
import { adapterScope, createOidcAdapterFactory } from '../store/oidcAdapter.js';
import { installIdTokenSigner, createIdTokenSigner } from './idToken.js';
import { grantTokenId } from './revokedGrants.js';
import { GrantClaims } from '../flow/flowClaims.js';
import type { VersionProfile } from './versions.js';
import { INTERNAL_PARAMS } from './requestChecks.js';
import { EXTERNAL, IDENTITY_SCOPES } from '../rules/scopes.js';
import type { CookieKeys } from '../http/cookieKeys.js';
import { signingKeysOf, type SigningKeys } from '../keys/keyRing.js';

/** oidc-provider keeps a pushed request at most 60 s; the store drops it at our configured lifetime if shorter. */
export const parLifetime = (config: Config): number => Math.min(config.lifetimes.par, 60);

export interface RpProviderDeps {
  config: Config;
  store: Store;
  /** rotating (src/keys/keyRing.ts) or fixed (the first signs) */
  idTokenKeys: SigningKeys | { keys: JWK[] };
  /** signs and verifies oidc-provider's cookies (Keygrip's signatures) */
  cookieKeys: CookieKeys;
}

/** Scopes and the claims each one puts into the ID token. */
export function scopeClaims(config: Config): Record<string, string[]> {
  const claims: Record<string, string[]> = { openid: ['sub'] };
  for (const type of config.credentialTypes) {
    const attributes = Object.keys(type.attributes);
    if (!type.verifyOnly) claims[`issue.${type.name}`] = [...attributes, 'SerialNumber', 'ExpiresAt'];
    // vc_issuer: only in the flow's claims when the client has vcIssuerClaim (src/flow/flowClaims.ts)
    claims[type.name] = [...attributes, VC_ISSUER_CLAIM];
  }
  // D12: what each identity flow puts in the ID token
  const { VerifiedIdentity: pid, VerifiedIdentity_Other: other } = config.identity;
  if (pid) claims.VerifiedIdentity = [...pid.claims, ...pid.optionalClaims];
  if (other)
    claims.VerifiedIdentity_Other = other.verifiedClaims
      ? ['verified_claims']
      : [...new Set(Object.values(other.claims))];
  return claims;
}

/** The wallet step is the only interaction, and every authorization request goes through it (D10). */
function walletStepPolicy() {
  const { Prompt, Check } = interactionPolicy;
  return [
    new Prompt(
      { name: 'wallet', requestable: false },
      new Check('wallet_step', 'the holder completes the wallet step', (ctx: KoaContextWithOIDC) =>
        (ctx.oidc.result as { wallet?: boolean } | undefined)?.wallet ? Check.NO_NEED_TO_PROMPT : Check.REQUEST_PROMPT,
      ),
    ),
  ];
}

/** What every relying-party provider is configured with, whatever the service's config. */
const FIXED_CONFIGURATION = {
  clientAuthMethods: ['client_secret_post'],
  // every client authenticates with a secret, which a browser must not hold: no cross-origin PAR or token calls
  clientBasedCORS: () => false,
  features: {
    devInteractions: { enabled: false },
    pushedAuthorizationRequests: { enabled: true, requirePushedAuthorizationRequests: false },
    userinfo: { enabled: false },
    rpInitiatedLogout: { enabled: false },
    claimsParameter: { enabled: false },
    requestObjects: { enabled: false },
  },
  responseTypes: ['code'],
  conformIdTokenClaims: false,
  extraParams: INTERNAL_PARAMS,
  allowOmittingSingleRegisteredRedirectUri: false,
  pkce: { required: () => false },
  loadExistingGrant: async (ctx: KoaContextWithOIDC) => {
    const grantId = (ctx.oidc.result as { consent?: { grantId?: string } } | undefined)?.consent?.grantId;
    return grantId ? ctx.oidc.provider.Grant.find(grantId) : undefined;
  },
  // JSON, which the edge maps onto the spec's codes (and shows a browser as the error page)
  renderError: async (ctx: KoaContextWithOIDC, out: object) => {
    ctx.type = 'application/json';
    ctx.body = out;
  },
  enabledJWA: {
    idTokenSigningAlgValues: ['RS256'],
  },
};

/** The registered clients, as oidc-provider knows them. */
const providerClients = (config: Config) =>
  config.clients.map((c) => ({
    client_id: c.clientId,
    client_secret: c.clientSecret,
    client_name: c.clientName,
    redirect_uris: c.redirectUris,
    response_types: ['code'],
    grant_types: ['authorization_code'],
    token_endpoint_auth_method: 'client_secret_post',
    id_token_signed_response_alg: 'RS256',
    scope: ['openid', ...c.scopes].join(' '),
  }));

/**
 * At the token endpoint the flow's claims (kept under the grant the prompt created) decide `sub` (D2)
 * and the ID token's claims; elsewhere the account is the browser's holder session. The provider asks
 * once per code, after consuming it, and its grant has one code: the claims are taken, and the grant
 * (already loaded for this request; no token of it is kept, D3) goes in the same round trip.
 */
const findAccount =
  (grantClaims: GrantClaims) => async (ctx: KoaContextWithOIDC, accountId: string, token?: { grantId?: string }) => {
    if (!token?.grantId) return { accountId, claims: async () => ({ sub: accountId }) };
    const [flow] = await Promise.all([
      grantClaims.take(token.grantId),
      ctx.oidc.entities.Grant?.jti === token.grantId ? ctx.oidc.entities.Grant.destroy() : undefined,
    ]);
    if (!flow) return undefined;
    ctx.state.flow = flow; // for the edge's token response (D3: Version 1 non-PAR carries state)
    return { accountId: flow.sub, claims: async () => ({ sub: flow.sub, ...flow.claims }) };
  };

/** The configuration of one version's provider: FIXED_CONFIGURATION and what the config and the version decide. */
function rpConfiguration(profile: VersionProfile, deps: RpProviderDeps): Configuration {
  const { config, store } = deps;
  // D3: the token response's access_token is the ID token; the provider's own opaque access token never
  // leaves the service (its userinfo, introspection and revocation endpoints are off; the edge's UserInfo
  // endpoint takes the ID token), so it is not stored
  const Adapter = createOidcAdapterFactory(
    store,
    profile.id,
    { PushedAuthorizationRequest: parLifetime(config) },
    new Set(['AccessToken']),
  );
  const interactionBase = `${config.baseUrl}/interaction/${profile.id}`;
  return {
    ...FIXED_CONFIGURATION,
    adapter: Adapter as unknown as Configuration['adapter'],
    clients: providerClients(config),
    // oidc-provider needs a keystore of private keys; it signs nothing with it (the ID token signer is
    // ours, below) and the edge publishes the JWKS (D20: from the rotating keys)
    jwks: { keys: [signingKeysOf(deps.idTokenKeys).signing()] } as Configuration['jwks'],
    cookies: {
      keys: deps.cookieKeys,
      names: {
        session: `_session_${profile.id}`,
        interaction: `_interaction_${profile.id}`,
        resume: `_resume_${profile.id}`,
      },
      long: { signed: true, httpOnly: true, sameSite: 'lax' },
      short: { signed: true, httpOnly: true, sameSite: 'lax' },
    },
    scopes: [
      'openid',
      EXTERNAL,
      ...IDENTITY_SCOPES,
      ...config.credentialTypes.flatMap((t) => (t.verifyOnly ? [t.name] : [`issue.${t.name}`, t.name])),
    ],
    claims: scopeClaims(config),
    routes: profile.routes,
    ttl: {
      AuthorizationCode: config.lifetimes.code,
      AccessToken: config.lifetimes.token,
      IdToken: config.lifetimes.token,
      Interaction: config.lifetimes.interaction,
      // written when the code is issued, and read once more to redeem it (the code expires with its session)
      Session: config.lifetimes.code,
      Grant: config.lifetimes.interaction,
    },
    interactions: {
      url: (_ctx: unknown, interaction: { uid: string }) => `${interactionBase}/${interaction.uid}`,
      policy: walletStepPolicy() as unknown as NonNullable<Configuration['interactions']>['policy'],
    },
    findAccount: findAccount(new GrantClaims(store)),
  } as unknown as Configuration;
}

/** D1: the ID tokens' `iss` for a client of this version: the version's issuer, or the legacy one for a flagged client. */
export const issuerFor = (profile: VersionProfile, legacy: boolean): string =>
  legacy && profile.legacyIssuer ? profile.legacyIssuer : profile.issuer;

/** The error detail oidc-provider keeps off the wire, for the edge to map onto the spec's codes. */
const keepErrorDetail = (ctx: KoaContextWithOIDC, err: { error_detail?: string }) => {
  ctx.state.oidcErrorDetail = err.error_detail;
};

/**
 * One relying-party-facing oidc-provider instance per interface version. It does the protocol work
 * (PAR, code flow, PKCE S256, client authentication, code redemption); the version edge in front of
 * it applies the spec's rules and shapes its answers.
 */
export async function createRpProvider(profile: VersionProfile, deps: RpProviderDeps): Promise<Provider> {
  const { config } = deps;
  const legacyIssuerClients = new Set(config.clients.filter((c) => c.legacyV2Issuer).map((c) => c.clientId));
  const provider = new Provider(profile.issuer, rpConfiguration(profile, deps));
  provider.use(adapterScope); // a code found in a request is consumed without reading its lifetime again
  provider.proxy = true;
  provider.on('grant.error', keepErrorDetail);
  provider.on('pushed_authorization_request.error', keepErrorDetail);
  provider.on('authorization.error', keepErrorDetail);
  installIdTokenSigner(provider, await createIdTokenSigner(deps.idTokenKeys), {
    ttl: config.lifetimes.token,
    issuerFor: (clientId) => issuerFor(profile, legacyIssuerClients.has(clientId)),
    tokenIdFor: grantTokenId,
  });
  return provider;
}
