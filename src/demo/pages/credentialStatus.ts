/**
 * POST /demo/credential-status: a status form of an issuance's result (D18). Only a same-origin post of a
 * form this demo made (its MAC over the action and SerialNumber) changes a credential's status.
 */
import { timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { readForm } from '../../http/form.js';
import { isSameOriginPost } from '../../http/sameOrigin.js';
import { ProtocolError } from '../../rules/errors.js';
import { html } from '../../interaction/views/html.js';
import { ACTIONS, reachesOurVerifierOnly, withoutStatusDescription, type Action } from '../../admin/credentials.js';
import { resultPage } from '../page.js';
import { formMac, statusForms, type StatusFormsDeps } from '../statusForms.js';

/** What the endpoint uses. */
export type CredentialStatusDeps = StatusFormsDeps;

export async function changeCredentialStatus(ctx: Context, d: CredentialStatusDeps): Promise<void> {
  const { config } = d;
  const result = (title: string, data: unknown, extra?: Parameters<typeof resultPage>[4]) =>
    resultPage(ctx, config.baseUrl, title, data, extra);
  // a form posted from another site is refused before anything of it is read (a MAC a page elsewhere
  // learned must not work from there)
  if (
    !isSameOriginPost(
      { origin: ctx.get('Origin') || undefined, fetchSite: ctx.get('Sec-Fetch-Site') || undefined },
      new URL(config.baseUrl).origin,
    )
  ) {
    ctx.status = 403;
    return result('This form was not sent from this demo', {
      error: 'the form comes from another site (Origin, Sec-Fetch-Site)',
    });
  }
  let fields: Record<string, string>;
  try {
    fields = await readForm(ctx, 4096);
  } catch (err) {
    if (err instanceof ProtocolError) return result('The form could not be read', err.toJSON());
    throw err;
  }
  const { serialNumber = '', mac = '', action = '' } = fields;
  const expected = Buffer.from(formMac(d.formKey, action, serialNumber));
  const given = Buffer.from(mac);
  if (
    !d.changeStatus ||
    !Object.hasOwn(ACTIONS, action) ||
    given.length !== expected.length ||
    !timingSafeEqual(given, expected)
  ) {
    ctx.status = 400;
    return result('This form was not made by this demo', {});
  }
  const outcome = await d.changeStatus(serialNumber, action as Action);
  if (outcome.kind === 'unknown')
    return result('No such credential', { serialNumber, note: 'never issued here, or expired' });
  if (outcome.kind === 'final') return result('The credential is revoked, which is final', { serialNumber });
  if (reachesOurVerifierOnly(outcome))
    return result(
      `The mdoc is ${outcome.status} for this service's verifier only`,
      { serialNumber, status: outcome.status, note: withoutStatusDescription(serialNumber, outcome) },
      outcome.status === 'suspended' ? statusForms(d, serialNumber) : undefined,
    );
  const next =
    outcome.status === 'revoked'
      ? html`<p class="hint">Revocation is final. Verify now (after ${String(config.statusList.ttl)} s at most): the wallet's presentation of this credential is refused with "credential revoked".</p>`
      : statusForms(d, serialNumber);
  result(`The credential is ${outcome.status}`, { serialNumber, status: outcome.status }, next);
}
