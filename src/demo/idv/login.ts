import { createHash } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import { errors } from 'oidc-provider';
import type Provider from 'oidc-provider';
import { ClientAborted, readForm } from '../../http/form.js';
import { sendPage } from '../../http/page.js';
import { isPastCalendarDate } from '../../rules/template.js';
import { idvCsp, renderIdvMessage, renderLoginPage, type PersonFields } from '../idvPages.js';
import type { People } from './people.js';

/** The form's prefilled values. */
const SAMPLE: PersonFields = { given_name: 'Ada', family_name: 'Lovelace', birthdate: '1815-12-10' };
const FORM_LIMIT = 4 * 1024;
const INTERACTION = /^\/interaction\/([A-Za-z0-9_-]{1,64})$/;

export interface LoginDeps {
  provider: Provider;
  issuer: string;
  /** origins the page's form may end at (the clients' redirect URIs') */
  formTargets: readonly string[];
  people: Pick<People, 'remember'>;
}

/**
 * The login page at {issuer}/interaction/<uid>, as oidc-provider's pre-middleware (it runs in the
 * provider's own context, with its cookies): GET shows the form, POST confirms or declines.
 * Confirm: the person's sub (a hash of the three values), a login and a grant of the requested scope and
 * claims, in one result. Decline: access_denied.
 */
export function loginPages(d: LoginDeps): Middleware {
  const { provider, issuer } = d;
  const csp = (nonce: string) => idvCsp(nonce, d.formTargets);
  const gone = (ctx: Context) =>
    sendPage(
      ctx,
      400,
      (nonce) =>
        renderIdvMessage({
          nonce,
          title: 'This identity check has ended',
          message: 'It expired or was already finished. Go back to the app and start again.',
        }),
      csp,
    );

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
    const form = (status: number, values: PersonFields, error?: string) =>
      sendPage(ctx, status, (nonce) => renderLoginPage({ nonce, action, values, client, error }), csp);
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
      const sub = createHash('sha256')
        .update(JSON.stringify([person.given_name, person.family_name, person.birthdate]))
        .digest('base64url');
      d.people.remember(sub, person);
      const grant = new provider.Grant({ accountId: sub, clientId: client });
      grant.addOIDCScope(String(details.params.scope ?? 'openid'));
      const claims = requestedClaims(details.params.claims);
      if (claims.length) grant.addOIDCClaims(claims);
      const grantId = await grant.save();
      returnTo = await provider.interactionResult(
        ctx.req,
        ctx.res,
        { login: { accountId: sub, remember: false }, consent: { grantId } },
        { mergeWithLastSubmission: false },
      );
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.status = 303;
    ctx.redirect(returnTo);
  };
}

/** The claim names a `claims` request parameter asks for (OIDC Core §5.5), for the grant. */
function requestedClaims(param: unknown): string[] {
  if (typeof param !== 'string') return [];
  try {
    const parsed = JSON.parse(param) as { id_token?: unknown; userinfo?: unknown };
    return [
      ...new Set(
        [parsed.id_token, parsed.userinfo].flatMap((part) =>
          part && typeof part === 'object' ? Object.keys(part) : [],
        ),
      ),
    ];
  } catch {
    return [];
  }
}

/** The person's entries, or what is wrong with them (said to the person). */
function check(values: PersonFields): string | undefined {
  for (const [name, label] of [
    ['given_name', 'a given name'],
    ['family_name', 'a family name'],
  ] as const) {
    const v = values[name];
    if (!v || v.length > 100 || /\p{Cc}/u.test(v)) return `Enter ${label} (at most 100 characters).`;
  }
  return isPastCalendarDate(values.birthdate) ? undefined : 'Enter the birth date as YYYY-MM-DD, a day in the past.';
}
