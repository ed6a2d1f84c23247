/**
 * POST /demo/webhook, the relying party's webhook receiver (mounted only when the client's webhook comes
 * here). A delivery that does not verify is refused with 400 and changes nothing. A verified one is
 * answered 204 once handled; its outcome is claimed once per state, so a redelivery (Standard Webhooks
 * delivers at least once) is answered 204 and otherwise ignored.
 */
import type { Context } from 'koa';
import type { ClientConfig } from '../../config/schema.js';
import { readBody } from '../../http/form.js';
import { verifyWebhook, WEBHOOK_BODY_LIMIT, type FlowEvent } from '../webhook.js';
import { EXTERNAL_TTL, STATE, endpointsOf, outcomeKey, stateKey, type DemoState, type Outcome } from '../flow.js';
import { redeem, type RedeemDeps } from '../redeem.js';
import type { DemoDeps } from '../deps.js';

/** What the endpoint uses. */
export type WebhookDeps = Pick<DemoDeps, 'store'> & RedeemDeps & { webhookSecrets: readonly string[] };

export async function webhook(ctx: Context, d: WebhookDeps): Promise<void> {
  // raw: the signature covers the exact bytes (an oversized body is invalid_request, as everywhere)
  const raw = (await readBody(ctx, WEBHOOK_BODY_LIMIT)).toString('utf8');
  const headers = {
    'webhook-id': ctx.get('webhook-id'),
    'webhook-timestamp': ctx.get('webhook-timestamp'),
    'webhook-signature': ctx.get('webhook-signature'),
  };
  const event = verifyWebhook(raw, headers, d.webhookSecrets);
  if (!event) {
    ctx.status = 400;
    ctx.body = {
      error: 'invalid_request',
      error_description: "the webhook does not verify with the client's secret (Standard Webhooks)",
    };
    return;
  }
  ctx.status = 204;
  const { state } = event.data;
  if (typeof state !== 'string' || !STATE.test(state) || event.data.client_id !== d.client.clientId) return; // not a flow this demo started
  if (!['flow.completed', 'flow.failed', 'flow.expired'].includes(event.type)) return; // an event type this demo does not know
  const saved = await d.store.get<DemoState>(stateKey(state));
  if (!saved?.external) return; // not an External flow of this demo's, or one it has forgotten
  if (!(await d.store.setIfAbsent(outcomeKey(state), { status: 'continuing' } satisfies Outcome, EXTERNAL_TTL))) return; // a redelivery
  const received = `Webhook ${event.type} received at /demo/webhook, signature verified (webhook-id ${headers['webhook-id']}).`;
  let outcome: Outcome;
  try {
    outcome =
      event.type === 'flow.completed'
        ? await continueFlow(d, state, saved, event, received)
        : {
            status: 'failed',
            title: event.type === 'flow.expired' ? 'The flow expired' : 'The flow failed',
            details: { type: event.type, error: event.data.error, error_description: event.data.error_description },
            log: [received],
          };
  } catch (err) {
    outcome = {
      status: 'failed',
      title: 'The relying party could not continue the flow',
      details: { error: (err as Error).message },
      log: [received],
    };
  }
  await d.store.set(outcomeKey(state), outcome, EXTERNAL_TTL);
}

/** flow.completed: authorise with context_id (and the request_uri of a pushed request) gives the code, redeemed as after a redirect. */
async function continueFlow(
  d: RedeemDeps & { client: ClientConfig },
  state: string,
  saved: DemoState,
  event: FlowEvent,
  received: string,
): Promise<Outcome> {
  const { client, callback } = d;
  const log = [received];
  const contextId = event.data.ContinuationContext;
  if (typeof contextId !== 'string')
    return { status: 'failed', title: 'The webhook carries no ContinuationContext', details: event.data, log };
  const endpoints = endpointsOf(d.profiles, d.config.baseUrl, saved.mode);
  const authorize = endpoints.authorization_endpoint;
  const query = new URLSearchParams({
    client_id: client.clientId,
    context_id: contextId,
    ...(saved.external?.requestUri ? { request_uri: saved.external.requestUri } : {}),
  });
  // server to server: no cookies, and the redirect is read, not followed
  const res = await fetch(`${authorize}?${query}`, { redirect: 'manual' });
  const location = res.headers.get('location');
  // the log names the parameters, never the context's value: a bearer value until it is used
  const asked = `GET ${authorize}?client_id=${client.clientId}&context_id=…${saved.external?.requestUri ? '&request_uri=…' : ''}`;
  if (res.status !== 302 || !location) {
    return {
      status: 'failed',
      title: 'Continuing with context_id failed',
      details: { status: res.status, ...((await res.json().catch(() => ({}))) as object) },
      log: [...log, `${asked}: ${res.status}.`],
    };
  }
  const back = new URL(location);
  if (`${back.origin}${back.pathname}` !== callback || back.searchParams.get('state') !== state) {
    return {
      status: 'failed',
      title: 'Continuing with context_id led elsewhere',
      details: { location },
      log: [...log, `${asked}: 302 to an unexpected place.`],
    };
  }
  const code = back.searchParams.get('code');
  if (!code)
    return {
      status: 'failed',
      title: 'The service answered with an error',
      details: Object.fromEntries(back.searchParams),
      log: [...log, `${asked}: 302 with an error.`],
    };
  log.push(`${asked}: 302 to ${callback} with a code and the flow's state.`);
  const redeemed = await redeem(d, saved, code);
  if ('title' in redeemed) return { status: 'failed', ...redeemed, log };
  log.push(
    `POST ${endpoints.token_endpoint} with the code${saved.verifier ? ' and the PKCE verifier' : ''}: an ID token, its signature, issuer, audience and nonce verified.`,
  );
  return { status: 'completed', claims: redeemed.claims, log };
}
