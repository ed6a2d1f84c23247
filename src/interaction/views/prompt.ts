/**
 * The holder-facing prompt (D10): where the holder's wallet takes part in an issuance (OpenID4VCI offer)
 * or a verification (OpenID4VP request).
 *
 * Server-rendered HTML (`html` templates: every interpolated value is escaped). The inline script,
 * assets/prompt.js, is static: it reads its inputs from escaped data-* attributes, only ever writes text
 * with `textContent`, and polls `statusUrl` (same origin only) for progress. Without JavaScript the page
 * still shows the QR code, the wallet link and a Continue link.
 */
import { safeHref } from './escape.js';
import { html, trusted, type SafeHtml } from './html.js';
import { words } from './words.js';
import {
  ICONS,
  PROMPT_CSS,
  PROMPT_SCRIPT,
  inlineSvg,
  promptHead,
  statusSection,
  strong,
  withMarkup,
} from './promptParts.js';
import { dcApiAction } from './dcApiParts.js';
import { renderLayout, renderLayoutBytes, type BrandView, type LayoutOptions } from './layout.js';
import { ENGLISH, type Texts } from '../../i18n/catalogues.js';
import type { MessageId } from '../../i18n/en.js';

export interface PromptCredentialType {
  /** Configured credential type name (e.g. `EmployeeBadge`). */
  name: string;
  /** Human-readable name, in the page's language; falls back to a humanised `name`. */
  displayName?: string;
  /** Attribute names: contained in the credential (issuance) or requested and required (verification). */
  attributes: string[];
  /** verification: attribute names asked for too, shared only when the holder's credential has them */
  optional?: string[];
  /** The config's labels of attributes (`label`), shown instead of the humanised name. */
  labels?: Record<string, string>;
}

export interface PromptView {
  /** CSP nonce for the inline <style> and <script>. */
  nonce: string;
  lang?: string;
  /** the page's language; English when not given */
  texts?: Texts;
  brand?: BrandView;
  /** the relying party's logo, served by the service (config `clients[].logoUri`) */
  clientLogoHref?: string;
  /** `identity`: a person-identification credential is asked for (D12) */
  kind: 'issuance' | 'verification' | 'identity';
  /** Who asks: the relying party's display name. */
  clientName: string;
  credentialTypes: PromptCredentialType[];
  /** `openid-credential-offer://...` or `openid4vp://...`: the link for a wallet on this device */
  walletUri: string;
  /** what the QR code carries, when it is another link than `walletUri` (a presentation request's cross-device link) */
  qrUri?: string;
  /** An <svg> string the server made (views/qrSvg.ts); inserted as is (trusted). */
  qrSvg: string;
  /**
   * Set for PIN-protected offers: the wallet will ask for a `tx_code` of this many digits. Issuance
   * only; ignored for verification (OpenID4VP has no transaction code).
   */
  pin?: { length: number };
  /** Same-origin URL answering `{ status, message?, attemptsLeft? }`. */
  statusUrl: string;
  /** Where the browser goes when the wallet step is over (success or error). */
  continueUrl: string;
  /** presentations: where the holder asks (POST) for a fresh request after the wallet went silent or could not take it */
  freshUrl?: string;
  /** Expiry of the offer/request, epoch milliseconds. */
  expiresAt: number;
  /** An External Client flow (D13): when the step is over, the app continues; the page stays. */
  handover?: boolean;
  /** OpenID4VP 1.0 Appendix A: the prompt's `/dc-api`, when a wallet may answer through the Digital Credentials API */
  dcApiUrl?: string;
}

/** Turns an attribute or type identifier into a label: `given_name` → `Given name`, `dateOfBirth` → `Date of birth`. */
export function humanizeAttribute(name: string): string {
  const label = String(name)
    .split('.')
    .map((segment) => {
      const words = segment
        .replace(/[_-]+/g, ' ')
        .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
        .replace(/([A-Z]+)([A-Z][a-z])/g, '$1 $2')
        .trim()
        .split(/\s+/)
        .filter(Boolean);
      return words
        .map((w, i) => {
          if (w.length > 1 && /^[A-Z0-9]+$/.test(w)) return w; // acronym: PID, URL
          const lower = w.toLowerCase();
          return i === 0 ? lower.charAt(0).toUpperCase() + lower.slice(1) : lower;
        })
        .join(' ');
    })
    .filter(Boolean)
    .join(' \u203a ');
  return label || String(name);
}

/** Formats a remaining duration like the script does (views/promptParts.ts). */
export { formatRemaining } from './promptParts.js';

/** The texts the page's script shows, in the page's language (it never builds a sentence itself). */
export function scriptTexts(t: Texts, clientName: string, waiting: string, pin = false): string {
  return JSON.stringify({
    waiting,
    connected: t.t('progress.connected'),
    returning: t.t('progress.returning'),
    ...(pin ? { pinRetry: t.t('progress.pinRetryAgain') } : {}),
    moved: t.t('progress.moved'),
    doneHandover: t.t('progress.doneHandover', { client: clientName }),
    doneReturning: t.t('progress.doneReturning', { client: clientName }),
    toldClose: t.t('progress.toldClose', { client: clientName }),
    backTo: t.t('progress.backTo', { client: clientName }),
    connectionProblem: t.t('progress.connectionProblem'),
    stalled: t.t('progress.stalled'),
    refused: t.t('progress.refused'),
    lastMinute: t.t('progress.lastMinute'),
    expiredTitle: t.t('progress.expiredTitle'),
    failedTitle: t.t('progress.failedTitle'),
    failedText: t.t('progress.failedText'),
    copied: t.t('prompt.linkCopied'),
    copyFailed: t.t('prompt.copyFailed'),
  });
}

function renderCredential(t: Texts, kind: PromptView['kind'], c: PromptCredentialType): SafeHtml {
  const name = c.displayName && c.displayName.trim() ? c.displayName : humanizeAttribute(c.name);
  const attributes = Array.isArray(c.attributes) ? c.attributes : [];
  const labelOf = (a: string) =>
    c.labels && Object.hasOwn(c.labels, a) && c.labels[a].trim() ? c.labels[a] : humanizeAttribute(a);
  let attrs: SafeHtml | '';
  if (kind !== 'issuance') {
    const optional = Array.isArray(c.optional) ? c.optional : [];
    const list = (names: string[], optionalList: boolean) =>
      html`<ul class="attrs${optionalList ? ' attrs--optional' : ''}">${names.map((a) => html`<li data-attribute="${a}"${optionalList ? html` data-optional` : ''}>${ICONS.dot}<span>${labelOf(a)}</span></li>`)}</ul>`;
    // the required attributes, then apart the optional ones: what is shared depends on the credential
    if (attributes.length > 0) {
      attrs = html`<p class="cred-sub">${words(t, 'prompt.willShare')}</p>
${list(attributes, false)}${
        optional.length > 0
          ? html`<p class="cred-sub">${words(t, 'prompt.willShareIfPresent')}</p>
${list(optional, true)}`
          : ''
      }`;
    } else if (optional.length > 0) {
      attrs = html`<p class="cred-sub">${words(t, 'prompt.willShareOnlyIfPresent')}</p>
${list(optional, true)}`;
    } else attrs = html`<p class="cred-sub">${words(t, 'prompt.willShareAll')}</p>`;
  } else {
    attrs =
      attributes.length > 0
        ? html`<p class="cred-sub">${words(t, 'prompt.contains')}</p>
<ul class="chips">${attributes.map((a) => html`<li class="chip" data-attribute="${a}">${labelOf(a)}</li>`)}</ul>`
        : '';
  }
  return html`<li class="cred" data-credential-type="${c.name}">
<span class="cred-icon" aria-hidden="true">${ICONS.credential}</span>
<div class="cred-body"><p class="cred-name">${name}</p>${attrs}</div>
</li>`;
}

const walletHint = (t: Texts) => html`<p class="hint" id="wallet-hint" hidden>${words(t, 'prompt.walletHint')}</p>`;

/** A fresh request when the wallet went silent or could not take this one; giving up only where the browser goes back. */
const freshForm = (t: Texts, v: PromptView, continueHref: string) =>
  v.freshUrl
    ? html`<form class="fresh" id="fresh" method="post" action="${v.freshUrl}" hidden>
<p class="fresh-text" id="fresh-text"></p>
<div class="fresh-actions"><button type="submit" class="button button--primary"><span class="button-label">${ICONS.refresh}${words(t, 'progress.freshRequest')}</span></button>${
        v.handover
          ? ''
          : html`<a class="button button--secondary" id="give-up" href="${continueHref}" hidden>${t.t('progress.giveUp', { client: v.clientName })}</a>`
      }</div>
</form>`
    : undefined;

/** Renders the prompt page (issuance offer or verification request). */
export function renderPrompt(v: PromptView): string {
  return renderLayout(promptLayout(v));
}

/** The prompt page as the UTF-8 bytes of `renderPrompt`'s text: what the holder's browser is sent. */
export function renderPromptBytes(v: PromptView): Buffer {
  return renderLayoutBytes(promptLayout(v));
}

const KIND_TEXTS = {
  issuance: { heading: 'prompt.issuance.heading', lead: 'prompt.issuance.lead' },
  verification: { heading: 'prompt.verification.heading', lead: 'prompt.verification.lead' },
  identity: { heading: 'prompt.identity.heading', lead: 'prompt.identity.lead' },
} as const satisfies Record<PromptView['kind'], { heading: MessageId; lead: MessageId }>;

function promptLayout(v: PromptView): LayoutOptions {
  const t = v.texts ?? ENGLISH;
  const issuance = v.kind === 'issuance';
  const kindTexts = KIND_TEXTS[v.kind] ?? KIND_TEXTS.verification;
  const types = Array.isArray(v.credentialTypes) ? v.credentialTypes : [];
  // the heading counts what is asked: one credential, or several
  const heading = t.t(kindTexts.heading, { count: Math.max(1, types.length) });
  const lead = withMarkup(t, kindTexts.lead, { client: v.clientName }, { client: strong });
  const detailsLabel = issuance ? t.t('prompt.credentials', { count: types.length }) : t.t('prompt.requested');

  const pinLength = v.pin && Number.isInteger(v.pin.length) && v.pin.length > 0 ? v.pin.length : undefined;
  const pinNotice =
    issuance &&
    v.pin &&
    html`<div class="notice notice--info" id="pin-notice">${ICONS.key}<p><strong>${words(t, 'prompt.pin.title')}</strong> ${
      pinLength !== undefined
        ? t.t('prompt.pin.text', { length: pinLength, client: v.clientName })
        : t.t('prompt.pin.textNoLength', { client: v.clientName })
    }</p></div>`;

  const remaining = Math.max(0, Math.round(Number(v.expiresAt) - Date.now()));
  const walletHref = safeHref(v.walletUri);
  const continueHref = safeHref(v.continueUrl);

  const waiting = t.t('progress.waiting');
  const body = html`<main class="card prompt prompt--${issuance ? 'issuance' : 'verification'}" id="prompt" data-state="pending" data-kind="${v.kind}" data-status-url="${v.statusUrl}" data-continue-url="${continueHref}" data-expires-at="${Number(v.expiresAt)}" data-expires-in="${remaining}"${v.handover ? html` data-handover="true"` : ''} data-text="${scriptTexts(t, v.clientName, waiting, Boolean(pinNotice))}">
${promptHead(t, v.clientName, heading, lead, v.clientLogoHref)}
<section class="prompt-details" aria-labelledby="details-label">
<h2 class="section-label" id="details-label">${detailsLabel}</h2>
<ul class="creds">${types.map((c) => renderCredential(t, v.kind, c))}</ul>
${pinNotice}
</section>
<section class="prompt-wallet" aria-label="${t.t('prompt.thisDevice')}">
<div class="divider divider--wide" aria-hidden="true">${words(t, 'prompt.or')}</div>
${v.dcApiUrl ? dcApiAction(t, v.dcApiUrl) : ''}
<a class="button button--primary wallet-link" id="wallet-link" href="${walletHref}"><span class="button-label">${ICONS.wallet}${words(t, 'prompt.openWallet')}</span></a>
<button type="button" class="button button--secondary copy-link" id="copy-link" data-link="${walletHref}" hidden><span class="button-label">${ICONS.copy}${words(t, 'prompt.copyLink')}</span></button>
<p class="copy-status" id="copy-status" role="status" aria-live="polite"></p>
</section>
${statusSection(t, { nonce: v.nonce, expiresAt: v.expiresAt, continueHref, waiting, hint: walletHint(t), fresh: freshForm(t, v, continueHref) })}
<section class="prompt-scan" aria-label="${t.t('prompt.otherDevice')}">
<div class="divider divider--narrow" aria-hidden="true">${words(t, 'prompt.or')}</div>
<figure class="qr">
<div class="qr-code" role="img" aria-label="${t.t('prompt.qrLabel')}" data-wallet-link="${safeHref(v.qrUri ?? v.walletUri)}">${trusted(inlineSvg(v.qrSvg))}</div>
<figcaption><strong class="qr-title">${words(t, 'prompt.qrTitle')}</strong><span>${words(t, 'prompt.qrText')}</span></figcaption>
</figure>
</section>
</main>`;

  return {
    nonce: v.nonce,
    texts: v.texts,
    lang: v.lang,
    brand: v.brand,
    title: t.t('page.title', { heading, client: v.clientName }),
    body,
    css: PROMPT_CSS,
    script: PROMPT_SCRIPT,
  };
}
