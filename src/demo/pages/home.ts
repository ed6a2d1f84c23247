/** GET /demo: the relying party's forms, one card for each credential type to issue, Verify, and Verify identity. */
import type { Context } from 'koa';
import { pickText } from '../../i18n/catalogues.js';
import { EXTERNAL } from '../../rules/scopes.js';
import type { ClientConfig, CredentialType } from '../../config/schema.js';
import { MDL_DOCTYPE } from '../mdocs.js';
import { html, type SafeHtml } from '../../interaction/views/html.js';
import { page } from '../page.js';
import { EXTERNAL_SUFFIX } from '../flow.js';
import { typesFor, type DemoDeps } from '../deps.js';

/** What the page uses. */
export type HomeDeps = Pick<
  DemoDeps,
  | 'config'
  | 'client'
  | 'callback'
  | 'webhookUrl'
  | 'webhookSecrets'
  | 'identityFlows'
  | 'pidIssuer'
  | 'languages'
  | 'mdocs'
>;

const SAMPLE: Record<string, unknown> = {
  FirstName: 'Ada',
  LastName: 'Lovelace',
  Email: 'ada@example.com',
  Company: 'Analytical Engines Ltd',
  StartDate: '2024-01-15',
  MemberName: 'Ada Lovelace',
  MemberNumber: 1815,
  Premium: true,
};

export function home(ctx: Context, d: HomeDeps): void {
  const { config, client, webhookUrl, webhookSecrets } = d;
  if (!client) {
    page(
      ctx,
      'Demo',
      html`<section class="card demo"><h1>Demo</h1><p>No client in the config has the redirect URI ${d.callback} and an issuance scope.</p></section>`,
    );
    return;
  }
  const external =
    webhookSecrets &&
    html`<option value="v2-par${EXTERNAL_SUFFIX}">Version 2, PAR, External</option><option value="v2${EXTERNAL_SUFFIX}">Version 2, without PAR, External</option>`;
  // Version 1 only when the operator serves it (versions.v1)
  const modes = html`<option value="v2-par">Version 2, PAR</option><option value="v2">Version 2, without PAR</option>${config.versions.v1 && html`<option value="v1-par">Version 1, PAR</option>`}`;
  const nonParV1 = nonParV1Option(config);
  const language = languageField(d.languages);
  const forms = typesFor(config, client).map((t) => {
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
  // a type verified only (an age check from an mDL) has a card of its own
  const verifiable = config.credentialTypes.filter((t) => client.scopes.includes(t.name) && !t.verifyOnly);
  const checks = config.credentialTypes
    .filter((t) => client.scopes.includes(t.name) && t.verifyOnly)
    .map((t) => checkCard(d, client, t, html`${modes}${nonParV1}${external}`, language));
  const verify =
    verifiable.length > 0 &&
    html`<section class="card demo"><h2>Verify</h2>
<form method="post" action="${`${config.baseUrl}/demo/start`}">
<input type="hidden" name="kind" value="verify">
${verifiable.map((t, i) => html`<label><span><input type="checkbox" name="type.${t.name}" value="1"${i === 0 && html` checked`}> ${pickText(t.displayName, 'en') ?? t.name}</span></label>`)}
<label>Interface<select name="mode">${modes}${nonParV1}${external}</select></label>${language}
<button type="submit">Ask for credentials as ${client.clientName ?? client.clientId}</button></form></section>`;
  const identity = d.identityFlows.length > 0 && identityCard(d, client, modes, language);
  const externalHint = webhookSecrets
    ? html`<p class="hint">An <strong>External</strong> interface runs the External Client flow: the browser stays at the prompt, and this demo's server hears the outcome by webhook at <code>${webhookUrl}</code>, continues with <code>context_id</code> and redeems the code.</p>`
    : client.scopes.includes(EXTERNAL) &&
      html`<p class="hint">The External Client flow is not offered: the client's webhook goes to <code>${client.webhook?.url ?? '(none)'}</code>, not to this demo's receiver <code>${webhookUrl}</code>.</p>`;
  page(
    ctx,
    'Try the VC OpenID Provider',
    html`<section class="card demo"><h1>Try it</h1>
<p class="hint">This page plays the relying party: it signs an id_token_hint for client <code>${client.clientId}</code> and starts the code flow. Receive the credential with your wallet, or with the dev wallet: <code>npm run wallet -- receive '&lt;offer link&gt;' --pin 1234</code>; present it with <code>npm run wallet -- present '&lt;request link&gt;' --trust keys/verifier-ca.pem</code>.</p>${externalHint}</section>${forms}${verify}${checks}${identity}`,
  );
}

/**
 * A type verified only (`verifyOnly`, such as an age check from an mDL): one button asks for it; the relying
 * party learns what the type's attributes say (`age_over_18`), and where a demo mDL comes from.
 */
function checkCard(
  d: HomeDeps,
  c: ClientConfig,
  t: CredentialType,
  modes: SafeHtml,
  language: SafeHtml | '',
): SafeHtml {
  const { config } = d;
  const name = pickText(t.displayName, 'en') ?? t.name;
  const asks = Object.keys(t.attributes);
  const mdl = t.mdoc?.doctype === MDL_DOCTYPE;
  const age = asks.every((a) => /^age_over_\d{2}$/.test(a));
  return html`<section class="card demo"><h2>${age ? 'Age check' : 'Check'}: ${name}</h2>
<form method="post" action="${`${config.baseUrl}/demo/start`}">
<input type="hidden" name="kind" value="verify"><input type="hidden" name="type.${t.name}" value="1">
<label>Interface<select name="mode">${modes}</select></label>${language}
<button type="submit">Ask “${name}?” as ${c.clientName ?? c.clientId}</button></form>
<p class="hint">Scope <code>${t.name}</code> asks ${t.mdoc ? html`any mdoc of doctype <code>${t.mdoc.doctype}</code> from an IACA listed in <code>verifier.trustAnchors</code>` : 'the credential'} for ${asks.map((a, i) => html`${i > 0 ? ', ' : ''}<code>${a}</code>`)} alone${age ? html`: the ID token says ${asks.map((a, i) => html`${i > 0 ? ', ' : ''}<code>${a}: true</code>`)} or <code>false</code>, never the birth date` : ''}.${mdl && d.mdocs ? html` <a href="${`${config.baseUrl}/demo/mdl`}">Get a demo mDL first</a>, put it into the dev wallet with <code>npm run wallet -- import-mdoc demo-mdl.json</code>, then present it with <code>npm run wallet -- present '&lt;request link&gt;' --trust keys/verifier-ca.pem</code>.` : ''}</p></section>`;
}

/** Version 1 without PAR (verification), when the operator serves Version 1 (versions.v1). */
const nonParV1Option = (config: HomeDeps['config']) =>
  config.versions.v1 && html`<option value="v1">Version 1, without PAR (/oidc/authorizev1)</option>`;

/** The holder pages' language, sent as ui_locales (OIDC Core §3.1.2.1); by default the browser's. */
function languageField(languages: readonly string[] = []): SafeHtml | '' {
  if (languages.length < 2) return '';
  const names = new Intl.DisplayNames(['en'], { type: 'language' });
  return html`
<label>Holder's language (ui_locales)<select name="ui_locales"><option value="">The browser's (Accept-Language)</option>${languages.map((l) => html`<option value="${l}">${names.of(l) ?? l}</option>`)}</select></label>`;
}

/** The Verify identity card: a flow, an interface, and where a demo PID comes from. */
function identityCard(d: HomeDeps, c: ClientConfig, modes: SafeHtml, language: SafeHtml | ''): SafeHtml {
  const { config, identityFlows, pidIssuer } = d;
  const nonParV1 = nonParV1Option(config);
  const pidBlock = config.identity.VerifiedIdentity;
  const offersPid = identityFlows.some((f) => f.scope === 'VerifiedIdentity');
  // D12: only VerifiedIdentity combines with External (VerifiedIdentity_Other's journey ends in the holder's browser)
  const external =
    d.webhookSecrets &&
    offersPid &&
    html`<option value="v2-par${EXTERNAL_SUFFIX}">Version 2, PAR, External (VerifiedIdentity only)</option><option value="v2${EXTERNAL_SUFFIX}">Version 2, without PAR, External (VerifiedIdentity only)</option>`;
  const pidTrusted = pidIssuer !== undefined && pidBlock?.trustedIssuers.some((t) => t.issuer === pidIssuer);
  const pidHint =
    offersPid &&
    (pidTrusted
      ? html`<p class="hint">VerifiedIdentity needs a PID in your wallet: <a href="${`${config.baseUrl}/demo/pid`}">get a demo PID first</a>, then present it with <code>npm run wallet -- present '&lt;request link&gt;' --trust keys/verifier-ca.pem</code>.</p>`
      : html`<p class="hint">VerifiedIdentity accepts PIDs from ${pidBlock!.trustedIssuers.map((t, i) => html`${i > 0 ? ', ' : ''}<code>${t.issuer}</code>`)} only${pidIssuer ? html`, not from this demo's PID issuer <code>${pidIssuer}</code>` : ''}.</p>`);
  return html`<section class="card demo"><h2>Verify identity</h2>
<form method="post" action="${`${config.baseUrl}/demo/start`}">
<input type="hidden" name="kind" value="identity">
<label>Flow<select name="flow">${identityFlows.map((f) => html`<option value="${f.scope}">${f.label}</option>`)}</select></label>
<label>Interface<select name="mode">${modes}${nonParV1}${external}</select></label>${language}
<button type="submit">Verify identity as ${c.clientName ?? c.clientId}</button></form>${pidHint}</section>`;
}
