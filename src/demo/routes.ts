import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { pickText } from '../i18n/catalogues.js';
import type { Context, Middleware } from 'koa';
import { SignJWT, createLocalJWKSet, jwtVerify, type JWK, type JWTPayload, type JWTVerifyGetKey } from 'jose';
import { EXTERNAL, type IdentityScope } from '../rules/scopes.js';
import { webhookTargets } from '../webhooks/queue.js';
import type { Config, ClientConfig, CredentialType } from '../config/schema.js';
import type { Store } from '../store/types.js';
import { readAsset } from '../interaction/views/assets.js';
import { html, type SafeHtml } from '../interaction/views/html.js';
import { renderLayout } from '../interaction/views/layout.js';
import { readBody, readForm } from '../http/form.js';
import { isSameOriginPost } from '../http/sameOrigin.js';
import { ProtocolError } from '../rules/errors.js';
import { discoveryDocument } from '../oidc/discovery.js';
import { versionProfiles } from '../oidc/versions.js';
import { verifyWebhook, WEBHOOK_BODY_LIMIT, type FlowEvent } from './webhook.js';
import { ACTIONS, type Action, type ActionOutcome } from '../admin/credentials.js';

/**
 * A relying party built in, for trying the service in a browser (config `demo: true`, never in
 * production): it signs an id_token_hint with the demo client's secret, pushes the request, sends the
 * browser to authorise, and on the way back redeems the code and shows the verified ID token. It speaks
 * only HTTP to the service, like any relying party.
 *
 * With an External interface (D13) the browser does not come back: the demo's own webhook receiver
 * (POST /demo/webhook) verifies the signed event, continues at authorise with context_id, redeems the
 * code, and keeps the result in the store, where the demo's waiting page (/demo/external) finds it.
 */
type Mode = 'v2-par' | 'v2' | 'v1-par' | 'v1';
const MODES = ['v2-par', 'v2', 'v1-par', 'v1'] as const;
/** the form's mode values for an External Client flow: `v2-par-external`, `v2-external` */
const EXTERNAL_SUFFIX = '-external';

interface DemoState {
  mode: Mode;
  verifier?: string;
  nonce: string;
  clientId: string;
  /** an External Client flow: the holder's prompt, and the request_uri its continuation names (PAR) */
  external?: { promptUrl: string; requestUri?: string };
}

/** What the demo's webhook receiver made of an External Client flow, for the waiting page. */
type Outcome =
  | { status: 'continuing' }
  | { status: 'completed'; claims: JWTPayload; log: string[] }
  | { status: 'failed'; title: string; details: unknown; log: string[] };

type Redeemed = { claims: JWTPayload } | { title: string; details: unknown };

const SAMPLE: Record<string, unknown> = {
  FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com', Company: 'Analytical Engines Ltd',
  StartDate: '2024-01-15', MemberName: 'Ada Lovelace', MemberNumber: 1815, Premium: true,
};

/** the demo's `state`: 128 random bits, base64url */
const STATE = /^[A-Za-z0-9_-]{22}$/;
/** A browser-returning flow's record lives as long as before. */
const PENDING_TTL = 600;
/**
 * An External flow's records outlive any end it can have: the prompt may open while the 5-minute hint
 * lasts, the wallet step then lasts an offer's lifetime, a redeemed offer may still end up to 5 minutes
 * later (D13), and the webhook may come on a retry.
 */
const EXTERNAL_TTL = 3600;
/** seconds between the waiting page's reloads (it has no script: the page's CSP allows none) */
const REFRESH_SECONDS = 2;

const stateKey = (state: string) => `demo:${state}`;
const outcomeKey = (state: string) => `demo:${state}:outcome`;

const CSP = (nonce: string) => `default-src 'none'; style-src 'nonce-${nonce}'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

/** A demo page: the layout, the demo's stylesheet and its CSP (no script; styles by nonce). */
export function page(ctx: Context, title: string, body: SafeHtml): void {
  const nonce = randomBytes(16).toString('base64');
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', CSP(nonce));
  ctx.set('Cache-Control', 'no-store');
  ctx.body = renderLayout({ nonce, title, body: html`<main class="page-main">${body}</main>`, css: DEMO_CSS });
}

const DEMO_CSS = readAsset('demo.css');

export interface DemoRoutesOptions {
  /** the demo PID issuer's identifier (src/demo/pid.ts), when it is mounted: the Verify identity card links to its page */
  pidIssuer?: string;
  /** D18: the operator's status change, offered on an issuance's result (what `npm run admin` and the admin API do) */
  changeStatus?: (serialNumber: string, action: Action) => Promise<ActionOutcome>;
  /** a secret for the status forms' MACs: only a result page this demo rendered can change a status */
  formKey?: string;
  /** the languages the holder pages speak; the forms can ask for one with ui_locales */
  languages?: readonly string[];
}

/** `idTokenJwks`: the ID-token keys published now (they change with a rotation, D20), as the JWKS endpoint serves them */
export function createDemoRoutes(config: Config, store: Store, idTokenJwks: () => { keys: JWK[] }, opts: DemoRoutesOptions = {}): Middleware {
  const callback = `${config.baseUrl}/demo/callback`;
  const webhookUrl = `${config.baseUrl}/demo/webhook`;
  const client: ClientConfig | undefined = config.clients.find((c) => c.redirectUris.includes(callback) && c.scopes.some((s) => s.startsWith('issue.')));
  // External is offered only when the client's events come to this demo's receiver: otherwise they never arrive here
  const webhookSecrets = client?.scopes.includes(EXTERNAL) && client.webhook?.url === webhookUrl ? webhookTargets(config.clients).get(client.clientId)?.secrets : undefined;
  const profiles = versionProfiles(config.baseUrl);
  let made: { set: { keys: JWK[] }; jwks: ReturnType<typeof createLocalJWKSet> } | undefined;
  const jwks: JWTVerifyGetKey = (header, token) => {
    const set = idTokenJwks();
    if (made?.set !== set) made = { set, jwks: createLocalJWKSet({ keys: set.keys.map(({ d, p, q, dp, dq, qi, ...pub }) => pub) }) };
    return made.jwks(header, token);
  };
  const endpoints = (mode: Mode) => discoveryDocument(mode.startsWith('v1') ? profiles.v1 : profiles.v2, config.baseUrl, mode === 'v1' ? 'root' : 'par') as Record<string, string>;

  function typesFor(c: ClientConfig): CredentialType[] {
    return config.credentialTypes.filter((t) => c.scopes.includes(`issue.${t.name}`));
  }

  // D12: the identity flows the demo offers: those the client lists and the config has a block for
  const pidBlock = config.identity.VerifiedIdentity;
  const otherBlock = config.identity.VerifiedIdentity_Other;
  const identityFlows: Array<{ scope: IdentityScope; label: string }> = [
    ...(pidBlock && client?.scopes.includes('VerifiedIdentity') ? [{ scope: 'VerifiedIdentity' as const, label: 'VerifiedIdentity (PID from your wallet)' }] : []),
    ...(otherBlock && client?.scopes.includes('VerifiedIdentity_Other') ? [{ scope: 'VerifiedIdentity_Other' as const, label: `VerifiedIdentity_Other (${pickText(otherBlock.displayName, 'en')})` }] : []),
  ];

  function index(ctx: Context): void {
    if (!client) {
      page(ctx, 'Demo', html`<section class="card demo"><h1>Demo</h1><p>No client in the config has the redirect URI ${callback} and an issuance scope.</p></section>`);
      return;
    }
    const external = webhookSecrets && html`<option value="v2-par${EXTERNAL_SUFFIX}">Version 2, PAR, External</option><option value="v2${EXTERNAL_SUFFIX}">Version 2, without PAR, External</option>`;
    const modes = html`<option value="v2-par">Version 2, PAR</option><option value="v2">Version 2, without PAR</option><option value="v1-par">Version 1, PAR</option>`;
    const language = languageField();
    const forms = typesFor(client).map((t) => {
      const fields = Object.entries(t.attributes)
        .filter(([, a]) => a.type !== 'image')
        .map(([name, a]) =>
          a.type === 'boolean'
            ? // a choice, never free text that could silently turn into false
              html`<label>${pickText(a.label, 'en') ?? name}<select name="attr.${name}"${a.required && html` required`}>${!a.required && html`<option value="">(leave out)</option>`}<option value="true"${SAMPLE[name] === true && html` selected`}>Yes</option><option value="false"${SAMPLE[name] === false && html` selected`}>No</option></select></label>`
            : html`<label>${pickText(a.label, 'en') ?? name}<input name="attr.${name}" value="${SAMPLE[name] ?? ''}"${a.required && html` required`}></label>`,
        );
      const pin = t.pinCodeLength
        ? html`<label>PIN for the wallet (${t.pinCodeLength} digits, optional)<input name="pin" inputmode="numeric" pattern="[0-9]{${t.pinCodeLength}}" value="${'1234567890'.slice(0, t.pinCodeLength)}"></label>`
        : '';
      return html`<section class="card demo"><h2>Issue: ${pickText(t.displayName, 'en') ?? t.name}</h2>
<form method="post" action="${`${config.baseUrl}/demo/start`}">
<input type="hidden" name="type" value="${t.name}">${fields}${pin}
<label>Interface<select name="mode">${modes}${external}</select></label>${language}
<button type="submit">Issue with ${client.clientName ?? client.clientId}</button></form></section>`;
    });
    const verifiable = config.credentialTypes.filter((t) => client.scopes.includes(t.name));
    const verify =
      verifiable.length > 0 &&
      html`<section class="card demo"><h2>Verify</h2>
<form method="post" action="${`${config.baseUrl}/demo/start`}">
<input type="hidden" name="kind" value="verify">
${verifiable.map((t, i) => html`<label><span><input type="checkbox" name="type.${t.name}" value="1"${i === 0 && html` checked`}> ${pickText(t.displayName, 'en') ?? t.name}</span></label>`)}
<label>Interface<select name="mode">${modes}<option value="v1">Version 1, without PAR (/oidc/authorizev1)</option>${external}</select></label>${language}
<button type="submit">Ask for credentials as ${client.clientName ?? client.clientId}</button></form></section>`;
    const identity = identityFlows.length > 0 && identityCard(client, modes, language);
    const externalHint = webhookSecrets
      ? html`<p class="hint">An <strong>External</strong> interface runs the External Client flow: the browser stays at the prompt, and this demo's server hears the outcome by webhook at <code>${webhookUrl}</code>, continues with <code>context_id</code> and redeems the code.</p>`
      : client.scopes.includes(EXTERNAL) &&
        html`<p class="hint">The External Client flow is not offered: the client's webhook goes to <code>${client.webhook?.url ?? '(none)'}</code>, not to this demo's receiver <code>${webhookUrl}</code>.</p>`;
    page(ctx, 'Try the VC OpenID Provider', html`<section class="card demo"><h1>Try it</h1>
<p class="hint">This page plays the relying party: it signs an id_token_hint for client <code>${client.clientId}</code> and starts the code flow. Receive the credential with your wallet, or with the dev wallet: <code>npm run wallet -- receive '&lt;offer link&gt;' --pin 1234</code>; present it with <code>npm run wallet -- present '&lt;request link&gt;' --trust keys/verifier-ca.pem</code>.</p>${externalHint}</section>${forms}${verify}${identity}`);
  }

  /** The holder pages' language, sent as ui_locales (OIDC Core §3.1.2.1); by default the browser's. */
  function languageField(): SafeHtml | '' {
    const languages = opts.languages ?? [];
    if (languages.length < 2) return '';
    const names = new Intl.DisplayNames(['en'], { type: 'language' });
    return html`
<label>Holder's language (ui_locales)<select name="ui_locales"><option value="">The browser's (Accept-Language)</option>${languages.map((l) => html`<option value="${l}">${names.of(l) ?? l}</option>`)}</select></label>`;
  }

  /** The Verify identity card: a flow, an interface, and where a demo PID comes from. */
  function identityCard(c: ClientConfig, modes: SafeHtml, language: SafeHtml | ''): SafeHtml {
    const offersPid = identityFlows.some((f) => f.scope === 'VerifiedIdentity');
    // D12: only VerifiedIdentity combines with External (VerifiedIdentity_Other's journey ends in the holder's browser)
    const external = webhookSecrets && offersPid && html`<option value="v2-par${EXTERNAL_SUFFIX}">Version 2, PAR, External (VerifiedIdentity only)</option><option value="v2${EXTERNAL_SUFFIX}">Version 2, without PAR, External (VerifiedIdentity only)</option>`;
    const pidTrusted = opts.pidIssuer !== undefined && pidBlock?.trustedIssuers.some((t) => t.issuer === opts.pidIssuer);
    const pidHint =
      offersPid &&
      (pidTrusted
        ? html`<p class="hint">VerifiedIdentity needs a PID in your wallet: <a href="${`${config.baseUrl}/demo/pid`}">get a demo PID first</a>, then present it with <code>npm run wallet -- present '&lt;request link&gt;' --trust keys/verifier-ca.pem</code>.</p>`
        : html`<p class="hint">VerifiedIdentity accepts PIDs from ${pidBlock!.trustedIssuers.map((t, i) => html`${i > 0 ? ', ' : ''}<code>${t.issuer}</code>`)} only${opts.pidIssuer ? html`, not from this demo's PID issuer <code>${opts.pidIssuer}</code>` : ''}.</p>`);
    return html`<section class="card demo"><h2>Verify identity</h2>
<form method="post" action="${`${config.baseUrl}/demo/start`}">
<input type="hidden" name="kind" value="identity">
<label>Flow<select name="flow">${identityFlows.map((f) => html`<option value="${f.scope}">${f.label}</option>`)}</select></label>
<label>Interface<select name="mode">${modes}<option value="v1">Version 1, without PAR (/oidc/authorizev1)</option>${external}</select></label>${language}
<button type="submit">Verify identity as ${c.clientName ?? c.clientId}</button></form>${pidHint}</section>`;
  }

  async function start(ctx: Context): Promise<void> {
    if (!client) return index(ctx);
    let form: Record<string, string>;
    try {
      form = await readForm(ctx, 64 * 1024);
    } catch (err) {
      // a body that is not the page's form (JSON, over 64 KB, repeated fields): the error, as a page
      if (!(err instanceof ProtocolError)) throw err;
      result(ctx, 'The form could not be read', err.toJSON());
      ctx.status = err.status;
      return;
    }
    const external = form.mode?.endsWith(EXTERNAL_SUFFIX) ?? false;
    const requested = external ? form.mode.slice(0, -EXTERNAL_SUFFIX.length) : form.mode;
    const mode = MODES.find((m) => m === requested) ?? 'v2-par';
    if (external && (!webhookSecrets || !mode.startsWith('v2'))) {
      return result(ctx, 'The External Client flow is not available here', { needs: `Version 2, and a client with the scope ${EXTERNAL} whose webhook goes to ${webhookUrl}` });
    }
    const profile = mode.startsWith('v1') ? profiles.v1 : profiles.v2;
    const doc = endpoints(mode);
    const state = randomBytes(16).toString('base64url');
    const nonce = randomBytes(16).toString('base64url');
    const verifier = mode === 'v1-par' ? undefined : randomBytes(32).toString('base64url');
    const params: Record<string, string> = { client_id: client.clientId, response_type: 'code', redirect_uri: callback, state, nonce };
    if (verifier) Object.assign(params, { code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256' });

    if (form.kind === 'verify') {
      const types = config.credentialTypes.filter((t) => client.scopes.includes(t.name) && form[`type.${t.name}`]);
      if (!types.length) return result(ctx, 'Choose at least one credential type', {});
      params.scope = ['openid', ...types.map((t) => t.name)].join(' ');
    } else if (form.kind === 'identity') {
      const flow = identityFlows.find((f) => f.scope === form.flow);
      if (!flow) return result(ctx, 'Choose an identity flow this demo offers', { offered: identityFlows.map((f) => f.scope) });
      // the service refuses it too (invalid_scope); said here before a request is made that cannot succeed
      if (external && flow.scope === 'VerifiedIdentity_Other') {
        return result(ctx, 'VerifiedIdentity_Other does not combine with External', { why: "its journey ends in the holder's browser; choose an interface without External" });
      }
      // D12: a flow of its own, `openid` and its one scope; no hint
      params.scope = `openid ${flow.scope}`;
    } else {
      const type = typesFor(client).find((t) => t.name === form.type);
      if (!type || mode === 'v1') return result(ctx, 'Unknown credential type or interface', {});
      const claims: Record<string, unknown> = {};
      for (const [name, a] of Object.entries(type.attributes)) {
        const v = form[`attr.${name}`];
        if (v === undefined || v === '') continue;
        if (a.type === 'boolean' && v !== 'true' && v !== 'false') return result(ctx, 'Invalid value', { why: `${pickText(a.label, 'en') ?? name}: choose yes or no` });
        claims[name] = a.type === 'number' ? Number(v) : a.type === 'boolean' ? v === 'true' : v;
      }
      if (form.pin) claims.PinCode = form.pin;
      const now = Math.floor(Date.now() / 1000);
      params.id_token_hint = await new SignJWT(claims)
        .setProtectedHeader({ alg: 'HS256', typ: 'JWT' })
        .setIssuer(client.clientId).setAudience(profile.issuer).setIssuedAt(now).setExpirationTime(now + 300)
        .setJti(randomBytes(12).toString('base64url'))
        .sign(new TextEncoder().encode(client.clientSecret));
      params.scope = mode === 'v1-par' ? `issue.${type.name}` : `openid issue.${type.name}`;
    }
    // D13: External marks the flow; the state (required) is what the webhook names it by
    if (external) params.scope += ` ${EXTERNAL}`;
    if (form.ui_locales && opts.languages?.includes(form.ui_locales)) params.ui_locales = form.ui_locales;

    let promptUrl: string;
    let requestUri: string | undefined;
    if (mode === 'v2' || mode === 'v1') {
      promptUrl = `${doc.authorization_endpoint}?${new URLSearchParams(params)}`;
    } else {
      const res = await fetch(doc.pushed_authorization_request_endpoint, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ ...params, client_secret: client.clientSecret }),
      });
      const body = (await res.json()) as { request_uri?: string; error?: string; error_description?: string };
      if (!body.request_uri) return result(ctx, 'The PAR request failed', body);
      requestUri = body.request_uri;
      promptUrl = `${doc.authorization_endpoint}?${new URLSearchParams({ client_id: client.clientId, request_uri: requestUri })}`;
    }
    const saved: DemoState = { mode, verifier, nonce, clientId: client.clientId };
    if (!external) {
      await store.set(stateKey(state), saved, PENDING_TTL);
      ctx.redirect(promptUrl);
      return;
    }
    await store.set(stateKey(state), { ...saved, external: { promptUrl, requestUri } } satisfies DemoState, EXTERNAL_TTL);
    ctx.redirect(`${config.baseUrl}/demo/external?${new URLSearchParams({ state })}`);
  }

  function result(ctx: Context, title: string, data: unknown, extra: SafeHtml = html``): void {
    page(ctx, title, html`<section class="card demo"><h1>${title}</h1><pre>${JSON.stringify(data, null, 2)}</pre>${extra}<p><a href="${`${config.baseUrl}/demo`}">Start again</a></p></section>`);
  }

  /**
   * The MAC a status form carries for its action and SerialNumber: a form's MAC for one action (reinstate)
   * does not authorise another (revoke). The action is one of ACTIONS, so `:` cannot move between them.
   */
  const formMac = (action: string, serialNumber: string) => createHmac('sha256', opts.formKey ?? '').update(`demo-status:${action}:${serialNumber}`).digest('base64url');

  /** After an issuance: what an operator can do to the credential (D18), as forms. */
  function statusForms(serialNumber: unknown): SafeHtml {
    if (!opts.changeStatus || !opts.formKey || typeof serialNumber !== 'string') return html``;
    const form = (action: Action, label: string) =>
      html`<form method="post" action="${`${config.baseUrl}/demo/credential-status`}"><input type="hidden" name="serialNumber" value="${serialNumber}"><input type="hidden" name="mac" value="${formMac(action, serialNumber)}"><input type="hidden" name="action" value="${action}"><button class="button" type="submit">${label}</button></form>`;
    return html`<h2>As the operator</h2><p class="hint">Revoke or suspend this credential by its SerialNumber, as <code>npm run admin</code> and the admin API do. A verification then refuses it ("credential revoked"), once verifiers' cached status list expires (<code>statusList.ttl</code>, ${String(config.statusList.ttl)} s).</p><div class="actions">${form('revoke', 'Revoke')}${form('suspend', 'Suspend')}${form('reinstate', 'Reinstate')}</div>`;
  }

  async function changeCredentialStatus(ctx: Context): Promise<void> {
    // a form posted from another site is refused before anything of it is read (a MAC a page elsewhere
    // learned must not work from there)
    if (!isSameOriginPost({ origin: ctx.get('Origin') || undefined, fetchSite: ctx.get('Sec-Fetch-Site') || undefined }, new URL(config.baseUrl).origin)) {
      ctx.status = 403;
      return result(ctx, 'This form was not sent from this demo', { error: 'the form comes from another site (Origin, Sec-Fetch-Site)' });
    }
    let fields: Record<string, string>;
    try {
      fields = await readForm(ctx, 4096);
    } catch (err) {
      if (err instanceof ProtocolError) return result(ctx, 'The form could not be read', err.toJSON());
      throw err;
    }
    const { serialNumber = '', mac = '', action = '' } = fields;
    const expected = Buffer.from(formMac(action, serialNumber));
    const given = Buffer.from(mac);
    if (!opts.changeStatus || !Object.hasOwn(ACTIONS, action) || given.length !== expected.length || !timingSafeEqual(given, expected)) {
      ctx.status = 400;
      return result(ctx, 'This form was not made by this demo', {});
    }
    const outcome = await opts.changeStatus(serialNumber, action as Action);
    if (outcome.kind === 'unknown') return result(ctx, 'No such credential', { serialNumber, note: 'never issued here, or expired' });
    if (outcome.kind === 'final') return result(ctx, 'The credential is revoked, which is final', { serialNumber });
    const next =
      outcome.status === 'revoked'
        ? html`<p class="hint">Revocation is final. Verify now (after ${String(config.statusList.ttl)} s at most): the wallet's presentation of this credential is refused with "credential revoked".</p>`
        : statusForms(serialNumber);
    result(ctx, `The credential is ${outcome.status}`, { serialNumber, status: outcome.status }, next);
  }

  /** The code exchange at the token endpoint, and the ID token's signature, issuer, audience and nonce. */
  async function redeem(saved: DemoState, code: string): Promise<Redeemed> {
    const profile = saved.mode.startsWith('v1') ? profiles.v1 : profiles.v2;
    const res = await fetch(endpoints(saved.mode).token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code', code, redirect_uri: callback, client_id: client!.clientId, client_secret: client!.clientSecret,
        ...(saved.verifier ? { code_verifier: saved.verifier } : {}),
      }),
    });
    const token = (await res.json()) as { id_token?: string };
    if (!token.id_token) return { title: 'The token request failed', details: token };
    const { payload } = await jwtVerify(token.id_token, jwks, { issuer: profile.issuer, audience: client!.clientId });
    if (payload.nonce !== saved.nonce) return { title: 'nonce mismatch', details: {} };
    return { claims: payload };
  }

  async function done(ctx: Context): Promise<void> {
    const q = ctx.query as Record<string, string>;
    const saved = typeof q.state === 'string' ? await store.consume<DemoState>(stateKey(q.state)) : undefined;
    if (!saved || !client) return result(ctx, 'Unknown or used state', { state: q.state });
    if (q.error) return result(ctx, 'The service answered with an error', { error: q.error, error_description: q.error_description });
    const redeemed = await redeem(saved, String(q.code ?? ''));
    if ('title' in redeemed) return result(ctx, redeemed.title, redeemed.details);
    result(ctx, 'The relying party received this ID token (signature verified)', redeemed.claims, statusForms(redeemed.claims.SerialNumber));
  }

  /**
   * The relying party's webhook receiver. A delivery that does not verify is refused with 400 and changes
   * nothing. A verified one is answered 204 once handled; its outcome is claimed once per state, so a
   * redelivery (Standard Webhooks delivers at least once) is answered 204 and otherwise ignored.
   */
  async function webhook(ctx: Context): Promise<void> {
    // raw: the signature covers the exact bytes (an oversized body is invalid_request, as everywhere)
    const raw = (await readBody(ctx, WEBHOOK_BODY_LIMIT)).toString('utf8');
    const headers = { 'webhook-id': ctx.get('webhook-id'), 'webhook-timestamp': ctx.get('webhook-timestamp'), 'webhook-signature': ctx.get('webhook-signature') };
    const event = verifyWebhook(raw, headers, webhookSecrets!);
    if (!event) {
      ctx.status = 400;
      ctx.body = { error: 'invalid_request', error_description: 'the webhook does not verify with the client\'s secret (Standard Webhooks)' };
      return;
    }
    ctx.status = 204;
    const { state } = event.data;
    if (typeof state !== 'string' || !STATE.test(state) || event.data.client_id !== client!.clientId) return; // not a flow this demo started
    if (!['flow.completed', 'flow.failed', 'flow.expired'].includes(event.type)) return; // an event type this demo does not know
    const saved = await store.get<DemoState>(stateKey(state));
    if (!saved?.external) return; // not an External flow of this demo's, or one it has forgotten
    if (!(await store.setIfAbsent(outcomeKey(state), { status: 'continuing' } satisfies Outcome, EXTERNAL_TTL))) return; // a redelivery
    const received = `Webhook ${event.type} received at /demo/webhook, signature verified (webhook-id ${headers['webhook-id']}).`;
    let outcome: Outcome;
    try {
      outcome = event.type === 'flow.completed' ? await continueFlow(state, saved, event, received) : { status: 'failed', title: event.type === 'flow.expired' ? 'The flow expired' : 'The flow failed', details: { type: event.type, error: event.data.error, error_description: event.data.error_description }, log: [received] };
    } catch (err) {
      outcome = { status: 'failed', title: 'The relying party could not continue the flow', details: { error: (err as Error).message }, log: [received] };
    }
    await store.set(outcomeKey(state), outcome, EXTERNAL_TTL);
  }

  /** flow.completed: authorise with context_id (and the request_uri of a pushed request) gives the code, redeemed as after a redirect. */
  async function continueFlow(state: string, saved: DemoState, event: FlowEvent, received: string): Promise<Outcome> {
    const log = [received];
    const contextId = event.data.ContinuationContext;
    if (typeof contextId !== 'string') return { status: 'failed', title: 'The webhook carries no ContinuationContext', details: event.data, log };
    const authorize = endpoints(saved.mode).authorization_endpoint;
    const query = new URLSearchParams({ client_id: client!.clientId, context_id: contextId, ...(saved.external?.requestUri ? { request_uri: saved.external.requestUri } : {}) });
    // server to server: no cookies, and the redirect is read, not followed
    const res = await fetch(`${authorize}?${query}`, { redirect: 'manual' });
    const location = res.headers.get('location');
    // the log names the parameters, never the context's value: a bearer value until it is used
    const asked = `GET ${authorize}?client_id=${client!.clientId}&context_id=…${saved.external?.requestUri ? '&request_uri=…' : ''}`;
    if (res.status !== 302 || !location) {
      return { status: 'failed', title: 'Continuing with context_id failed', details: { status: res.status, ...((await res.json().catch(() => ({}))) as object) }, log: [...log, `${asked}: ${res.status}.`] };
    }
    const back = new URL(location);
    if (`${back.origin}${back.pathname}` !== callback || back.searchParams.get('state') !== state) {
      return { status: 'failed', title: 'Continuing with context_id led elsewhere', details: { location }, log: [...log, `${asked}: 302 to an unexpected place.`] };
    }
    const code = back.searchParams.get('code');
    if (!code) return { status: 'failed', title: 'The service answered with an error', details: Object.fromEntries(back.searchParams), log: [...log, `${asked}: 302 with an error.`] };
    log.push(`${asked}: 302 to ${callback} with a code and the flow's state.`);
    const redeemed = await redeem(saved, code);
    if ('title' in redeemed) return { status: 'failed', ...redeemed, log };
    log.push(`POST ${endpoints(saved.mode).token_endpoint} with the code${saved.verifier ? ' and the PKCE verifier' : ''}: an ID token, its signature, issuer, audience and nonce verified.`);
    return { status: 'completed', claims: redeemed.claims, log };
  }

  /** The relying party's page while its server waits for the webhook; then what the webhook led to. */
  async function waiting(ctx: Context): Promise<void> {
    const state = typeof ctx.query.state === 'string' && STATE.test(ctx.query.state) ? ctx.query.state : undefined;
    const [saved, outcome] = state ? await Promise.all([store.get<DemoState>(stateKey(state)), store.get<Outcome>(outcomeKey(state))]) : [];
    const again = html`<p><a href="${`${config.baseUrl}/demo`}">Start again</a></p>`;
    if (outcome?.status === 'completed' || outcome?.status === 'failed') {
      const title = outcome.status === 'completed' ? 'The relying party received this ID token' : outcome.title;
      const shown = outcome.status === 'completed' ? outcome.claims : outcome.details;
      page(ctx, title, html`<section class="card demo"><h1>${title}</h1>
<p class="hint">External Client flow: the browser stayed at the prompt, and the relying party's server ${outcome.status === 'completed' ? 'did this' : 'was told'}:</p>
<ol class="log">${outcome.log.map((line) => html`<li>${line}</li>`)}</ol>
<pre>${JSON.stringify(shown, null, 2)}</pre>${again}</section>`);
      return;
    }
    if (!saved?.external) return result(ctx, 'Unknown or expired state', { state: ctx.query.state });
    ctx.set('Refresh', String(REFRESH_SECONDS));
    const status = outcome
      ? html`<p class="status">The webhook arrived: the relying party is continuing the flow…</p>`
      : html`<p class="status">Waiting for the webhook…</p>`;
    page(ctx, 'External Client flow', html`<section class="card demo"><h1>External Client flow</h1>
<p>The relying party started the flow. The holder's browser will not come back here: when the wallet step ends, the service posts a signed webhook to <code>${webhookUrl}</code>, and the relying party's server continues with <code>context_id</code>.</p>
<a class="button button--primary" href="${saved.external.promptUrl}" target="_blank" rel="noopener">Open the holder's prompt</a>
<p class="hint">It opens in a new tab, as if on the holder's device: receive or present there with your wallet or the dev wallet.</p>
${status}
<p class="hint">This page reloads every ${REFRESH_SECONDS} seconds. state <code>${state}</code></p>${again}</section>`);
  }

  return async function demo(ctx, next) {
    if (ctx.path === '/demo' && ctx.method === 'GET') return index(ctx);
    if (ctx.path === '/demo/start' && ctx.method === 'POST') return start(ctx);
    if (ctx.path === '/demo/callback' && ctx.method === 'GET') return done(ctx);
    if (ctx.path === '/demo/external' && ctx.method === 'GET' && webhookSecrets) return waiting(ctx);
    if (ctx.path === '/demo/webhook' && ctx.method === 'POST' && webhookSecrets) return webhook(ctx);
    if (ctx.path === '/demo/credential-status' && ctx.method === 'POST' && opts.changeStatus) return changeCredentialStatus(ctx);
    if (ctx.path === '/' && ctx.method === 'GET') return ctx.redirect(`${config.baseUrl}/demo`);
    return next();
  };
}
