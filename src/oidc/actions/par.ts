import type { Context } from 'koa';
import type Provider from 'oidc-provider';
import type { ClientConfig, Config } from '../../config/schema.js';
import type { Store } from '../../store/types.js';
import type { RateLimits } from '../../http/rateLimits.js';
import { setForm } from '../../http/form.js';
import { noStore } from '../../http/respond.js';
import { startFlow } from '../../telemetry/spans.js';
import { checkAuthorizationRequest, claimHint, registerHint, stripInternal } from '../requestChecks.js';
import { edgeCanStore, storePushedRequest } from '../pushedRequest.js';
import { parLifetime } from '../provider.js';
import { authenticated, mapJsonError, notFound, requestContext, type CheckDeps, type ToProvider } from './shared.js';

export interface ParDeps extends CheckDeps {
  provider: Provider;
  toProvider: ToProvider;
  store: Store;
  clients: ReadonlyMap<string, ClientConfig>;
  rateLimits?: RateLimits;
}

/** Room for an id_token_hint of the configured size (images make hints large) plus the other fields. */
const formLimit = (config: Config) => config.hint.maxLength + 64 * 1024;

/**
 * RFC 9126: the edge checks the request; one of the spec's fields only is then stored by the edge
 * (src/oidc/pushedRequest.ts), anything else goes to oidc-provider's PAR endpoint, which handles or
 * refuses what the edge does not know.
 */
export function parEndpoint(d: ParDeps): (ctx: Context) => Promise<void> {
  const { profile, config } = d;
  return async function par(ctx) {
    const authed = await authenticated(ctx, d, 'par', formLimit(config));
    const params = stripInternal(authed.params);
    const client = authed.client;
    const { providerParams, hintRegistration } = await checkAuthorizationRequest(
      params,
      requestContext(d, client, 'par'),
    );
    // this request is its flow's root; the flow's later requests link to it
    const flow = startFlow();
    if (flow) providerParams.vc_trace = flow;
    if (edgeCanStore(providerParams, ctx.headers)) {
      // the hint's replay marker first: a replayed hint's data is never written; the pushed request
      // then carries the data (two writes, where a record of its own would make three)
      if (hintRegistration) await claimHint(d.store, hintRegistration);
      const carried = hintRegistration && { data: hintRegistration.data, keepFor: hintRegistration.dataTtl };
      ctx.status = 201;
      ctx.body = await storePushedRequest(
        d.store,
        d.provider,
        profile.id,
        client.clientId,
        providerParams,
        parLifetime(config),
        carried,
      );
      noStore(ctx);
      return;
    }
    await registerHint(d.store, hintRegistration);
    setForm(ctx, providerParams);
    await d.toProvider(ctx, notFound);
    if (ctx.status === 201) {
      (ctx.body as { expires_in: number }).expires_in = parLifetime(config);
      noStore(ctx);
    } else {
      mapJsonError(ctx, 'par', config.rfc6749Errors);
    }
  };
}
