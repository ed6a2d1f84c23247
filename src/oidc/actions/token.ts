import type { Context } from 'koa';
import type { ClientConfig } from '../../config/schema.js';
import type { RateLimits } from '../../http/rateLimits.js';
import { noStore } from '../../http/respond.js';
import { linkToFlow } from '../../telemetry/spans.js';
import { shapeTokenResponse } from '../tokenResponse.js';
import type { VersionProfile } from '../versions.js';
import { authenticated, mapJsonError, notFound, type ToProvider } from './shared.js';

export interface TokenDeps {
  profile: VersionProfile;
  toProvider: ToProvider;
  clients: ReadonlyMap<string, ClientConfig>;
  rateLimits?: RateLimits;
  /** config.rfc6749Errors (D4) */
  rfc6749: boolean;
}

/** Token requests carry no hint. */
const TOKEN_FORM_LIMIT = 64 * 1024;

/** The provider redeems the code; its answer is shaped into the spec's token response (D3) or error codes. */
export function tokenEndpoint(d: TokenDeps): (ctx: Context) => Promise<void> {
  return async function token(ctx) {
    const { client } = await authenticated(ctx, d, 'token', TOKEN_FORM_LIMIT);
    await d.toProvider(ctx, notFound);
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
