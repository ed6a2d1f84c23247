import { createHash, randomBytes, randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import type { Context, Middleware } from 'koa';
import Provider, { errors, interactionPolicy, type Account, type ClaimsParameterMember, type Configuration, type KoaContextWithOIDC } from 'oidc-provider';
import { exportJWK, generateKeyPair } from 'jose';
import { ClientAborted, readForm } from '../http/form.js';
import { sendPage } from '../http/page.js';
import { isPastCalendarDate } from '../rules/template.js';
import { idvCsp, renderIdvMessage, renderLoginPage, type PersonFields } from './idvPages.js';

/**
 * A built-in test identity provider for VerifiedIdentity_Other (D12), for the demo (config `demo: true`)
 * and the tests: a real oidc-provider instance with a login page of its own, where a person "verifies"
 * whatever name and birth date they enter. Never an identity check of anything.
 *
 * Keys, cookie key and records (oidc-provider's own memory adapter) live in this process only, so one
 * instance serves a whole login: the demo runs it on one instance.
 */
export interface DemoIdvClient {
  clientId: string;
  clientSecret: string;
  redirectUris: string[];
  clientAuth: 'client_secret_basic' | 'client_secret_post';
}

export interface DemoIdvOptions {
  /** absolute URL it is reachable at, e.g. http://localhost:3000/demo/idv */
  issuer: string;
  clients: DemoIdvClient[];
  /** OpenID Connect for Identity Assurance: also offer the claims as `verified_claims` when asked for */
  verifiedClaims?: boolean;
}

/** The form's prefilled values. */
const SAMPLE: PersonFields = { given_name: 'Ada', family_name: 'Lovelace', birthdate: '1815-12-10' };
const PERSON_CLAIMS = ['given_name', 'family_name', 'birthdate'] as const;
/** What the `verified_claims` say was checked (a made-up trust framework: nothing is). */
const VERIFICATION = { trust_framework: 'demo' };
const FORM_LIMIT = 4 * 1024;
/** people confirmed recently, by sub: kept for their tokens and userinfo, the oldest forgotten first */
const MAX_PEOPLE = 1000;
const INTERACTION = /^\/interaction\/([A-Za-z0-9_-]{1,64})$/;

/**
 * A real oidc-provider instance with its own login page. `middleware` serves the provider and its pages
 * under the issuer URL's path (it calls next() for anything else), for use inside a Koa app whose
 * requests arrive with the full path (e.g. /demo/idv/...), without koa-mount.
 */
export async function createDemoIdvProvider(opts: DemoIdvOptions): Promise<{ provider: Provider; middleware: Middleware }> {
  const issuerUrl = new URL(opts.issuer);
  const issuerPath = issuerUrl.pathname.replace(/\/$/, '');
  const issuer = `${issuerUrl.origin}${issuerPath}`;
  // the login form's post ends, through redirects, at a client's redirect URI: the page's CSP must allow that
  const formTargets = [...new Set(opts.clients.flatMap((c) => c.redirectUris.map((u) => new URL(u).origin)))].filter((o) => o !== issuerUrl.origin);

  const people = new Map<string, PersonFields>();
  const remember = (sub: string, person: PersonFields) => {
    people.delete(sub);
    people.set(sub, person);
    if (people.size > MAX_PEOPLE) people.delete(people.keys().next().value!);
  };

  const { privateKey } = await generateKeyPair('RS256', { extractable: true, modulusLength: 2048 });
  const signingKey = { ...(await exportJWK(privateKey)), kid: randomUUID(), alg: 'RS256', use: 'sig' };

  // the page every authorization request shows, even in a browser that confirmed someone before
  const policy = interactionPolicy.base();
  policy.get('login')!.checks.add(
    new interactionPolicy.Check('demo_asks_every_time', 'the demo provider asks the person on every request', (ctx: KoaContextWithOIDC) =>
      ctx.oidc.result?.login ? interactionPolicy.Check.NO_NEED_TO_PROMPT : interactionPolicy.Check.REQUEST_PROMPT),
  );

  const configuration: Configuration = {
    clients: opts.clients.map((c) => ({
      client_id: c.clientId,
      client_secret: c.clientSecret,
      redirect_uris: c.redirectUris,
      response_types: ['code'],
      grant_types: ['authorization_code'],
      token_endpoint_auth_method: c.clientAuth,
    })),
    clientAuthMethods: ['client_secret_basic', 'client_secret_post'],
    // the clients are confidential: no browser calls the token or userinfo endpoints
    clientBasedCORS: () => false,
    jwks: { keys: [signingKey] } as Configuration['jwks'],
    cookies: {
      keys: [randomBytes(32).toString('base64url')],
      names: { session: '_demo_idv_session', interaction: '_demo_idv_interaction', resume: '_demo_idv_resume' },
      long: { signed: true, httpOnly: true, sameSite: 'lax' },
      short: { signed: true, httpOnly: true, sameSite: 'lax' },
    },
    features: {
      devInteractions: { enabled: false },
      claimsParameter: { enabled: true },
      userinfo: { enabled: true },
      rpInitiatedLogout: { enabled: false },
    },
    claims: {
      openid: ['sub'],
      profile: [...PERSON_CLAIMS],
      ...(opts.verifiedClaims ? { verified_claims: null } : {}),
    },
    // the person's claims in the ID token too, not only at userinfo (the service reads either)
    conformIdTokenClaims: false,
    discovery: opts.verifiedClaims
      ? { verified_claims_supported: true, trust_frameworks_supported: [VERIFICATION.trust_framework], claims_in_verified_claims_supported: [...PERSON_CLAIMS] }
      : {},
    responseTypes: ['code'],
    pkce: { required: () => true },
    ttl: { AuthorizationCode: 60, AccessToken: 300, IdToken: 300, Interaction: 600, Session: 600, Grant: 600 },
    interactions: {
      url: (_ctx: KoaContextWithOIDC, interaction: { uid: string }) => `${issuer}/interaction/${interaction.uid}`,
      policy,
    },
    findAccount: async (_ctx: KoaContextWithOIDC, sub: string): Promise<Account | undefined> => {
      const person = people.get(sub);
      if (!person) return undefined;
      return {
        accountId: sub,
        claims: (_use: string, _scope: string, requested: Record<string, null | ClaimsParameterMember>) => ({
          sub,
          ...person,
          ...(opts.verifiedClaims ? { verified_claims: verifiedClaims(person, requested?.verified_claims) } : {}),
        }),
      };
    },
    renderError: async (ctx: KoaContextWithOIDC, out: { error?: string; error_description?: string }) => {
      sendPage(ctx, ctx.status, (nonce) =>
        renderIdvMessage({ nonce, title: 'This identity check cannot go on', message: `${out.error ?? 'error'}: ${out.error_description ?? 'something went wrong'}` }), (nonce) => idvCsp(nonce, formTargets));
    },
  } as Configuration;

  const provider = new Provider(issuer, configuration);
  // behind the service's app (or any proxy) the host and scheme come from X-Forwarded-*
  provider.proxy = true;
  provider.use(interactionPages(provider, issuer, formTargets, remember));

  // Koa composes an app's middleware when its callback is made: made again when provider.use (the
  // documented pre- and post-middleware) added one since, so that it takes part
  let handle = provider.callback();
  let composed = provider.middleware.length;
  const middleware: Middleware = async (ctx, next) => {
    const fullPath = ctx.originalUrl.split('?')[0];
    if (fullPath !== issuerPath && !fullPath.startsWith(`${issuerPath}/`)) return next();
    // oidc-provider's documented mounting for frameworks that hand it the raw request: the path under
    // the issuer as req.url, the full one as req.originalUrl (from which it builds its own URLs). It
    // answers on the raw response, with its own cookie keys and proxy setting.
    const req = ctx.req as IncomingMessage & { originalUrl?: string };
    const saved = { url: req.url, originalUrl: req.originalUrl };
    req.originalUrl = `${fullPath}${ctx.search}`;
    req.url = `${fullPath.slice(issuerPath.length) || '/'}${ctx.search}`;
    ctx.respond = false;
    if (provider.middleware.length !== composed) {
      handle = provider.callback();
      composed = provider.middleware.length;
    }
    try {
      await handle(req, ctx.res);
    } finally {
      req.url = saved.url;
      if (saved.originalUrl === undefined) delete req.originalUrl;
      else req.originalUrl = saved.originalUrl;
    }
  };
  return { provider, middleware };
}

/** `verified_claims` for the person: the requested claims of the three (all when none are named). */
function verifiedClaims(person: PersonFields, requested: null | ClaimsParameterMember | undefined) {
  const asked = requested && typeof requested.claims === 'object' && requested.claims !== null ? Object.keys(requested.claims) : PERSON_CLAIMS;
  const claims: Record<string, string> = {};
  for (const name of PERSON_CLAIMS) if (asked.includes(name)) claims[name] = person[name];
  return { verification: { ...VERIFICATION }, claims };
}

/** The claim names a `claims` request parameter asks for (OIDC Core §5.5), for the grant. */
function requestedClaims(param: unknown): string[] {
  if (typeof param !== 'string') return [];
  try {
    const parsed = JSON.parse(param) as { id_token?: unknown; userinfo?: unknown };
    return [...new Set([parsed.id_token, parsed.userinfo].flatMap((part) => (part && typeof part === 'object' ? Object.keys(part) : [])))];
  } catch {
    return [];
  }
}

/** The person's entries, or what is wrong with them (said to the person). */
function check(values: PersonFields): string | undefined {
  for (const [name, label] of [['given_name', 'a given name'], ['family_name', 'a family name']] as const) {
    const v = values[name];
    if (!v || v.length > 100 || /\p{Cc}/u.test(v)) return `Enter ${label} (at most 100 characters).`;
  }
  return isPastCalendarDate(values.birthdate) ? undefined : 'Enter the birth date as YYYY-MM-DD, a day in the past.';
}

/**
 * The login page at {issuer}/interaction/<uid>, as oidc-provider's pre-middleware (it runs in the
 * provider's own context, with its cookies): GET shows the form, POST confirms or declines.
 * Confirm: the person's sub (a hash of the three values), a login and a grant of the requested scope and
 * claims, in one result. Decline: access_denied.
 */
function interactionPages(provider: Provider, issuer: string, formTargets: readonly string[], remember: (sub: string, person: PersonFields) => void): Middleware {
  const csp = (nonce: string) => idvCsp(nonce, formTargets);
  const gone = (ctx: Context) =>
    sendPage(ctx, 400, (nonce) => renderIdvMessage({ nonce, title: 'This identity check has ended', message: 'It expired or was already finished. Go back to the app and start again.' }), csp);

  return async (ctx, next) => {
    const m = INTERACTION.exec(ctx.path);
    if (!m || (ctx.method !== 'GET' && ctx.method !== 'POST')) return next();
    const uid = m[1];
    let details: Awaited<ReturnType<Provider['interactionDetails']>>;
    try {
      details = await provider.interactionDetails(ctx.req, ctx.res);
    } catch (err) {
      if (err instanceof errors.SessionNotFound) return gone(ctx);
      throw err;
    }
    // the interaction the cookie names must be the one the URL names
    if (details.uid !== uid) return gone(ctx);
    const action = `${issuer}/interaction/${uid}`;
    const client = String(details.params.client_id ?? '');
    const form = (status: number, values: PersonFields, error?: string) => sendPage(ctx, status, (nonce) => renderLoginPage({ nonce, action, values, client, error }), csp);
    if (ctx.method === 'GET') return form(200, SAMPLE);

    let body: Record<string, string>;
    try {
      body = await readForm(ctx, FORM_LIMIT);
    } catch (err) {
      if (err instanceof ClientAborted) return;
      return form(400, SAMPLE, 'The form could not be read. Please try again.');
    }
    let returnTo: string;
    if (body.decision === 'decline') {
      returnTo = await provider.interactionResult(
        ctx.req,
        ctx.res,
        { error: 'access_denied', error_description: 'The person declined the identity check.' },
        { mergeWithLastSubmission: false },
      );
    } else {
      const person: PersonFields = {
        given_name: (body.given_name ?? '').trim(),
        family_name: (body.family_name ?? '').trim(),
        birthdate: (body.birthdate ?? '').trim(),
      };
      const problem = body.decision === 'confirm' ? check(person) : 'Choose Confirm identity or Decline.';
      if (problem) return form(400, person, problem);
      // the same three values are the same person: the same sub
      const sub = createHash('sha256').update(JSON.stringify([person.given_name, person.family_name, person.birthdate])).digest('base64url');
      remember(sub, person);
      const grant = new provider.Grant({ accountId: sub, clientId: client });
      grant.addOIDCScope(String(details.params.scope ?? 'openid'));
      const claims = requestedClaims(details.params.claims);
      if (claims.length) grant.addOIDCClaims(claims);
      const grantId = await grant.save();
      returnTo = await provider.interactionResult(ctx.req, ctx.res, { login: { accountId: sub, remember: false }, consent: { grantId } }, { mergeWithLastSubmission: false });
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 303;
    ctx.redirect(returnTo);
  };
}
