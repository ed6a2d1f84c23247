import { createHash, randomBytes } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import { SignJWT, createLocalJWKSet, jwtVerify, type JWK } from 'jose';
import type { Config, ClientConfig, CredentialType } from '../config/schema.js';
import type { Store } from '../store/types.js';
import { readAsset } from '../interaction/views/assets.js';
import { html, type SafeHtml } from '../interaction/views/html.js';
import { renderLayout } from '../interaction/views/layout.js';
import { readForm } from '../http/form.js';
import { ProtocolError } from '../rules/errors.js';
import { discoveryDocument } from '../oidc/discovery.js';
import { versionProfiles } from '../oidc/versions.js';

/**
 * A relying party built in, for trying the service in a browser (config `demo: true`, never in
 * production): it signs an id_token_hint with the demo client's secret, pushes the request, sends the
 * browser to authorise, and on the way back redeems the code and shows the verified ID token. It speaks
 * only HTTP to the service, like any relying party.
 */
type Mode = 'v2-par' | 'v2' | 'v1-par' | 'v1';

interface DemoState {
  mode: Mode;
  verifier?: string;
  nonce: string;
  clientId: string;
}

const SAMPLE: Record<string, unknown> = {
  FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com', Company: 'Analytical Engines Ltd',
  StartDate: '2024-01-15', MemberName: 'Ada Lovelace', MemberNumber: 1815, Premium: true,
};

const CSP = (nonce: string) => `default-src 'none'; style-src 'nonce-${nonce}'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

function page(ctx: Context, title: string, body: SafeHtml): void {
  const nonce = randomBytes(16).toString('base64');
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', CSP(nonce));
  ctx.set('Cache-Control', 'no-store');
  ctx.body = renderLayout({ nonce, title, body, css: DEMO_CSS });
}

const DEMO_CSS = readAsset('demo.css');

export function createDemoRoutes(config: Config, store: Store, idTokenJwks: { keys: JWK[] }): Middleware {
  const callback = `${config.baseUrl}/demo/callback`;
  const client: ClientConfig | undefined = config.clients.find((c) => c.redirectUris.includes(callback) && c.scopes.some((s) => s.startsWith('issue.')));
  const profiles = versionProfiles(config.baseUrl);
  const jwks = createLocalJWKSet({ keys: idTokenJwks.keys.map(({ d, p, q, dp, dq, qi, ...pub }) => pub) });

  function typesFor(c: ClientConfig): CredentialType[] {
    return config.credentialTypes.filter((t) => c.scopes.includes(`issue.${t.name}`));
  }

  function index(ctx: Context): void {
    if (!client) {
      page(ctx, 'Demo', html`<section class="card demo"><h1>Demo</h1><p>No client in the config has the redirect URI ${callback} and an issuance scope.</p></section>`);
      return;
    }
    const modes = html`<option value="v2-par">Version 2, PAR</option><option value="v2">Version 2, without PAR</option><option value="v1-par">Version 1, PAR</option>`;
    const forms = typesFor(client).map((t) => {
      const fields = Object.entries(t.attributes)
        .filter(([, a]) => a.type !== 'image')
        .map(([name, a]) => html`<label>${a.label ?? name}<input name="attr.${name}" value="${SAMPLE[name] ?? ''}"${a.required && html` required`}></label>`);
      const pin = t.pinCodeLength
        ? html`<label>PIN for the wallet (${t.pinCodeLength} digits, optional)<input name="pin" inputmode="numeric" pattern="[0-9]{${t.pinCodeLength}}" value="${'1234567890'.slice(0, t.pinCodeLength)}"></label>`
        : '';
      return html`<section class="card demo"><h2>Issue: ${t.displayName ?? t.name}</h2>
<form method="post" action="${`${config.baseUrl}/demo/start`}">
<input type="hidden" name="type" value="${t.name}">${fields}${pin}
<label>Interface<select name="mode">${modes}</select></label>
<button type="submit">Issue with ${client.clientName ?? client.clientId}</button></form></section>`;
    });
    const verifiable = config.credentialTypes.filter((t) => client.scopes.includes(t.name));
    const verify =
      verifiable.length > 0 &&
      html`<section class="card demo"><h2>Verify</h2>
<form method="post" action="${`${config.baseUrl}/demo/start`}">
<input type="hidden" name="kind" value="verify">
${verifiable.map((t, i) => html`<label><span><input type="checkbox" name="type.${t.name}" value="1"${i === 0 && html` checked`}> ${t.displayName ?? t.name}</span></label>`)}
<label>Interface<select name="mode">${modes}<option value="v1">Version 1, without PAR (/oidc/authorizev1)</option></select></label>
<button type="submit">Ask for credentials as ${client.clientName ?? client.clientId}</button></form></section>`;
    page(ctx, 'Try the VC OpenID Provider', html`<section class="card demo"><h1>Try it</h1>
<p class="hint">This page plays the relying party: it signs an id_token_hint for client <code>${client.clientId}</code> and starts the code flow. Receive the credential with your wallet, or with the dev wallet: <code>npm run wallet -- receive '&lt;offer link&gt;' --pin 1234</code>; present it with <code>npm run wallet -- present '&lt;request link&gt;'</code>.</p></section>${forms}${verify}`);
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
    const mode = (['v2-par', 'v2', 'v1-par', 'v1'] as const).find((m) => m === form.mode) ?? 'v2-par';
    const profile = mode.startsWith('v1') ? profiles.v1 : profiles.v2;
    const doc = discoveryDocument(profile, config.baseUrl, mode === 'v1' ? 'root' : 'par') as Record<string, string>;
    const state = randomBytes(16).toString('base64url');
    const nonce = randomBytes(16).toString('base64url');
    const verifier = mode === 'v1-par' ? undefined : randomBytes(32).toString('base64url');
    const params: Record<string, string> = { client_id: client.clientId, response_type: 'code', redirect_uri: callback, state, nonce };
    if (verifier) Object.assign(params, { code_challenge: createHash('sha256').update(verifier).digest('base64url'), code_challenge_method: 'S256' });

    if (form.kind === 'verify') {
      const types = config.credentialTypes.filter((t) => client.scopes.includes(t.name) && form[`type.${t.name}`]);
      if (!types.length) return result(ctx, 'Choose at least one credential type', {});
      params.scope = ['openid', ...types.map((t) => t.name)].join(' ');
    } else {
      const type = typesFor(client).find((t) => t.name === form.type);
      if (!type || mode === 'v1') return result(ctx, 'Unknown credential type or interface', {});
      const claims: Record<string, unknown> = {};
      for (const [name, a] of Object.entries(type.attributes)) {
        const v = form[`attr.${name}`];
        if (v === undefined || v === '') continue;
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
    await store.set(`demo:${state}`, { mode, verifier, nonce, clientId: client.clientId } satisfies DemoState, 600);
    if (mode === 'v2' || mode === 'v1') {
      ctx.redirect(`${doc.authorization_endpoint}?${new URLSearchParams(params)}`);
      return;
    }
    const res = await fetch(doc.pushed_authorization_request_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ ...params, client_secret: client.clientSecret }),
    });
    const body = (await res.json()) as { request_uri?: string; error?: string; error_description?: string };
    if (!body.request_uri) return result(ctx, 'The PAR request failed', body);
    ctx.redirect(`${doc.authorization_endpoint}?${new URLSearchParams({ client_id: client.clientId, request_uri: body.request_uri })}`);
  }

  function result(ctx: Context, title: string, data: unknown): void {
    page(ctx, title, html`<section class="card demo"><h1>${title}</h1><pre>${JSON.stringify(data, null, 2)}</pre><p><a href="${`${config.baseUrl}/demo`}">Start again</a></p></section>`);
  }

  async function done(ctx: Context): Promise<void> {
    const q = ctx.query as Record<string, string>;
    const saved = typeof q.state === 'string' ? await store.consume<DemoState>(`demo:${q.state}`) : undefined;
    if (!saved || !client) return result(ctx, 'Unknown or used state', { state: q.state });
    if (q.error) return result(ctx, 'The service answered with an error', { error: q.error, error_description: q.error_description });
    const profile = saved.mode.startsWith('v1') ? profiles.v1 : profiles.v2;
    const doc = discoveryDocument(profile, config.baseUrl) as Record<string, string>;
    const res = await fetch(doc.token_endpoint, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'authorization_code', code: String(q.code ?? ''), redirect_uri: callback, client_id: client.clientId, client_secret: client.clientSecret,
        ...(saved.verifier ? { code_verifier: saved.verifier } : {}),
      }),
    });
    const token = (await res.json()) as { id_token?: string };
    if (!token.id_token) return result(ctx, 'The token request failed', token);
    const { payload } = await jwtVerify(token.id_token, jwks, { issuer: profile.issuer, audience: client.clientId });
    if (payload.nonce !== saved.nonce) return result(ctx, 'nonce mismatch', {});
    result(ctx, 'The relying party received this ID token (signature verified)', payload);
  }

  return async function demo(ctx, next) {
    if (ctx.path === '/demo' && ctx.method === 'GET') return index(ctx);
    if (ctx.path === '/demo/start' && ctx.method === 'POST') return start(ctx);
    if (ctx.path === '/demo/callback' && ctx.method === 'GET') return done(ctx);
    if (ctx.path === '/' && ctx.method === 'GET') return ctx.redirect(`${config.baseUrl}/demo`);
    return next();
  };
}
