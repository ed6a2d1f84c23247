import type { Context, Middleware } from 'koa';
import mount from 'koa-mount';
import type Provider from 'oidc-provider';
import type { JWK } from 'jose';
import type { ClientConfig, Config, CredentialType } from '../config/schema.js';
import type { Store } from '../store/types.js';
import { router, type Route } from '../http/router.js';
import type { PinHasher } from '../rules/pinHash.js';
import type { RateLimits } from '../http/rateLimits.js';
import type { ExternalFlows } from '../external/flows.js';
import type { GrantClaims } from '../flow/flowClaims.js';
import type { OtherProvider } from '../identity/otherProvider.js';
import { discoveryDocument } from './discovery.js';
import type { VersionProfile } from './versions.js';
import { notFound, withClientErrors } from './actions/shared.js';
import { parEndpoint } from './actions/par.js';
import { authorizeEndpoint, forBrowsers, providerAuthorizes } from './actions/authorize.js';
import { tokenEndpoint } from './actions/token.js';
import { userinfoEndpoint, userinfoPreflight } from './actions/userinfo.js';
import { RevokedGrants } from './revokedGrants.js';
import type { SigningKeys } from '../keys/keyRing.js';
import type { OutboundFetch } from '../http/outboundFetch.js';
import type { Registrations } from '../verification/registration.js';

export interface EdgeDeps {
  profile: VersionProfile;
  provider: Provider;
  config: Config;
  store: Store;
  clients: ReadonlyMap<string, ClientConfig>;
  credentialTypes: ReadonlyMap<string, CredentialType>;
  /** the ID-token keys published now (D20: they change with a rotation) */
  publicKeys: () => { keys: JWK[] };
  /** the ID-token keys: sign UserInfo answers as JWTs for the clients that ask for them */
  idTokenKeys: SigningKeys | { keys: JWK[] };
  pinHasher: PinHasher;
  /** fetches of a client's hint jwks_uri (src/http/outboundFetch.ts) */
  outbound: OutboundFetch;
  /** D13: External Client flows, continued here with context_id */
  external: ExternalFlows;
  grantClaims: GrantClaims;
  /** D12: a VerifiedIdentity_Other journey continues here with context_id */
  otherProvider?: OtherProvider;
  /** PAR and token: per address, and per client once it authenticated (src/http/rateLimits.ts) */
  rateLimits?: RateLimits;
  /** ETSI TS 119 475: the clients' registration certificates; a request beyond them is refused */
  registrations?: Registrations;
}

/** Discovery documents and key sets: public, cacheable, readable from any origin. */
const json = (ctx: Context, body: unknown) => {
  ctx.set('Cache-Control', 'public, max-age=300');
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.body = body;
};

/**
 * The version edge (docs/architecture.md): the spec's rules in front of one oidc-provider instance. It
 * answers discovery and key sets itself, checks PAR and authorise requests, takes the id_token_hint out
 * of the provider's way, translates PKCE `plain`, and shapes the provider's answers into the spec's
 * codes and token response. A version is data (VersionProfile); this code is shared by both. Each
 * endpoint is a handler of its own in src/oidc/actions/.
 */
export function createVersionEdge(d: EdgeDeps): Middleware {
  const { profile, config } = d;
  const rfc6749 = config.rfc6749Errors;
  const toProvider = mount(profile.providerMount, d.provider as never) as Middleware;
  const par = withClientErrors(rfc6749, parEndpoint({ ...d, toProvider }));
  const authorize = authorizeEndpoint({ ...d, toProvider });
  // D16: what a replayed code revokes, for as long as a token it bought may be valid
  const revokedGrants = new RevokedGrants(d.store, profile.id, config.lifetimes.token + 5);
  const token = withClientErrors(rfc6749, tokenEndpoint({ ...d, toProvider, rfc6749, revokedGrants }));
  const userinfo = userinfoEndpoint({ ...d, revokedGrants });
  const preflight = (ctx: Context) => toProvider(ctx, notFound); // CORS preflight: the provider refuses it
  const { paths } = profile;
  const routes: Route[] = [
    {
      method: 'GET',
      path: paths.discovery,
      handle: (ctx) => json(ctx, discoveryDocument(profile, config.baseUrl, 'par')),
    },
    { method: 'GET', path: paths.jwks, handle: (ctx) => json(ctx, d.publicKeys()) },
    ...(paths.issuerDiscovery
      ? [
          {
            method: 'GET' as const,
            path: paths.issuerDiscovery,
            handle: (ctx: Context) => json(ctx, discoveryDocument(profile, config.baseUrl, 'par')),
          },
        ]
      : []),
    { method: 'POST', path: paths.par, handle: par },
    { method: 'OPTIONS', path: paths.par, handle: preflight },
    { method: 'GET', path: paths.authorize, handle: forBrowsers((ctx) => authorize(ctx, 'authorize')) },
    { method: 'POST', path: paths.token, handle: token },
    { method: 'OPTIONS', path: paths.token, handle: preflight },
    { method: 'GET', path: paths.userinfo, handle: userinfo },
    { method: 'POST', path: paths.userinfo, handle: userinfo },
    { method: 'OPTIONS', path: paths.userinfo, handle: userinfoPreflight },
    // the provider's resume step after the holder's prompt: /.../authorize/<uid>
    {
      method: 'GET',
      path: new RegExp(`^${paths.authorize.replaceAll('.', '\\.')}/[^/]+$`),
      handle: providerAuthorizes(toProvider, rfc6749),
    },
  ];
  if (paths.rootDiscovery && paths.rootJwks && paths.authorizeNonPar) {
    routes.push(
      {
        method: 'GET',
        path: paths.rootDiscovery,
        handle: (ctx) => json(ctx, discoveryDocument(profile, config.baseUrl, 'root')),
      },
      { method: 'GET', path: paths.rootJwks, handle: (ctx) => json(ctx, d.publicKeys()) },
      { method: 'GET', path: paths.authorizeNonPar, handle: forBrowsers((ctx) => authorize(ctx, 'authorizeNonPar')) },
    );
  }
  return router(routes);
}

/**
 * Every path the version edge serves in front of its provider, as written (`:uid`: the provider's resume
 * step); other spellings of these are refused at the service's edge (src/http/exactPaths.ts).
 */
export function edgePaths(profile: VersionProfile): string[] {
  const paths = Object.values(profile.paths).filter((p): p is string => p !== undefined);
  return [...paths, `${profile.paths.authorize}/:uid`];
}
