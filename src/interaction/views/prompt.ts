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
import { renderLayout, renderLayoutBytes, type LayoutOptions } from './layout.js';

export interface PromptCredentialType {
  /** Configured credential type name (e.g. `EmployeeBadge`). */
  name: string;
  /** Human-readable name; falls back to a humanised `name`. */
  displayName?: string;
  /** Attribute names: contained in the credential (issuance) or requested (verification). */
  attributes: string[];
  /** The config's labels of attributes (`label`), shown instead of the humanised name. */
  labels?: Record<string, string>;
}

export interface PromptView {
  /** CSP nonce for the inline <style> and <script>. */
  nonce: string;
  lang?: string;
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

function expiresInWords(ms: number): string {
  if (ms <= 0) return 'This request has expired.';
  const minutes = Math.ceil(ms / 60_000);
  if (ms < 60_000) return 'This request expires in less than a minute.';
  return `This request expires in about ${minutes} ${minutes === 1 ? 'minute' : 'minutes'}.`;
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
  dot: html`<svg width="16" height="16" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2.4" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false"><path d="M6 12.5l4 4L18 8"/></svg>`,
};

const PROMPT_CSS = readAsset('prompt.css');
const PROMPT_SCRIPT = readAsset('prompt.js');

function renderCredential(kind: PromptView['kind'], c: PromptCredentialType): SafeHtml {
  const name = c.displayName && c.displayName.trim() ? c.displayName : humanizeAttribute(c.name);
  const attributes = Array.isArray(c.attributes) ? c.attributes : [];
  const labelOf = (a: string) => (c.labels && Object.hasOwn(c.labels, a) && c.labels[a].trim() ? c.labels[a] : humanizeAttribute(a));
  let attrs: SafeHtml | '';
  if (kind !== 'issuance') {
    attrs =
      attributes.length > 0
        ? html`<p class="cred-sub">You will share:</p>
<ul class="attrs">${attributes.map((a) => html`<li data-attribute="${a}">${ICONS.dot}<span>${labelOf(a)}</span></li>`)}</ul>`
        : html`<p class="cred-sub">You will share all information in this credential.</p>`;
  } else {
    attrs =
      attributes.length > 0
        ? html`<p class="cred-sub">Contains</p>
<ul class="chips">${attributes.map((a) => html`<li class="chip" data-attribute="${a}">${labelOf(a)}</li>`)}</ul>`
        : '';
  }
  return html`<li class="cred" data-credential-type="${c.name}">
<span class="cred-icon" aria-hidden="true">${ICONS.credential}</span>
<div class="cred-body"><p class="cred-name">${name}</p>${attrs}</div>
</li>`;
}

/** Who asks, and what for. */
function promptHead(clientName: string, heading: string, lead: SafeHtml): SafeHtml {
  return html`<header class="prompt-head">
<p class="eyebrow"><span class="avatar" aria-hidden="true">${initial(clientName)}</span><span>Request from <strong>${clientName}</strong></span></p>
<h1>${heading}</h1>
<p class="lead">${lead}</p>
</header>`;
}

const WALLET_HINT = html`<p class="hint" id="wallet-hint" hidden>No wallet opened? Make sure a compatible wallet app is installed on this device, or scan the QR code with a wallet on another device.</p>`;

/** The progress box the script updates (assets/prompt.js), with a Continue link for pages without JavaScript. */
function statusSection(o: { nonce: string; expiresAt: number; continueHref: string; waiting: SafeHtml; done: string; hint?: SafeHtml }): SafeHtml {
  const remaining = Math.max(0, Math.round(Number(o.expiresAt) - Date.now()));
  const expiresIso = Number.isFinite(Number(o.expiresAt)) ? new Date(Number(o.expiresAt)).toISOString() : '';
  return html`<section class="prompt-status" id="progress" aria-label="Progress">
<div class="alert" id="error" role="alert"></div>
<div class="status">
<span class="status-icon" aria-hidden="true"><span class="spinner"></span>${ICONS.check}${ICONS.warn}${ICONS.error}</span>
<div class="status-body">
<p class="status-text" id="status-text" role="status" aria-live="polite" aria-atomic="true">${o.waiting}</p>
<p class="expiry" id="expiry">Expires in <time id="countdown" datetime="${expiresIso}">${formatRemaining(remaining)}</time></p>
</div>
</div>
<p class="visually-hidden" id="expiry-announce" aria-live="polite"></p>
${o.hint ?? ''}
<noscript><style nonce="${o.nonce}">.prompt .status { display: none; }</style><div class="noscript"><p>This page updates automatically only with JavaScript. ${o.done}, select Continue. ${expiresInWords(remaining)}</p><a class="button button--secondary" href="${o.continueHref}">Continue</a></div></noscript>
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

function promptLayout(v: PromptView): LayoutOptions {
  const issuance = v.kind === 'issuance';
  const heading = issuance ? 'Add your credential to your wallet' : v.kind === 'identity' ? 'Prove your identity' : 'Share your credential';
  const lead = issuance
    ? html`<strong>${v.clientName}</strong> wants to add this credential to your wallet. You can review it in your wallet before you accept it.`
    : v.kind === 'identity'
      ? html`<strong>${v.clientName}</strong> is asking you to prove who you are with the identity credential in your wallet. You review and approve it in your wallet before anything is shared.`
      : html`<strong>${v.clientName}</strong> is asking to see the following from your wallet. You review and approve it in your wallet before anything is shared.`;
  const types = Array.isArray(v.credentialTypes) ? v.credentialTypes : [];
  const detailsLabel = issuance ? (types.length > 1 ? 'Credentials' : 'Credential') : 'Requested information';

  const pinLength = v.pin && Number.isInteger(v.pin.length) && v.pin.length > 0 ? v.pin.length : undefined;
  const pinNotice =
    issuance &&
    v.pin &&
    html`<div class="notice notice--info" id="pin-notice">${ICONS.key}<p><strong>Have your PIN ready.</strong> Your wallet will ask for ${
      pinLength !== undefined ? html`a ${pinLength}-digit PIN` : 'a PIN'
    }. ${v.clientName} sent it to you separately, for example by e-mail or text message.</p></div>`;

  const remaining = Math.max(0, Math.round(Number(v.expiresAt) - Date.now()));
  const walletHref = safeHref(v.walletUri);
  const continueHref = safeHref(v.continueUrl);

  const body = html`<main class="card prompt prompt--${issuance ? 'issuance' : 'verification'}" id="prompt" data-state="pending" data-kind="${v.kind}" data-client-name="${v.clientName}" data-status-url="${v.statusUrl}" data-continue-url="${continueHref}" data-expires-at="${Number(v.expiresAt)}" data-expires-in="${remaining}"${v.handover ? html` data-handover="true"` : ''}>
${promptHead(v.clientName, heading, lead)}
<section class="prompt-details" aria-labelledby="details-label">
<h2 class="section-label" id="details-label">${detailsLabel}</h2>
<ul class="creds">${types.map((c) => renderCredential(v.kind, c))}</ul>
${pinNotice}
</section>
<section class="prompt-wallet" aria-label="Wallet on this device">
<div class="divider divider--wide" aria-hidden="true">or</div>
<a class="button button--primary wallet-link" id="wallet-link" href="${walletHref}">${ICONS.wallet}<span class="button-label">Open in wallet on this device</span></a>
</section>
${statusSection({ nonce: v.nonce, expiresAt: v.expiresAt, continueHref, waiting: html`Waiting for your wallet&hellip;`, done: 'When your wallet says it is done', hint: WALLET_HINT })}
<section class="prompt-scan" aria-label="Wallet on another device">
<div class="divider divider--narrow" aria-hidden="true">or</div>
<figure class="qr">
<div class="qr-code" role="img" aria-label="QR code for your wallet app" data-wallet-link="${safeHref(v.qrUri ?? v.walletUri)}">${trusted(inlineSvg(v.qrSvg))}</div>
<figcaption><strong class="qr-title">Wallet on another device?</strong><span>Open the wallet app and scan this code.</span></figcaption>
</figure>
</section>
</main>`;

  return {
    nonce: v.nonce,
    lang: v.lang,
    title: `${heading} \u2013 ${v.clientName}`,
    body,
    css: PROMPT_CSS,
    script: PROMPT_SCRIPT,
  };
}

/** D12, VerifiedIdentity_Other: the prompt of a journey through another identity provider. */
export interface IdentityJourneyView {
  nonce: string;
  lang?: string;
  clientName: string;
  /** the other provider's display name (config) */
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
  const heading = 'Verify your identity';
  const remaining = Math.max(0, Math.round(Number(v.expiresAt) - Date.now()));
  const continueHref = safeHref(v.continueUrl);
  const resume = v.resumeUri && v.resumeQrSvg
    ? html`<section class="prompt-scan" aria-labelledby="resume-title">
<div class="divider divider--narrow" aria-hidden="true">or</div>
<figure class="qr">
<div class="qr-code" role="img" aria-label="QR code to continue on another device">${trusted(inlineSvg(v.resumeQrSvg))}</div>
<figcaption><strong class="qr-title" id="resume-title">Continue on another device</strong><span>Scan this code with your phone's camera, or open this link in a browser there:</span></figcaption>
</figure>
<p class="resume-link"><a id="resume-link" href="${safeHref(v.resumeUri)}">${v.resumeUri}</a></p>
</section>`
    : '';
  const body = html`<main class="card prompt prompt--identity${resume ? '' : ' prompt--single'}" id="prompt" data-state="pending" data-kind="identity_other" data-client-name="${v.clientName}" data-status-url="${v.statusUrl}" data-continue-url="${continueHref}" data-expires-at="${Number(v.expiresAt)}" data-expires-in="${remaining}" data-waiting-text="${`Waiting for you to finish with ${v.providerName}\u2026`}">
${promptHead(v.clientName, heading, html`<strong>${v.clientName}</strong> asks you to verify your identity with <strong>${v.providerName}</strong>. You will go to ${v.providerName} and come back here when you are done.`)}
<section class="prompt-details" aria-label="Identity check">
<a class="button button--primary" id="provider-link" href="${safeHref(v.startUrl)}">${ICONS.credential}<span class="button-label">Continue with ${v.providerName}</span></a>
</section>
${statusSection({ nonce: v.nonce, expiresAt: v.expiresAt, continueHref, waiting: html`Waiting for you to finish with ${v.providerName}&hellip;`, done: `When ${v.providerName} is done` })}
${resume}
</main>`;
  return renderLayoutBytes({ nonce: v.nonce, lang: v.lang, title: `${heading} \u2013 ${v.clientName}`, body, css: PROMPT_CSS, script: PROMPT_SCRIPT });
}
