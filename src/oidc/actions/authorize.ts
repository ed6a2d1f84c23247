import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import type { ClientConfig } from '../../config/schema.js';
import type { Store } from '../../store/types.js';
import { ProtocolError, invalidRequest } from '../../rules/errors.js';
import { checkRedirectUri } from '../../rules/authorizationParams.js';
import { readQuery } from '../../http/form.js';
import { noStore, redirectError } from '../../http/respond.js';
import { sendErrorPage, wantsPage } from '../../http/errorPage.js';
import { linkToFlow, startFlow } from '../../telemetry/spans.js';
import type { ExternalFlows } from '../../external/flows.js';
import { checkContinuationParams, mintContinuationCode } from '../../external/continue.js';
import type { GrantClaims } from '../../flow/flowClaims.js';
import type { OtherProvider } from '../../identity/otherProvider.js';
import { checkAuthorizationRequest, registerHint, stripInternal, type RequestSite } from '../requestChecks.js';
import { pushedRequestKey } from '../pushedRequest.js';
import { parLifetime } from '../provider.js';
import {
  mapJsonError,
  mapRedirectedError,
  notFound,
  requestContext,
  type CheckDeps,
  type ToProvider,
} from './shared.js';

export interface AuthorizeDeps extends CheckDeps {
  provider: Provider;
  toProvider: ToProvider;
  store: Store;
  clients: ReadonlyMap<string, ClientConfig>;
  /** D13: External Client flows, continued here with context_id */
  external: ExternalFlows;
  grantClaims: GrantClaims;
  /** D12: a VerifiedIdentity_Other journey continues here with context_id */
  otherProvider?: OtherProvider;
}

/** Authorise is a browser's endpoint: an error answered directly is a page for a browser, JSON for an API client. */
export const forBrowsers =
  (handle: (ctx: Context) => Promise<void>) =>
  async (ctx: Context): Promise<void> => {
    try {
      await handle(ctx);
    } catch (err) {
      if (err instanceof ProtocolError && wantsPage(ctx)) return sendErrorPage(ctx, err.status, err.error, err.message);
      throw err;
    }
  };

/** The provider answers an authorisation step (also its resume step after the prompt); its errors are mapped onto the spec's. */
export function providerAuthorizes(toProvider: ToProvider, rfc6749: boolean): (ctx: Context) => Promise<void> {
  return async (ctx) => {
    await toProvider(ctx, notFound);
    // the request (or interaction) the provider loaded names its flow's root
    linkToFlow((ctx as { oidc?: { params?: { vc_trace?: unknown } } }).oidc?.params?.vc_trace);
    if (ctx.status >= 400) {
      mapJsonError(ctx, 'authorize', rfc6749);
      const body = ctx.body as { error?: string; error_description?: string } | undefined;
      if (body?.error && wantsPage(ctx)) sendErrorPage(ctx, ctx.status, body.error, body.error_description);
    } else mapRedirectedError(ctx, rfc6749);
  };
}

/**
 * D16: a request_uri starts one authorisation. oidc-provider marks it used only when it issues the
 * code, so its first use is claimed here, atomically and per client (a request naming another client
 * does not burn the owner's request_uri). The claim is written only while the pushed request exists,
 * and expires with it or with the request_uri (the provider refuses an expired one), whichever is first:
 * an unknown request_uri writes nothing, and the provider answers it as such.
 */
async function claimPushedRequest(d: AuthorizeDeps, clientId: string, requestUri: string): Promise<void> {
  const pushed = pushedRequestKey(d.profile.id, requestUri);
  if (!pushed) return;
  // the claim guards the request_uri until it expires: the record itself may be kept longer (the hint's data)
  const claimed = await d.store.markOnce(`${pushed}:claimed:${clientId}`, 1, pushed, {
    ttlSeconds: parLifetime(d.config),
  });
  if (!claimed && (await d.store.get(pushed)) !== undefined)
    throw invalidRequest('request_uri has already been used: push a new request');
}

/**
 * D13: the client continues an External Client flow with the ContinuationContext its webhook carried,
 * and gets the redirect the holder's browser would have got. Errors are answered directly: the
 * redirect_uri is the original request's, known only once the context is.
 */
async function continueExternal(ctx: Context, d: AuthorizeDeps, params: Record<string, string>): Promise<void> {
  if (params.client_id === undefined) throw invalidRequest('client_id is required');
  if (!d.clients.has(params.client_id)) throw invalidRequest('client_id is not a registered client');
  const continuation = await d.external.take(params.context_id, params.client_id, d.profile.id, (c) =>
    checkContinuationParams(params, c.request),
  );
  const location = await mintContinuationCode(d.provider, d.grantClaims, continuation, d.config.lifetimes.interaction);
  noStore(ctx);
  ctx.redirect(location);
}

/** A request without request_uri: checked here, then handed to the provider's authorise endpoint. */
async function nonPushed(
  ctx: Context,
  d: AuthorizeDeps,
  params: Record<string, string>,
  site: RequestSite,
): Promise<boolean> {
  // Until client_id and redirect_uri are known good, errors are answered directly (spec: Authorise errors).
  if (params.client_id === undefined) throw invalidRequest('client_id is required');
  const client = d.clients.get(params.client_id);
  if (!client) throw invalidRequest('client_id is not a registered client');
  const redirectUri = checkRedirectUri(params.redirect_uri, client.redirectUris);
  try {
    const { providerParams, hintRegistration } = await checkAuthorizationRequest(
      params,
      requestContext(d, client, site),
    );
    await registerHint(d.store, hintRegistration);
    const flow = startFlow(); // a non-PAR request starts its flow here
    if (flow) providerParams.vc_trace = flow;
    ctx.querystring = new URLSearchParams(providerParams).toString();
    ctx.path = d.profile.paths.authorize; // /oidc/authorizev1 is the provider's authorise endpoint too
    return true;
  } catch (err) {
    // a state over its limit is not sent back either
    const state =
      params.state !== undefined && params.state.length <= d.config.maxParameterLength ? params.state : undefined;
    if (err instanceof ProtocolError) {
      redirectError(ctx, redirectUri, err, state, d.profile.issuer);
      return false;
    }
    throw err;
  }
}

/** The authorise endpoint at `site`: a continuation (context_id), a pushed request (request_uri), or a request checked here. */
export function authorizeEndpoint(d: AuthorizeDeps): (ctx: Context, site: RequestSite) => Promise<void> {
  const authorizes = providerAuthorizes(d.toProvider, d.config.rfc6749Errors);
  return async function authorize(ctx, site) {
    const params = stripInternal(readQuery(ctx));
    if (params.context_id !== undefined) {
      // spec authorise context_id: a second-provider journey (D12), else an External Client flow (D13)
      if (d.otherProvider && (await d.otherProvider.resumes(ctx, params, d.profile.id))) return;
      return continueExternal(ctx, d, params);
    }
    if (params.request_uri !== undefined) {
      if (site === 'authorizeNonPar')
        throw invalidRequest('request_uri: /oidc/authorizev1 takes non-PAR requests; use /oidc/authorize for PAR');
      if (params.client_id === undefined) throw invalidRequest('client_id is required');
      if (!d.clients.has(params.client_id)) throw invalidRequest('client_id is not a registered client');
      await claimPushedRequest(d, params.client_id, params.request_uri);
      ctx.querystring = new URLSearchParams({
        client_id: params.client_id,
        request_uri: params.request_uri,
      }).toString();
      return authorizes(ctx);
    }
    if (site === 'authorize' && !d.profile.nonParAtAuthorize) {
      throw invalidRequest(
        'request_uri is required: Version 1 authorise takes PAR requests (non-PAR verification uses /oidc/authorizev1)',
      );
    }
    if (await nonPushed(ctx, d, params, site)) return authorizes(ctx);
  };
}
