import type { Context, Middleware, Next } from 'koa';
import mount from 'koa-mount';
import type Provider from 'oidc-provider';
import type { JWK } from 'jose';
import type { ClientConfig, Config, CredentialType } from '../config/schema.js';
import type { Store } from '../store/types.js';
import { ProtocolError, invalidRequest } from '../rules/errors.js';
import { authenticateClient } from '../rules/clientAuth.js';
import { checkRedirectUri } from '../rules/authorizationParams.js';
import { readForm, readQuery, setForm } from '../http/form.js';
import { noStore, redirectError, sendError } from '../http/respond.js';
import { safeErrorDescription } from '../http/errorDescription.js';
import { router, type Route } from '../http/router.js';
import { checkAuthorizationRequest, claimHint, registerHint, stripInternal, type RequestSite } from './requestChecks.js';
import { discoveryDocument } from './discovery.js';
import { mapProviderError, toProtocolError, type ErrorSite } from './errorMapping.js';
import { sendErrorPage, wantsPage } from '../http/errorPage.js';
import { shapeTokenResponse } from './tokenResponse.js';
import type { VersionProfile } from './versions.js';
import { parLifetime } from './provider.js';
import type { PinHasher } from '../rules/pinHash.js';
import { edgeCanStore, pushedRequestKey, storePushedRequest } from './pushedRequest.js';
import type { ExternalFlows } from '../external/flows.js';
import { checkContinuationParams, mintContinuationCode } from '../external/continue.js';
import type { GrantClaims } from '../flow/flowClaims.js';
import type { OtherProvider } from '../identity/otherProvider.js';
import type { RateLimits } from '../http/rateLimits.js';
import { linkToFlow, startFlow } from '../telemetry/spans.js';

export interface EdgeDeps {
  profile: VersionProfile;
  provider: Provider;
  config: Config;
  store: Store;
  clients: ReadonlyMap<string, ClientConfig>;
  credentialTypes: ReadonlyMap<string, CredentialType>;
  /** the ID-token keys published now (D20: they change with a rotation) */
  publicKeys: () => { keys: JWK[] };
  pinHasher: PinHasher;
  /** D13: External Client flows, continued here with context_id */
  external: ExternalFlows;
  grantClaims: GrantClaims;
  /** D12: a VerifiedIdentity_Other journey continues here with context_id */
  otherProvider?: OtherProvider;
  /** PAR and token: per address, and per client once it authenticated (src/http/rateLimits.ts) */
  rateLimits?: RateLimits;
}

/** Room for an id_token_hint of the configured size (images make hints large) plus the other fields. */
const formLimit = (config: Config) => config.hint.maxLength + 64 * 1024;
/** Token requests carry no hint. */
const TOKEN_FORM_LIMIT = 64 * 1024;

/**
 * The version edge (docs/architecture.md): the spec's rules in front of one oidc-provider instance. It
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
    pinHasher: d.pinHasher,
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
    // every error oidc-provider redirects with passes here, an interaction's access_denied among them
    url.searchParams.set('error_description', safeErrorDescription(mapped.description));
    ctx.redirect(url.href);
  }

  /**
   * D16: a request_uri starts one authorisation. oidc-provider marks it used only when it issues the
   * code, so its first use is claimed here, atomically and per client (a request naming another client
   * does not burn the owner's request_uri). The claim is written only while the pushed request exists,
   * and expires with it: an unknown request_uri writes nothing, and the provider answers it as such.
   */
  async function claimPushedRequest(clientId: string, requestUri: string): Promise<void> {
    const pushed = pushedRequestKey(profile.id, requestUri);
    if (!pushed) return;
    const claimed = await d.store.markOnce(`${pushed}:claimed:${clientId}`, 1, pushed);
    if (!claimed && (await d.store.get(pushed)) !== undefined) throw invalidRequest('request_uri has already been used: push a new request');
  }

  /**
   * The form of a PAR or token request and its authenticated client, within the rate limits: every request
   * consumes its address's budget, and the client's budget only once the client authenticated (both in one
   * round trip), so nobody can use up a client's budget with its client_id alone. A request refused before
   * that (its form, its authentication) consumes the address's budget only; over it, the 429 is the answer.
   */
  async function authenticated(ctx: Context, endpoint: 'par' | 'token', formLimit: number): Promise<{ params: Record<string, string>; client: ClientConfig }> {
    let params: Record<string, string>;
    let client: ClientConfig;
    try {
      params = await readForm(ctx, formLimit);
      client = authenticateClient(params, d.clients);
    } catch (err) {
      await d.rateLimits?.consume(endpoint, { address: ctx.ip });
      throw err;
    }
    await d.rateLimits?.consume(endpoint, { client: client.clientId, address: ctx.ip });
    return { params, client };
  }

  /** Authorise is a browser's endpoint: an error answered directly is a page for a browser, JSON for an API client. */
  const forBrowsers =
    (handle: (ctx: Context) => Promise<void>) =>
    async (ctx: Context): Promise<void> => {
      try {
        await handle(ctx);
      } catch (err) {
        if (err instanceof ProtocolError && wantsPage(ctx)) return sendErrorPage(ctx, err.status, err.error, err.message);
        throw err;
      }
    };

  /** The provider answers an authorisation step; its errors are mapped onto the spec's. */
  async function providerAuthorizes(ctx: Context): Promise<void> {
    await toProvider(ctx, notFound);
    // the request (or interaction) the provider loaded names its flow's root
    linkToFlow((ctx as { oidc?: { params?: { vc_trace?: unknown } } }).oidc?.params?.vc_trace);
    if (ctx.status >= 400) {
      mapJsonError(ctx, 'authorize');
      const body = ctx.body as { error?: string; error_description?: string } | undefined;
      if (body?.error && wantsPage(ctx)) sendErrorPage(ctx, ctx.status, body.error, body.error_description);
    } else mapRedirectedError(ctx);
  }

  /**
   * RFC 9126: the edge checks the request; one of the spec's fields only is then stored by the edge
   * (src/oidc/pushedRequest.ts), anything else goes to oidc-provider's PAR endpoint, which handles or
   * refuses what the edge does not know.
   */
  async function par(ctx: Context): Promise<void> {
    const authed = await authenticated(ctx, 'par', formLimit(config));
    const params = stripInternal(authed.params);
    const client = authed.client;
    const { providerParams, hintRegistration } = await checkAuthorizationRequest(params, requestContext(client, 'par'));
    // this request is its flow's root; the flow's later requests link to it
    const flow = startFlow();
    if (flow) providerParams.vc_trace = flow;
    if (edgeCanStore(providerParams, ctx.headers)) {
      // the hint's replay marker first: a replayed hint's data is never written; the pushed request
      // then carries the data (two writes, where a record of its own would make three)
      if (hintRegistration) await claimHint(d.store, hintRegistration);
      const carried = hintRegistration && { data: hintRegistration.data, keepFor: hintRegistration.dataTtl };
      ctx.status = 201;
      ctx.body = await storePushedRequest(d.store, provider, profile.id, client.clientId, providerParams, parLifetime(config), carried);
      noStore(ctx);
      return;
    }
    await registerHint(d.store, hintRegistration);
    setForm(ctx, providerParams);
    await toProvider(ctx, notFound);
    if (ctx.status === 201) {
      (ctx.body as { expires_in: number }).expires_in = parLifetime(config);
      noStore(ctx);
    } else {
      mapJsonError(ctx, 'par');
    }
  }

  /**
   * D13: the client continues an External Client flow with the ContinuationContext its webhook carried,
   * and gets the redirect the holder's browser would have got. Errors are answered directly: the
   * redirect_uri is the original request's, known only once the context is.
   */
  async function continueExternal(ctx: Context, params: Record<string, string>): Promise<void> {
    if (params.client_id === undefined) throw invalidRequest('client_id is required');
    if (!d.clients.has(params.client_id)) throw invalidRequest('client_id is not a registered client');
    const continuation = await d.external.take(params.context_id, params.client_id, profile.id, (c) => checkContinuationParams(params, c.request));
    const location = await mintContinuationCode(provider, d.grantClaims, continuation, config.lifetimes.interaction);
    noStore(ctx);
    ctx.redirect(location);
  }

  async function authorize(ctx: Context, site: RequestSite): Promise<void> {
    const params = stripInternal(readQuery(ctx));
    if (params.context_id !== undefined) {
      // spec authorise context_id: a second-provider journey (D12), else an External Client flow (D13)
      if (d.otherProvider && (await d.otherProvider.resumes(ctx, params, profile.id))) return;
      return continueExternal(ctx, params);
    }
    if (params.request_uri !== undefined) {
      if (site === 'authorizeNonPar') throw invalidRequest('request_uri: /oidc/authorizev1 takes non-PAR requests; use /oidc/authorize for PAR');
      if (params.client_id === undefined) throw invalidRequest('client_id is required');
      if (!d.clients.has(params.client_id)) throw invalidRequest('client_id is not a registered client');
      await claimPushedRequest(params.client_id, params.request_uri);
      ctx.querystring = new URLSearchParams({ client_id: params.client_id, request_uri: params.request_uri }).toString();
      return providerAuthorizes(ctx);
    }
    if (site === 'authorize' && !profile.nonParAtAuthorize) {
      throw invalidRequest('request_uri is required: Version 1 authorise takes PAR requests (non-PAR verification uses /oidc/authorizev1)');
    }
    // Until client_id and redirect_uri are known good, errors are answered directly (spec: Authorise errors).
    if (params.client_id === undefined) throw invalidRequest('client_id is required');
    const client = d.clients.get(params.client_id);
    if (!client) throw invalidRequest('client_id is not a registered client');
    const redirectUri = checkRedirectUri(params.redirect_uri, client.redirectUris);
    try {
      const { providerParams, hintRegistration } = await checkAuthorizationRequest(params, requestContext(client, site));
      await registerHint(d.store, hintRegistration);
      const flow = startFlow(); // a non-PAR request starts its flow here
      if (flow) providerParams.vc_trace = flow;
      ctx.querystring = new URLSearchParams(providerParams).toString();
      ctx.path = profile.paths.authorize; // /oidc/authorizev1 is the provider's authorise endpoint too
    } catch (err) {
      // a state over its limit is not sent back either
      const state = params.state !== undefined && params.state.length <= config.maxParameterLength ? params.state : undefined;
      if (err instanceof ProtocolError) return redirectError(ctx, redirectUri, err, state, profile.issuer);
      throw err;
    }
    return providerAuthorizes(ctx);
  }

  async function token(ctx: Context): Promise<void> {
    const { client } = await authenticated(ctx, 'token', TOKEN_FORM_LIMIT);
    await toProvider(ctx, notFound);
    linkToFlow(ctx.state.flow?.trace); // the code's flow, as its claims record keeps it
    noStore(ctx);
    if (ctx.status === 200) shapeTokenResponse(ctx.body as Record<string, unknown>, { client, profile, extras: ctx.state.flow?.tokenExtras });
    else mapJsonError(ctx, 'token');
  }

  /** D4: failed client authentication is `unauthorised_client` (400), or RFC 6749's 401 `invalid_client` when configured. */
  const withClientErrors =
    (handle: (ctx: Context) => Promise<void>) =>
    async (ctx: Context): Promise<void> => {
      try {
        await handle(ctx);
      } catch (err) {
        if (!(err instanceof ProtocolError && rfc6749 && err.error === 'unauthorised_client')) throw err;
        sendError(ctx, new ProtocolError('invalid_client', err.description, 401), { 'WWW-Authenticate': 'Basic realm="client"' });
      }
    };

  const json = (ctx: Context, body: unknown) => {
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.body = body;
  };
  const { paths } = profile;
  const routes: Route[] = [
    { method: 'GET', path: paths.discovery, handle: (ctx) => json(ctx, discoveryDocument(profile, config.baseUrl, 'par')) },
    { method: 'GET', path: paths.jwks, handle: (ctx) => json(ctx, d.publicKeys()) },
    { method: 'POST', path: paths.par, handle: withClientErrors(par) },
    { method: 'OPTIONS', path: paths.par, handle: (ctx) => toProvider(ctx, notFound) }, // CORS preflight: the provider refuses it
    { method: 'GET', path: paths.authorize, handle: forBrowsers((ctx) => authorize(ctx, 'authorize')) },
    { method: 'POST', path: paths.token, handle: withClientErrors(token) },
    { method: 'OPTIONS', path: paths.token, handle: (ctx) => toProvider(ctx, notFound) },
    // the provider's resume step after the holder's prompt: /.../authorize/<uid>
    { method: 'GET', path: new RegExp(`^${paths.authorize.replaceAll('.', '\\.')}/[^/]+$`), handle: providerAuthorizes },
  ];
  if (paths.rootDiscovery && paths.rootJwks && paths.authorizeNonPar) {
    routes.push(
      { method: 'GET', path: paths.rootDiscovery, handle: (ctx) => json(ctx, discoveryDocument(profile, config.baseUrl, 'root')) },
      { method: 'GET', path: paths.rootJwks, handle: (ctx) => json(ctx, d.publicKeys()) },
      { method: 'GET', path: paths.authorizeNonPar, handle: forBrowsers((ctx) => authorize(ctx, 'authorizeNonPar')) },
    );
  }
  return router(routes);
}
