/**
 * The holder-facing prompt (D10): where the holder's wallet takes part in an issuance (OpenID4VCI offer)
 * or a verification (OpenID4VP request).
 *
 * Server-rendered HTML (`html` templates: every interpolated value is escaped). The inline script,
 * assets/prompt.js, is static: it reads its inputs from escaped data-* attributes, only ever writes text
 * with `textContent`, and polls `statusUrl` (same origin only) for progress. Without JavaScript the page
 * still shows the QR code, the wallet link and a Continue link.
 */
import { readAsset } from './assets.js';
import { safeHref } from './escape.js';
import { html, trusted, type SafeHtml } from './html.js';
import { words } from './words.js';
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
  /** Expiry of the offer/request, epoch milliseconds. */
  expiresAt: number;
  /** An External Client flow (D13): when the step is over, the app continues; the page stays. */
  handover?: boolean;
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

/** Formats a remaining duration like the script does: `4:59`, `1:02:03`. */
export function formatRemaining(ms: number): string {
  const total = Math.max(0, Math.ceil(ms / 1000));
  const h = Math.floor(total / 3600);
  const m = Math.floor((total % 3600) / 60);
  const s = total % 60;
  const ss = String(s).padStart(2, '0');
  return h > 0 ? `${h}:${String(m).padStart(2, '0')}:${ss}` : `${m}:${ss}`;
}

function expiresInWords(t: Texts, ms: number): string {
  if (ms > 0 && ms < 60_000) return t.t('progress.expiresSoon');
  return t.t('progress.expiresAbout', { minutes: ms <= 0 ? 0 : Math.ceil(ms / 60_000) });
}

/**
 * A message some of whose values are markup: those values are marked, the message worded in the page's
 * language (a translation may move them), and each mark replaced by its markup.
 */
function withMarkup(t: Texts, id: MessageId, values: Record<string, string | number>, markup: Record<string, (value: string) => SafeHtml>): SafeHtml {
  const names = Object.keys(markup);
  const marked: Record<string, string | number> = { ...values };
  names.forEach((name, i) => (marked[name] = `\u0001${i}\u0002`));
  const parts = t.t(id, marked).split(/\u0001(\d+)\u0002/);
  return html`${parts.map((part, i) => (i % 2 === 0 ? part : markup[names[Number(part)]](String(values[names[Number(part)]] ?? ''))))}`;
}

const strong = (value: string) => html`<strong>${value}</strong>`;

/** The texts the page's script shows, in the page's language (it never builds a sentence itself). */
function scriptTexts(t: Texts, clientName: string, waiting: string, pin = false): string {
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
    lastMinute: t.t('progress.lastMinute'),
    expiredTitle: t.t('progress.expiredTitle'),
    expiredText: t.t('progress.expiredText'),
    failedTitle: t.t('progress.failedTitle'),
    failedText: t.t('progress.failedText'),
    copied: t.t('prompt.linkCopied'),
    copyFailed: t.t('prompt.copyFailed'),
  });
}

/** Strips an XML declaration / doctype in front of the trusted QR SVG (they are invalid inside HTML). */
function inlineSvg(svg: string): string {
  return String(svg)
    .replace(/^\s*<\?xml[^>]*\?>\s*/i, '')
    .replace(/^\s*<!DOCTYPE[^>]*>\s*/i, '');
}

function initial(name: string): string {
  const first = Array.from(name.trim())[0];
  return first ? first.toLocaleUpperCase() : '?';
}

const ICON_ATTRS = html`width="20" height="20" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false"`;

const ICONS = {
  check: html`<svg class="i-check" ${ICON_ATTRS}><circle cx="12" cy="12" r="9"/><path d="M8 12.5l2.7 2.7L16 10"/></svg>`,
  warn: html`<svg class="i-warn" ${ICON_ATTRS}><path d="M12 3.5l9.5 16.5h-19z"/><path d="M12 10v4.5"/><path d="M12 17.5h.01"/></svg>`,
  error: html`<svg class="i-error" ${ICON_ATTRS}><circle cx="12" cy="12" r="9"/><path d="M12 7.5v5.5"/><path d="M12 16.5h.01"/></svg>`,
  key: html`<svg ${ICON_ATTRS}><circle cx="8" cy="15" r="4"/><path d="M11 12l9-9"/><path d="M17 6l3 3"/><path d="M14.5 8.5l2 2"/></svg>`,
  wallet: html`<svg ${ICON_ATTRS}><path d="M4 7.5A2.5 2.5 0 016.5 5H18v3"/><rect x="4" y="8" width="16" height="11" rx="2.5"/><path d="M16 13.5h.01"/></svg>`,
  credential: html`<svg width="22" height="22" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false"><rect x="2.5" y="5" width="19" height="14" rx="2.5"/><circle cx="8.5" cy="11" r="2"/><path d="M5.5 16c.6-1.5 1.7-2.2 3-2.2s2.4.7 3 2.2"/><path d="M14 10h4.5"/><path d="M14 13.5h3"/></svg>`,
  copy: html`<svg ${ICON_ATTRS}><rect x="9" y="9" width="11" height="11" rx="2"/><path d="M5 15V6a2 2 0 012-2h9"/></svg>`,
  dot: html`<svg width="16" height="16" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2.4" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false"><path d="M6 12.5l4 4L18 8"/></svg>`,
};

const PROMPT_CSS = readAsset('prompt.css');
const PROMPT_SCRIPT = readAsset('prompt.js');

function renderCredential(t: Texts, kind: PromptView['kind'], c: PromptCredentialType): SafeHtml {
  const name = c.displayName && c.displayName.trim() ? c.displayName : humanizeAttribute(c.name);
  const attributes = Array.isArray(c.attributes) ? c.attributes : [];
  const labelOf = (a: string) => (c.labels && Object.hasOwn(c.labels, a) && c.labels[a].trim() ? c.labels[a] : humanizeAttribute(a));
  let attrs: SafeHtml | '';
  if (kind !== 'issuance') {
    const optional = Array.isArray(c.optional) ? c.optional : [];
    const list = (names: string[], optionalList: boolean) =>
      html`<ul class="attrs${optionalList ? ' attrs--optional' : ''}">${names.map((a) => html`<li data-attribute="${a}"${optionalList ? html` data-optional` : ''}>${ICONS.dot}<span>${labelOf(a)}</span></li>`)}</ul>`;
    // the required attributes, then apart the optional ones: what is shared depends on the credential
    if (attributes.length > 0) {
      attrs = html`<p class="cred-sub">${words(t, 'prompt.willShare')}</p>
${list(attributes, false)}${optional.length > 0 ? html`<p class="cred-sub">${words(t, 'prompt.willShareIfPresent')}</p>
${list(optional, true)}` : ''}`;
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

/** Who asks, and what for. */
function promptHead(t: Texts, clientName: string, heading: string, lead: SafeHtml, logoHref?: string): SafeHtml {
  const badge = logoHref ? html`<img class="client-logo" src="${logoHref}" alt="">` : html`<span class="avatar" aria-hidden="true">${initial(clientName)}</span>`;
  return html`<header class="prompt-head">
<p class="eyebrow">${badge}<span>${withMarkup(t, 'page.requestFrom', { client: clientName }, { client: strong })}</span></p>
<h1>${heading}</h1>
<p class="lead">${lead}</p>
</header>`;
}

const walletHint = (t: Texts) => html`<p class="hint" id="wallet-hint" hidden>${words(t, 'prompt.walletHint')}</p>`;

/** The progress box the script updates (assets/prompt.js), with a Continue link for pages without JavaScript. */
function statusSection(t: Texts, o: { nonce: string; expiresAt: number; continueHref: string; waiting: string; hint?: SafeHtml }): SafeHtml {
  const remaining = Math.max(0, Math.round(Number(o.expiresAt) - Date.now()));
  const expiresIso = Number.isFinite(Number(o.expiresAt)) ? new Date(Number(o.expiresAt)).toISOString() : '';
  return html`<section class="prompt-status" id="progress" aria-label="${t.t('progress.label')}">
<div class="alert" id="error" role="alert"></div>
<div class="status">
<span class="status-icon" aria-hidden="true"><span class="spinner"></span>${ICONS.check}${ICONS.warn}${ICONS.error}</span>
<div class="status-body">
<p class="status-text" id="status-text" role="status" aria-live="polite" aria-atomic="true">${o.waiting}</p>
<p class="expiry" id="expiry">${withMarkup(t, 'progress.expiresIn', { time: formatRemaining(remaining) }, { time: (time) => html`<time id="countdown" datetime="${expiresIso}">${time}</time>` })}</p>
</div>
</div>
<p class="visually-hidden" id="expiry-announce" aria-live="polite"></p>
${o.hint ?? ''}
<noscript><style nonce="${o.nonce}">.prompt .status { display: none; }</style><div class="noscript"><p>${words(t, 'progress.noscript')} ${expiresInWords(t, remaining)}</p><a class="button button--secondary" href="${o.continueHref}">${words(t, 'progress.continue')}</a></div></noscript>
</section>`;
}

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
  const heading = t.t(kindTexts.heading);
  const lead = withMarkup(t, kindTexts.lead, { client: v.clientName }, { client: strong });
  const types = Array.isArray(v.credentialTypes) ? v.credentialTypes : [];
  const detailsLabel = issuance ? t.t('prompt.credentials', { count: types.length }) : t.t('prompt.requested');

  const pinLength = v.pin && Number.isInteger(v.pin.length) && v.pin.length > 0 ? v.pin.length : undefined;
  const pinNotice =
    issuance &&
    v.pin &&
    html`<div class="notice notice--info" id="pin-notice">${ICONS.key}<p><strong>${words(t, 'prompt.pin.title')}</strong> ${
      pinLength !== undefined ? t.t('prompt.pin.text', { length: pinLength, client: v.clientName }) : t.t('prompt.pin.textNoLength', { client: v.clientName })
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
<a class="button button--primary wallet-link" id="wallet-link" href="${walletHref}">${ICONS.wallet}<span class="button-label">${words(t, 'prompt.openWallet')}</span></a>
<button type="button" class="button button--secondary copy-link" id="copy-link" data-link="${walletHref}" hidden>${ICONS.copy}<span class="button-label">${words(t, 'prompt.copyLink')}</span></button>
<p class="copy-status" id="copy-status" role="status" aria-live="polite"></p>
</section>
${statusSection(t, { nonce: v.nonce, expiresAt: v.expiresAt, continueHref, waiting, hint: walletHint(t) })}
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

/** D12, VerifiedIdentity_Other: the prompt of a journey through another identity provider. */
export interface IdentityJourneyView {
  nonce: string;
  lang?: string;
  texts?: Texts;
  brand?: BrandView;
  clientLogoHref?: string;
  clientName: string;
  /** the other provider's display name (config), in the page's language */
  providerName: string;
  /** this service's step that sends the browser to the provider */
  startUrl: string;
  /** non-PAR: our authorise URL with client_id and context_id, for continuing in another browser */
  resumeUri?: string;
  /** An <svg> of `resumeUri` (views/qrSvg.ts); inserted as is (trusted). */
  resumeQrSvg?: string;
  statusUrl: string;
  continueUrl: string;
  /** epoch milliseconds */
  expiresAt: number;
}

export function renderIdentityJourneyBytes(v: IdentityJourneyView): Buffer {
  const t = v.texts ?? ENGLISH;
  const heading = t.t('journey.heading');
  const remaining = Math.max(0, Math.round(Number(v.expiresAt) - Date.now()));
  const continueHref = safeHref(v.continueUrl);
  const names = { client: v.clientName, provider: v.providerName };
  const resume = v.resumeUri && v.resumeQrSvg
    ? html`<section class="prompt-scan" aria-labelledby="resume-title">
<div class="divider divider--narrow" aria-hidden="true">${words(t, 'prompt.or')}</div>
<figure class="qr">
<div class="qr-code" role="img" aria-label="${t.t('journey.qrLabel')}">${trusted(inlineSvg(v.resumeQrSvg))}</div>
<figcaption><strong class="qr-title" id="resume-title">${words(t, 'journey.otherDevice')}</strong><span>${words(t, 'journey.qrText')}</span></figcaption>
</figure>
<p class="resume-link"><a id="resume-link" href="${safeHref(v.resumeUri)}" dir="ltr">${v.resumeUri}</a></p>
</section>`
    : '';
  const waiting = t.t('journey.waiting', names);
  const body = html`<main class="card prompt prompt--identity${resume ? '' : ' prompt--single'}" id="prompt" data-state="pending" data-kind="identity_other" data-status-url="${v.statusUrl}" data-continue-url="${continueHref}" data-expires-at="${Number(v.expiresAt)}" data-expires-in="${remaining}" data-text="${scriptTexts(t, v.clientName, waiting)}">
${promptHead(t, v.clientName, heading, withMarkup(t, 'journey.lead', names, { client: strong, provider: strong }), v.clientLogoHref)}
<section class="prompt-details" aria-label="${t.t('journey.section')}">
<a class="button button--primary" id="provider-link" href="${safeHref(v.startUrl)}">${ICONS.credential}<span class="button-label">${t.t('journey.continueWith', names)}</span></a>
</section>
${statusSection(t, { nonce: v.nonce, expiresAt: v.expiresAt, continueHref, waiting })}
${resume}
</main>`;
  return renderLayoutBytes({ nonce: v.nonce, texts: v.texts, lang: v.lang, brand: v.brand, title: t.t('page.title', { heading, client: v.clientName }), body, css: PROMPT_CSS, script: PROMPT_SCRIPT });
}
