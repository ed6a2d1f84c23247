import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import type { ClientConfig } from '../../config/schema.js';
import type { RateLimits } from '../../http/rateLimits.js';
import { noStore } from '../../http/respond.js';
import { linkToFlow } from '../../telemetry/spans.js';
import { shapeTokenResponse } from '../tokenResponse.js';
import type { VersionProfile } from '../versions.js';
import type { RevokedGrants } from '../revokedGrants.js';
import { authenticated, mapJsonError, notFound, type ToProvider } from './shared.js';

export interface TokenDeps {
  profile: VersionProfile;
  provider: Provider;
  toProvider: ToProvider;
  revokedGrants: RevokedGrants;
  clients: ReadonlyMap<string, ClientConfig>;
  rateLimits?: RateLimits;
  /** config.rfc6749Errors (D4) */
  rfc6749: boolean;
}

/**
 * What oidc-provider says of a code that already bought its token: consumed while its grant is still there
 * (a concurrent redemption), or found with its grant gone (`findAccount` removes it once the token is made).
 */
const REPLAYED = new Set<unknown>(['authorization code already consumed', 'grant not found']);

/**
 * D16, RFC 6749 §4.1.2: a replayed code revokes the token it bought. The provider revokes what it keeps of
 * the grant; the token itself (the ID token, D3) is kept nowhere, so its revocation is recorded by the
 * grant the code names (the code's record, read through the provider's model, outlives its use until it
 * expires; an expired code names nothing any more).
 */
async function revokeReplayed(d: TokenDeps, code: string): Promise<void> {
  const found = (await d.provider.AuthorizationCode.find(code, { ignoreExpiration: true })) as
    { grantId?: string } | undefined;
  if (found?.grantId) await d.revokedGrants.revoke(found.grantId);
}

/** Token requests carry no hint. */
const TOKEN_FORM_LIMIT = 64 * 1024;

/** The provider redeems the code; its answer is shaped into the spec's token response (D3) or error codes. */
export function tokenEndpoint(d: TokenDeps): (ctx: Context) => Promise<void> {
  return async function token(ctx) {
    const { client, params } = await authenticated(ctx, d, 'token', TOKEN_FORM_LIMIT);
    await d.toProvider(ctx, notFound);
    if (REPLAYED.has(ctx.state.oidcErrorDetail) && params.code !== undefined) await revokeReplayed(d, params.code);
    linkToFlow(ctx.state.flow?.trace); // the code's flow, as its claims record keeps it
    noStore(ctx);
    if (ctx.status === 200)
      shapeTokenResponse(ctx.body as Record<string, unknown>, {
        client,
        profile: d.profile,
        extras: ctx.state.flow?.tokenExtras,
      });
    else mapJsonError(ctx, 'token', d.rfc6749);
  };
}
