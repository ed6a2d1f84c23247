/**
 * POST /demo/start: the relying party starts a code flow from one of its forms. It signs an id_token_hint
 * for an issuance, pushes the request (PAR) or builds the authorise URL, keeps the flow's state, and sends
 * the browser to the prompt (or, for an External Client flow, to its own waiting page).
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { SignJWT } from 'jose';
import { pickText } from '../../i18n/catalogues.js';
import { EXTERNAL } from '../../rules/scopes.js';
import { ProtocolError } from '../../rules/errors.js';
import { readForm } from '../../http/form.js';
import type { ClientConfig } from '../../config/schema.js';
import { resultPage } from '../page.js';
import {
  EXTERNAL_SUFFIX,
  EXTERNAL_TTL,
  MODES,
  PENDING_TTL,
  endpointsOf,
  profileOf,
  stateKey,
  type DemoState,
  type Mode,
} from '../flow.js';
import { typesFor, type DemoDeps } from '../deps.js';
import { home, type HomeDeps } from './home.js';

/** What the endpoint uses, and the home page's dependencies: with no client it answers as the home page. */
export type StartDeps = HomeDeps & Pick<DemoDeps, 'store' | 'profiles'>;

/** Why the form asks for nothing this demo can start: the result page's title and details. */
type Refusal = { refused: string; details: unknown };

export async function start(ctx: Context, d: StartDeps): Promise<void> {
  const { config, client } = d;
  if (!client) return home(ctx, d);
  const result = (title: string, data: unknown) => resultPage(ctx, config.baseUrl, title, data);
  let form: Record<string, string>;
  try {
    form = await readForm(ctx, 64 * 1024);
  } catch (err) {
    // a body that is not the page's form (JSON, over 64 KB, repeated fields): the error, as a page
    if (!(err instanceof ProtocolError)) throw err;
    result('The form could not be read', err.toJSON());
    ctx.status = err.status;
    return;
  }
  const external = form.mode?.endsWith(EXTERNAL_SUFFIX) ?? false;
  const requested = external ? form.mode.slice(0, -EXTERNAL_SUFFIX.length) : form.mode;
  const served = (m: string) => d.config.versions.v1 || m.startsWith('v2');
  const mode = MODES.find((m) => m === requested && served(m)) ?? 'v2-par';
  if (external && (!d.webhookSecrets || !mode.startsWith('v2'))) {
    return result('The External Client flow is not available here', {
      needs: `Version 2, and a client with the scope ${EXTERNAL} whose webhook goes to ${d.webhookUrl}`,
    });
  }
  const state = randomBytes(16).toString('base64url');
  const nonce = randomBytes(16).toString('base64url');
  const verifier = mode === 'v1-par' ? undefined : randomBytes(32).toString('base64url');
  const params: Record<string, string> = {
    client_id: client.clientId,
    response_type: 'code',
    redirect_uri: d.callback,
    state,
    nonce,
  };
  if (verifier)
    Object.assign(params, {
      code_challenge: createHash('sha256').update(verifier).digest('base64url'),
      code_challenge_method: 'S256',
    });

  const asked = await scopeAndHint(d, client, form, mode, external);
  if ('refused' in asked) return result(asked.refused, asked.details);
  if (asked.hint) params.id_token_hint = asked.hint;
  params.scope = asked.scope;
  // D13: External marks the flow; the state (required) is what the webhook names it by
  if (external) params.scope += ` ${EXTERNAL}`;
  if (form.ui_locales && d.languages?.includes(form.ui_locales)) params.ui_locales = form.ui_locales;

  const prompt = await promptFor(d, client, mode, params);
  if ('refused' in prompt) return result(prompt.refused, prompt.details);
  const saved: DemoState = { mode, verifier, nonce, clientId: client.clientId };
  if (!external) {
    await d.store.set(stateKey(state), saved, PENDING_TTL);
    ctx.redirect(prompt.promptUrl);
    return;
  }
  await d.store.set(
    stateKey(state),
    { ...saved, external: { promptUrl: prompt.promptUrl, requestUri: prompt.requestUri } } satisfies DemoState,
    EXTERNAL_TTL,
  );
  ctx.redirect(`${config.baseUrl}/demo/external?${new URLSearchParams({ state })}`);
}

/** What the form asks for: the request's scope and, for an issuance, its id_token_hint. */
async function scopeAndHint(
  d: StartDeps,
  client: ClientConfig,
  form: Record<string, string>,
  mode: Mode,
  external: boolean,
): Promise<{ scope: string; hint?: string } | Refusal> {
  if (form.kind === 'verify') {
    const types = d.config.credentialTypes.filter((t) => client.scopes.includes(t.name) && form[`type.${t.name}`]);
    if (!types.length) return { refused: 'Choose at least one credential type', details: {} };
    return { scope: ['openid', ...types.map((t) => t.name)].join(' ') };
  }
  if (form.kind === 'identity') {
    const flow = d.identityFlows.find((f) => f.scope === form.flow);
    if (!flow)
      return {
        refused: 'Choose an identity flow this demo offers',
        details: { offered: d.identityFlows.map((f) => f.scope) },
      };
    // the service refuses it too (invalid_scope); said here before a request is made that cannot succeed
    if (external && flow.scope === 'VerifiedIdentity_Other') {
      return {
        refused: 'VerifiedIdentity_Other does not combine with External',
        details: { why: "its journey ends in the holder's browser; choose an interface without External" },
      };
    }
    // D12: a flow of its own, `openid` and its one scope; no hint
    return { scope: `openid ${flow.scope}` };
  }
  const type = typesFor(d.config, client).find((t) => t.name === form.type);
  if (!type || mode === 'v1') return { refused: 'Unknown credential type or interface', details: {} };
  const claims: Record<string, unknown> = {};
  for (const [name, a] of Object.entries(type.attributes)) {
    const v = form[`attr.${name}`];
    if (v === undefined || v === '') continue;
    if (a.type === 'boolean' && v !== 'true' && v !== 'false')
      return { refused: 'Invalid value', details: { why: `${pickText(a.label, 'en') ?? name}: choose yes or no` } };
    claims[name] = a.type === 'number' ? Number(v) : a.type === 'boolean' ? v === 'true' : v;
  }
  if (form.pin) claims.PinCode = form.pin;
  const now = Math.floor(Date.now() / 1000);
  const hint = await new SignJWT(claims)
    .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
    .setIssuer(client.clientId)
    .setAudience(profileOf(d.profiles, mode).issuer)
    .setIssuedAt(now)
    .setExpirationTime(now + 300)
    .setJti(randomBytes(12).toString('base64url'))
    .sign(new TextEncoder().encode(client.clientSecret));
  return { hint, scope: mode === 'v1-par' ? `issue.${type.name}` : `openid issue.${type.name}` };
}

/** The holder's prompt: the authorise URL with the request, or with the request_uri of the pushed request (PAR). */
async function promptFor(
  d: StartDeps,
  client: ClientConfig,
  mode: Mode,
  params: Record<string, string>,
): Promise<{ promptUrl: string; requestUri?: string } | Refusal> {
  const doc = endpointsOf(d.profiles, d.config.baseUrl, mode);
  if (mode === 'v2' || mode === 'v1')
    return { promptUrl: `${doc.authorization_endpoint}?${new URLSearchParams(params)}` };
  const res = await fetch(doc.pushed_authorization_request_endpoint, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ ...params, client_secret: client.clientSecret }),
  });
  const body = (await res.json()) as { request_uri?: string; error?: string; error_description?: string };
  if (!body.request_uri) return { refused: 'The PAR request failed', details: body };
  const requestUri = body.request_uri;
  return {
    promptUrl: `${doc.authorization_endpoint}?${new URLSearchParams({ client_id: client.clientId, request_uri: requestUri })}`,
    requestUri,
  };
}
