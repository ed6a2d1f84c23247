import { createHmac } from 'node:crypto';
import type { Config } from '../config/schema.js';
import type { Action } from '../admin/credentials.js';
import { html, type SafeHtml } from '../interaction/views/html.js';
import type { DemoDeps } from './deps.js';

/**
 * The MAC a status form carries for its action and SerialNumber: a form's MAC for one action (reinstate)
 * does not authorise another (revoke). The action is one of ACTIONS, so `:` cannot move between them.
 */
export const formMac = (formKey: string | undefined, action: string, serialNumber: string) =>
  createHmac('sha256', formKey ?? '')
    .update(`demo-status:${action}:${serialNumber}`)
    .digest('base64url');

export type StatusFormsDeps = Pick<DemoDeps, 'changeStatus' | 'formKey'> & {
  config: Pick<Config, 'baseUrl' | 'statusList'>;
};

/**
 * After an issuance: what an operator can do to the credential (D18), as forms. Revoking is final, so it
 * sits behind a disclosure that says so (the demo's pages run no script): Suspend and Reinstate post at
 * once, Revoke only from inside it, in the danger colour.
 */
export function statusForms(d: StatusFormsDeps, serialNumber: unknown): SafeHtml {
  if (!d.changeStatus || !d.formKey || typeof serialNumber !== 'string') return html``;
  const form = (action: Action, label: string, kind = '') =>
    html`<form method="post" action="${`${d.config.baseUrl}/demo/credential-status`}"><input type="hidden" name="serialNumber" value="${serialNumber}"><input type="hidden" name="mac" value="${formMac(d.formKey, action, serialNumber)}"><input type="hidden" name="action" value="${action}"><button class="button${kind}" type="submit">${label}</button></form>`;
  return html`<h2>As the operator</h2><p class="hint">Revoke or suspend this credential by its SerialNumber, as <code>npm run admin</code> and the admin API do. A verification then refuses it ("credential revoked"), once verifiers' cached status list expires (<code>statusList.ttl</code>, ${String(d.config.statusList.ttl)} s).</p><div class="actions">${form('suspend', 'Suspend')}${form('reinstate', 'Reinstate')}</div><details class="confirm-revoke"><summary>Revoke...</summary><p>Revoking is final: the credential cannot be reinstated, and every verification refuses it from then on.</p>${form('revoke', 'Revoke for good', ' danger')}</details>`;
}
