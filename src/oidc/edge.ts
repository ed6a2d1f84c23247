import type { Context, Middleware, Next } from 'koa';
import mount from 'koa-mount';
import type Provider from 'oidc-provider';
import type { JWK } from 'jose';
import type { ClientConfig, Config, CredentialType } from '../config/schema.js';
import type { Store } from '../store/types.js';
import { ProtocolError, invalidRequest } from '../rules/errors.js';
import { authenticateClient } from '../rules/clientAuth.js';
import { checkRedirectUri } from '../rules/authorizationParams.js';
import { readForm, readFormWithBody, readQuery, sendError, redirectError, noStore, forwardForm, forwardBody } from './http.js';
import { checkAuthorizationRequest, INTERNAL_PARAMS, type HintRecord, type RequestSite } from './requestChecks.js';
import { discoveryDocument } from './discovery.js';
import { mapProviderError, toProtocolError, type ErrorSite } from './errorMapping.js';
import { shapeTokenResponse } from './tokenResponse.js';
import type { VersionProfile } from './versions.js';
import { parLifetime } from './provider.js';
import { edgeCanStore, pushedRequestKey, storePushedRequest } from './pushedRequest.js';
import { StoreScope } from '../store/requestScope.js';

export interface EdgeDeps {
  profile: VersionProfile;
  provider: Provider;
  config: Config;
  store: Store;
  clients: ReadonlyMap<string, ClientConfig>;
  credentialTypes: ReadonlyMap<string, CredentialType>;
  publicKeys: { keys: JWK[] };
}

/** Room for an id_token_hint of the configured size (images make hints large) plus the other fields. */
const formLimit = (config: Config) => config.hint.maxLength + 64 * 1024;
/** Token requests carry no hint. */
const TOKEN_FORM_LIMIT = 64 * 1024;

function stripInternal(params: Record<string, string>): Record<string, string> {
  for (const name of INTERNAL_PARAMS) delete params[name];
  return params;
}

/**
 * The version edge (ARCHITECTURE.md): the spec's rules in front of one oidc-provider instance. It
 * answers discovery and key sets itself, checks PAR and authorise requests, takes the id_token_hint out
 * of the provider's way, translates PKCE `plain`, and shapes the provider's answers into the spec's
 * codes and token response. A version is data (VersionProfile); this code is shared by both.
 */
export function createVersionEdge(d: EdgeDeps): Middleware {
  const { profile, provider, config } = d;
  const toProvider = mount(profile.providerMount, provider as never) as Middleware;
  const rfc6749 = config.rfc6749Errors;
  const notFound: Next = async () => {};

  const requestContext = (client: ClientConfig, site: RequestSite) => ({
    client,
    profile,
    config,
    credentialTypes: d.credentialTypes,
    site,
    registerHint: (key: string, record: HintRecord, ttl: number) => d.store.setIfAbsent(key, record, ttl),
  });

  /** Maps a JSON error the provider answered with onto the spec's codes. */
  function mapJsonError(ctx: Context, site: ErrorSite): void {
    const body = ctx.body as { error?: string; error_description?: string } | undefined;
    if (ctx.status < 400 || !body?.error) return;
    const mapped = mapProviderError(site, body.error, body.error_description, ctx.state.oidcErrorDetail, rfc6749);
    const err = toProtocolError(mapped, ctx.status === 401 && mapped.error !== 'invalid_client' ? 400 : ctx.status);
    if (!(rfc6749 && mapped.error === 'invalid_client')) ctx.remove('WWW-Authenticate');
    sendError(ctx, err);
  }

  /** Maps a redirected error (Location with `error`) onto the spec's codes. */
  function mapRedirectedError(ctx: Context): void {
    const location = ctx.response.get('Location');
    if (!location || !location.includes('error=')) return;
    const url = new URL(location);
    const error = url.searchParams.get('error');
    if (!error) return;
    const mapped = mapProviderError('authorize', error, url.searchParams.get('error_description') ?? undefined, ctx.state.oidcErrorDetail, rfc6749);
    url.searchParams.set('error', mapped.error);
    url.searchParams.set('error_description', mapped.description);
    ctx.redirect(url.href);
  }

  async function par(ctx: Context): Promise<void> {
    const params = stripInternal(await readForm(ctx, formLimit(config)));
    const client = authenticateClient(params, d.clients);
    // a request the edge has checked in full is stored by the edge, in the same round trip as its hint's registration
    const checked = await checkAuthorizationRequest(params, requestContext(client, 'par'), (providerParams) =>
      edgeCanStore(providerParams, ctx.headers) ? storePushedRequest(provider, client.clientId, providerParams, parLifetime(config)) : undefined,
    );
    if (checked.stored) {
      ctx.body = checked.stored;
      ctx.status = 201;
      ctx.vary('Origin');
      noStore(ctx);
      return;
    }
    forwardForm(ctx, checked.providerParams);
    await toProvider(ctx, notFound);
    if (ctx.status === 201) {
      (ctx.body as { expires_in: number }).expires_in = parLifetime(config);
      noStore(ctx);
    } else {
      mapJsonError(ctx, 'par');
    }
  }

  async function authorize(ctx: Context, site: RequestSite): Promise<void> {
    const params = stripInternal(readQuery(ctx));
    if (params.request_uri !== undefined) {
      if (site === 'authorizeNonPar') throw invalidRequest('request_uri: /oidc/authorizev1 takes non-PAR requests; use /oidc/authorize for PAR');
      if (params.client_id === undefined) throw invalidRequest('client_id is required');
      // D16: a request_uri starts one authorisation. oidc-provider marks it used only when it issues
      // the code, so the first use is claimed here, atomically, per client (a request naming another
      // client does not burn the owner's request_uri).
      const claim = `par-used:v${profile.version}:${params.client_id}:${params.request_uri}`;
      // the pushed request the provider loads next is read in the same round trip as the claim
      const pushedKey = pushedRequestKey(profile.version, params.request_uri);
      if (pushedKey) StoreScope.of(ctx.state).read(d.store, pushedKey);
      if (!(await d.store.setIfAbsent(claim, 1, parLifetime(config)))) {
        throw invalidRequest('request_uri has already been used: push a new request');
      }
      ctx.querystring = new URLSearchParams({ client_id: params.client_id, request_uri: params.request_uri }).toString();
    } else {
      if (site === 'authorize' && !profile.nonParAtAuthorize) {
        throw invalidRequest('request_uri is required: Version 1 authorise takes PAR requests (non-PAR verification uses /oidc/authorizev1)');
      }
      // Until client_id and redirect_uri are known good, errors are answered directly (spec: Authorise errors).
      if (params.client_id === undefined) throw invalidRequest('client_id is required');
      const client = d.clients.get(params.client_id);
      if (!client) throw invalidRequest('client_id is not a registered client');
      const redirectUri = checkRedirectUri(params.redirect_uri, client.redirectUris);
      try {
        const checked = await checkAuthorizationRequest(params, requestContext(client, site));
        ctx.querystring = new URLSearchParams(checked.providerParams).toString();
        ctx.path = profile.paths.authorize; // /oidc/authorizev1 is the provider's authorise endpoint too
      } catch (err) {
        if (err instanceof ProtocolError) return redirectError(ctx, redirectUri, err, params.state, profile.issuer);
        throw err;
      }
    }
    await toProvider(ctx, notFound);
    if (ctx.status >= 400) mapJsonError(ctx, 'authorize');
    else mapRedirectedError(ctx);
  }

  async function token(ctx: Context): Promise<void> {
    const form = await readFormWithBody(ctx, TOKEN_FORM_LIMIT);
    const client = authenticateClient(form.params, d.clients);
    // the provider reads the client's bytes unless the edge changed something: an empty value dropped
    // (RFC 6749 §3.1) or an internal parameter taken out
    if (form.exact && !INTERNAL_PARAMS.some((name) => name in form.params)) forwardBody(ctx, form.body);
    else forwardForm(ctx, stripInternal(form.params));
    await toProvider(ctx, notFound);
    noStore(ctx);
    if (ctx.status === 200) shapeTokenResponse(ctx.body as Record<string, unknown>, { client, profile, extras: ctx.state.flow?.tokenExtras });
    else mapJsonError(ctx, 'token');
  }

  const json = (ctx: Context, body: unknown, maxAge = 300) => {
    ctx.set('Cache-Control', `public, max-age=${maxAge}`);
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.body = body;
  };

  const routes = new Map<string, { method: 'GET' | 'POST'; handle: (ctx: Context) => Promise<void> | void }>([
    [profile.paths.discovery, { method: 'GET', handle: (ctx) => json(ctx, discoveryDocument(profile, config.baseUrl, 'par')) }],
    [profile.paths.jwks, { method: 'GET', handle: (ctx) => json(ctx, d.publicKeys) }],
    [profile.paths.par, { method: 'POST', handle: par }],
    [profile.paths.authorize, { method: 'GET', handle: (ctx) => authorize(ctx, 'authorize') }],
    [profile.paths.token, { method: 'POST', handle: token }],
  ]);
  if (profile.paths.rootDiscovery) {
    routes.set(profile.paths.rootDiscovery, { method: 'GET', handle: (ctx) => json(ctx, discoveryDocument(profile, config.baseUrl, 'root')) });
    routes.set(profile.paths.rootJwks!, { method: 'GET', handle: (ctx) => json(ctx, d.publicKeys) });
    routes.set(profile.paths.authorizeNonPar!, { method: 'GET', handle: (ctx) => authorize(ctx, 'authorizeNonPar') });
  }
  const resumePrefix = `${profile.paths.authorize}/`;

  async function resume(ctx: Context): Promise<void> {
    await toProvider(ctx, notFound);
    if (ctx.status >= 400) mapJsonError(ctx, 'authorize');
    else mapRedirectedError(ctx);
  }

  async function dispatch(ctx: Context, route: { method: 'GET' | 'POST'; handle: (ctx: Context) => Promise<void> | void }): Promise<void> {
    if (ctx.method !== route.method && !(route.method === 'GET' && ctx.method === 'HEAD')) {
      if (ctx.method === 'OPTIONS' && route.method === 'POST') return toProvider(ctx, notFound); // CORS preflight
      ctx.set('Allow', route.method);
      return sendError(ctx, new ProtocolError('invalid_request', `${ctx.method} is not allowed here; use ${route.method}`, 405));
    }
    try {
      await route.handle(ctx);
    } catch (err) {
      if (err instanceof ProtocolError) {
        const rfc = rfc6749 && err.error === 'unauthorised_client';
        return sendError(
          ctx,
          rfc ? new ProtocolError('invalid_client', err.description, 401) : err,
          rfc ? { 'WWW-Authenticate': 'Basic realm="client"' } : {},
        );
      }
      throw err;
    }
  }

  // not async: a request for another path passes on without a promise of its own
  return function versionEdge(ctx, next) {
    const route = routes.get(ctx.path);
    if (route) return dispatch(ctx, route);
    // the provider's resume step after the wallet step: /.../authorize/<uid>
    if (ctx.path.startsWith(resumePrefix) && ctx.method === 'GET') return resume(ctx);
    return next();
  };
}
