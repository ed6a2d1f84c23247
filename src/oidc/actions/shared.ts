import type { Context, Middleware, Next } from 'koa';
import type { ClientConfig, Config, CredentialType } from '../../config/schema.js';
import type { OutboundFetch } from '../../http/outboundFetch.js';
import type { RateLimits } from '../../http/rateLimits.js';
import { readForm, setForm } from '../../http/form.js';
import { sendError } from '../../http/respond.js';
import { safeErrorDescription } from '../../http/errorDescription.js';
import { ProtocolError } from '../../rules/errors.js';
import { authenticateClient, clientCredentialsForm } from '../../rules/clientAuth.js';
import type { PinHasher } from '../../rules/pinHash.js';
import { mapProviderError, toProtocolError, type ErrorSite } from '../errorMapping.js';
import type { RequestContext, RequestSite } from '../requestChecks.js';
import type { VersionProfile } from '../versions.js';
import type { Registrations } from '../../verification/registration.js';

/** The version's oidc-provider instance, mounted at its path (`profile.providerMount`). */
export type ToProvider = Middleware;

/** What comes after the provider: nothing (the edge answers with whatever the provider answered). */
export const notFound: Next = async () => {};

/** What the request checks (src/oidc/requestChecks.ts) need of the version and the service. */
export interface CheckDeps {
  profile: VersionProfile;
  config: Config;
  credentialTypes: ReadonlyMap<string, CredentialType>;
  pinHasher: PinHasher;
  /** the rules a client's hint jwks_uri is fetched under (src/http/outboundFetch.ts) */
  outbound: OutboundFetch;
  /** ETSI TS 119 475: the clients' registration certificates */
  registrations?: Registrations;
}

export const requestContext = (d: CheckDeps, client: ClientConfig, site: RequestSite): RequestContext => ({
  client,
  profile: d.profile,
  config: d.config,
  credentialTypes: d.credentialTypes,
  site,
  pinHasher: d.pinHasher,
  outbound: d.outbound,
  ...(d.registrations ? { registrations: d.registrations } : {}),
});

/** Maps a JSON error the provider answered with onto the spec's codes. */
export function mapJsonError(ctx: Context, site: ErrorSite, rfc6749: boolean): void {
  const body = ctx.body as { error?: string; error_description?: string } | undefined;
  if (ctx.status < 400 || !body?.error) return;
  const mapped = mapProviderError(site, body.error, body.error_description, ctx.state.oidcErrorDetail, rfc6749);
  const err = toProtocolError(mapped, ctx.status === 401 && mapped.error !== 'invalid_client' ? 400 : ctx.status);
  if (!(rfc6749 && mapped.error === 'invalid_client')) ctx.remove('WWW-Authenticate');
  sendError(ctx, err);
}

/** Maps a redirected error (Location with `error`) onto the spec's codes. */
export function mapRedirectedError(ctx: Context, rfc6749: boolean): void {
  const location = ctx.response.get('Location');
  if (!location || !location.includes('error=')) return;
  const url = new URL(location);
  const error = url.searchParams.get('error');
  if (!error) return;
  const mapped = mapProviderError(
    'authorize',
    error,
    url.searchParams.get('error_description') ?? undefined,
    ctx.state.oidcErrorDetail,
    rfc6749,
  );
  url.searchParams.set('error', mapped.error);
  // every error oidc-provider redirects with passes here, an interaction's access_denied among them
  url.searchParams.set('error_description', safeErrorDescription(mapped.description));
  ctx.redirect(url.href);
}

/**
 * The form of a PAR or token request and its authenticated client (client_secret_post or client_secret_basic,
 * RFC 6749 §2.3.1), within the rate limits: every request
 * consumes its address's budget, and the client's budget only once the client authenticated (both in one
 * round trip), so nobody can use up a client's budget with its client_id alone. A request refused before
 * that (its form, its authentication) consumes the address's budget only; over it, the 429 is the answer.
 */
export async function authenticated(
  ctx: Context,
  d: { clients: ReadonlyMap<string, ClientConfig>; rateLimits?: RateLimits },
  endpoint: 'par' | 'token',
  formLimit: number,
): Promise<{ params: Record<string, string>; client: ClientConfig }> {
  let params: Record<string, string>;
  let client: ClientConfig;
  try {
    params = clientCredentialsForm(await readForm(ctx, formLimit), ctx.req.headers.authorization);
    client = authenticateClient(params, d.clients);
  } catch (err) {
    await d.rateLimits?.consume(endpoint, { address: ctx.ip });
    throw err;
  }
  await d.rateLimits?.consume(endpoint, { client: client.clientId, address: ctx.ip });
  // client_secret_basic, checked: from here on the request is client_secret_post, the one method
  // oidc-provider knows for our clients (src/oidc/provider.ts)
  if (ctx.req.headers.authorization !== undefined) {
    delete ctx.req.headers.authorization;
    setForm(ctx, params);
  }
  return { params, client };
}

/** D4: failed client authentication is `unauthorised_client` (400), or RFC 6749's 401 `invalid_client` when configured. */
export const withClientErrors =
  (rfc6749: boolean, handle: (ctx: Context) => Promise<void>) =>
  async (ctx: Context): Promise<void> => {
    try {
      await handle(ctx);
    } catch (err) {
      if (!(err instanceof ProtocolError && rfc6749 && err.error === 'unauthorised_client')) throw err;
      sendError(ctx, new ProtocolError('invalid_client', err.description, 401), {
        'WWW-Authenticate': 'Basic realm="client"',
      });
    }
  };
