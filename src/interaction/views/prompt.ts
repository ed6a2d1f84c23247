/**
 * The holder-facing prompt (D10): where the holder's wallet takes part in an issuance (OpenID4VCI offer)
 * or a verification (OpenID4VP request).
 *
 * Server-rendered HTML; every interpolated value is escaped. The inline script is static: it reads its
 * inputs from escaped data-* attributes, only ever writes text with `textContent`, and polls `statusUrl`
 * (same origin only) for progress. Without JavaScript the page still shows the QR code, the wallet link
 * and a Continue link.
 */
import { escapeHtml, safeHref } from './escape.js';
import { renderLayout, renderLayoutBytes, type LayoutOptions } from './layout.js';

export interface PromptCredentialType {
  /** Configured credential type name (e.g. `EmployeeBadge`). */
  name: string;
  /** Human-readable name; falls back to a humanised `name`. */
  displayName?: string;
  /** Attribute names: contained in the credential (issuance) or requested (verification). */
  attributes: string[];
}

export interface PromptView {
  /** CSP nonce for the inline <style> and <script>. */
  nonce: string;
  lang?: string;
  kind: 'issuance' | 'verification';
  /** Who asks: the relying party's display name. */
  clientName: string;
  credentialTypes: PromptCredentialType[];
  /** `openid-credential-offer://...` or `openid4vp://...` */
  walletUri: string;
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

const ICON_ATTRS =
  'width="20" height="20" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false"';

const ICONS = {
  check: `<svg class="i-check" ${ICON_ATTRS}><circle cx="12" cy="12" r="9"/><path d="M8 12.5l2.7 2.7L16 10"/></svg>`,
  warn: `<svg class="i-warn" ${ICON_ATTRS}><path d="M12 3.5l9.5 16.5h-19z"/><path d="M12 10v4.5"/><path d="M12 17.5h.01"/></svg>`,
  error: `<svg class="i-error" ${ICON_ATTRS}><circle cx="12" cy="12" r="9"/><path d="M12 7.5v5.5"/><path d="M12 16.5h.01"/></svg>`,
  key: `<svg ${ICON_ATTRS}><circle cx="8" cy="15" r="4"/><path d="M11 12l9-9"/><path d="M17 6l3 3"/><path d="M14.5 8.5l2 2"/></svg>`,
  wallet: `<svg ${ICON_ATTRS}><path d="M4 7.5A2.5 2.5 0 016.5 5H18v3"/><rect x="4" y="8" width="16" height="11" rx="2.5"/><path d="M16 13.5h.01"/></svg>`,
  credential: `<svg width="22" height="22" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false"><rect x="2.5" y="5" width="19" height="14" rx="2.5"/><circle cx="8.5" cy="11" r="2"/><path d="M5.5 16c.6-1.5 1.7-2.2 3-2.2s2.4.7 3 2.2"/><path d="M14 10h4.5"/><path d="M14 13.5h3"/></svg>`,
  dot: `<svg width="16" height="16" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2.4" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false"><path d="M6 12.5l4 4L18 8"/></svg>`,
};

const PROMPT_CSS = `
.prompt {
  display: grid;
  gap: 20px;
  grid-template-columns: minmax(0, 1fr);
}
.prompt-head { display: grid; gap: 12px; }
.prompt-details { display: grid; gap: 12px; align-content: start; }
.prompt-wallet { display: grid; gap: 16px; }
.prompt-status { display: grid; gap: 12px; align-content: end; }
.prompt-scan { display: grid; gap: 16px; }
.section-label {
  font-size: 12px; font-weight: 700; letter-spacing: .08em; text-transform: uppercase;
  color: var(--muted);
}
.creds { list-style: none; padding: 0; display: grid; gap: 10px; }
.cred {
  display: flex; gap: 14px; align-items: flex-start;
  padding: 14px;
  border: 1px solid var(--border);
  border-radius: 12px;
  background: var(--surface);
}
.cred-icon {
  flex: none;
  display: flex; align-items: center; justify-content: center;
  width: 44px; height: 32px;
  border-radius: 7px;
  background: var(--accent);
  color: var(--accent-ink);
}
.cred-body { min-width: 0; display: grid; gap: 6px; }
.cred-name { font-weight: 600; overflow-wrap: anywhere; }
.cred-sub { font-size: 13px; color: var(--muted); }
.chips { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 6px; }
.chip {
  padding: 2px 10px;
  border-radius: 999px;
  background: var(--surface-2);
  border: 1px solid var(--border);
  font-size: 13px;
  overflow-wrap: anywhere;
}
.attrs { list-style: none; padding: 0; display: grid; gap: 4px; font-size: 15px; }
.attrs li { display: flex; gap: 8px; align-items: flex-start; overflow-wrap: anywhere; }
.attrs svg { flex: none; margin-top: 4px; color: var(--accent); }
.divider {
  display: flex; align-items: center; gap: 12px;
  color: var(--muted); font-size: 13px;
}
.divider::before, .divider::after { content: ""; flex: 1; height: 1px; background: var(--border); }
.divider--wide { display: none; }
.qr { display: grid; justify-items: center; gap: 12px; text-align: center; }
.qr-code {
  width: 100%; max-width: 236px; aspect-ratio: 1 / 1;
  padding: 10px;
  background: #ffffff;
  border: 1px solid var(--border);
  border-radius: 16px;
  transition: opacity .2s ease, filter .2s ease;
}
.qr-code svg { display: block; width: 100%; height: 100%; }
.qr figcaption { display: grid; gap: 2px; font-size: 14px; color: var(--muted); max-width: 280px; text-wrap: balance; }
.qr-title { color: var(--text); font-size: 15px; }
.status {
  display: flex; gap: 12px; align-items: flex-start;
  padding: 14px 16px;
  border-radius: 12px;
  border: 1px solid var(--border);
  background: var(--surface-2);
  transition: background-color .2s ease, border-color .2s ease;
}
.status-icon {
  flex: none;
  display: flex; align-items: center; justify-content: center;
  width: 22px; height: 22px;
  margin-top: 1px;
}
.status-icon > * { display: none; }
.status-body { min-width: 0; display: grid; gap: 2px; }
.status-text { font-weight: 600; overflow-wrap: anywhere; }
.expiry { font-size: 14px; color: var(--muted); font-variant-numeric: tabular-nums; }
.is-expiring .expiry { color: var(--warn); font-weight: 600; }
.spinner {
  width: 18px; height: 18px;
  border-radius: 50%;
  border: 2.5px solid var(--border);
  border-top-color: var(--accent);
  animation: spin .9s linear infinite;
}
@keyframes spin { to { transform: rotate(360deg); } }
[data-state="pending"] .spinner, [data-state="scanned"] .spinner { display: block; }
[data-state="scanned"] .status { background: var(--accent-soft); border-color: transparent; }
[data-state="scanned"] .status-text { color: var(--accent-soft-ink); }
[data-state="pin_retry"] .i-warn { display: block; color: var(--warn); }
[data-state="pin_retry"] .status { background: var(--warn-soft); border-color: var(--warn-border); }
[data-state="pin_retry"] .status-text { color: var(--warn); }
[data-state="done"] .i-check { display: block; color: var(--success); }
[data-state="done"] .status-text { color: var(--success); }
[data-state="failed"] .i-error, [data-state="expired"] .i-error { display: block; color: var(--danger); }
.alert {
  padding: 14px 16px;
  border-radius: 12px;
  background: var(--danger-soft);
  border: 1px solid var(--danger-border);
  color: var(--danger);
  display: grid; gap: 4px;
  overflow-wrap: anywhere;
}
.alert:empty { display: none; }
.alert-title { font-weight: 700; }
.hint { font-size: 14px; color: var(--muted); }
.noscript { display: grid; gap: 12px; font-size: 14px; color: var(--muted); }
.is-final .qr-code { opacity: .2; filter: grayscale(1) blur(2px); }
.is-final .wallet-link { pointer-events: none; opacity: .45; }
.is-final .prompt-wallet { display: none; }
.is-final .expiry { display: none; }
@media (min-width: 860px) {
  .page .prompt {
    max-width: 960px;
    padding: 40px;
    column-gap: 56px;
    row-gap: 24px;
    grid-template-columns: minmax(0, 1fr) 340px;
    grid-template-rows: auto 1fr auto;
    grid-template-areas: "head scan" "details scan" "status wallet";
  }
  .prompt::before {
    content: "";
    grid-column: 2; grid-row: 1 / -1;
    margin: -40px -40px -40px -28px;
    background: var(--surface-2);
    border-left: 1px solid var(--border);
    border-radius: 0 15px 15px 0;
  }
  .prompt-head { grid-area: head; }
  .prompt-details { grid-area: details; }
  .prompt-status { grid-area: status; }
  .prompt-scan { grid-area: scan; align-content: center; }
  .prompt-wallet { grid-area: wallet; align-content: end; }
  .prompt-wallet .button--primary { background: var(--surface); color: var(--accent); border-color: var(--border); }
  .prompt-wallet .button--primary:hover { border-color: var(--accent); }
  .is-final .prompt-wallet { display: grid; }
  .divider--wide { display: flex; }
  .divider--narrow { display: none; }
  .prompt .qr-code { max-width: 240px; }
  .page .foot { max-width: 960px; }
  h1 { font-size: 28px; }
}
`;

/*
 * The inline script. Static (no interpolation): its inputs come from escaped data-* attributes on #prompt.
 * Do not use backticks or "${" in here: this is a template literal.
 */
const PROMPT_SCRIPT = `
(function () {
  'use strict';
  var root = document.getElementById('prompt');
  if (!root || typeof window.fetch !== 'function') return;

  var statusText = document.getElementById('status-text');
  var errorBox = document.getElementById('error');
  var countdown = document.getElementById('countdown');
  var announce = document.getElementById('expiry-announce');
  var walletLink = document.getElementById('wallet-link');
  var walletHint = document.getElementById('wallet-hint');

  var clientName = root.getAttribute('data-client-name') || '';
  var expiresIn = Number(root.getAttribute('data-expires-in'));
  // Deadline from the server-computed remaining time, so a wrong device clock does not matter.
  var deadline = Date.now() + (isFinite(expiresIn) && expiresIn > 0 ? expiresIn : 0);

  var MIN_DELAY = 1000;
  var MAX_DELAY = 5000;
  var delay = MIN_DELAY;
  var failures = 0;
  var finished = false;
  var expired = false;
  var warned = false;
  var inFlight = null;
  var pollTimer = 0;
  var tickTimer = 0;

  function resolve(u) {
    try { return u ? new URL(u, location.href) : null; } catch (e) { return null; }
  }
  var statusUrl = resolve(root.getAttribute('data-status-url'));
  var canPoll = !!statusUrl && statusUrl.origin === location.origin;

  // where to go once the step is over: the provider's resume URL when the status names one (same origin
  // only), else the continue step, which finishes the authorisation itself
  var next = null;
  function go() {
    var u = next || resolve(root.getAttribute('data-continue-url'));
    if (u && (u.protocol === 'https:' || u.protocol === 'http:')) location.assign(u.href);
  }

  function setState(state, text) {
    root.setAttribute('data-state', state);
    if (statusText.textContent !== text) statusText.textContent = text;
  }

  function finish() {
    finished = true;
    clearTimeout(pollTimer);
    clearTimeout(tickTimer);
    root.classList.add('is-final');
    if (walletLink) {
      walletLink.setAttribute('aria-disabled', 'true');
      walletLink.setAttribute('tabindex', '-1');
    }
    if (walletHint) walletHint.hidden = true;
  }

  function reveal() {
    var progress = document.getElementById('progress');
    if (progress && progress.scrollIntoView) progress.scrollIntoView({ block: 'nearest' });
  }

  function showError(kind, message) {
    var title = kind === 'expired' ? 'This request has expired' : 'Something went wrong';
    var fallback = kind === 'expired'
      ? 'The time to complete this step ran out. Please start again.'
      : 'Your wallet could not complete this step. Please try again.';
    var text = typeof message === 'string' && message.trim() ? message.trim().slice(0, 500) : fallback;
    var h = document.createElement('p');
    h.className = 'alert-title';
    h.textContent = title;
    var p = document.createElement('p');
    p.textContent = text;
    errorBox.textContent = '';
    errorBox.appendChild(h);
    errorBox.appendChild(p);
  }

  function handle(s) {
    if (finished || !s || typeof s.status !== 'string') return;
    switch (s.status) {
      case 'pending':
        setState('pending', 'Waiting for your wallet\\u2026');
        break;
      case 'scanned':
        setState('scanned', 'Wallet connected\\u2026');
        if (walletHint) walletHint.hidden = true;
        break;
      case 'pin_retry':
        var n = s.attemptsLeft;
        setState('pin_retry', typeof n === 'number' && isFinite(n) && n >= 0
          ? 'Wrong PIN. ' + n + (n === 1 ? ' attempt' : ' attempts') + ' left.'
          : 'Wrong PIN. Please try again.');
        break;
      case 'done':
        var resumeAt = resolve(s.next);
        if (resumeAt && resumeAt.origin === location.origin) next = resumeAt;
        finish();
        setState('done', 'Done. Returning you to ' + clientName + '\\u2026');
        reveal();
        setTimeout(go, 600);
        break;
      case 'failed':
      case 'expired':
        finish();
        showError(s.status, s.message);
        setState(s.status, 'Returning you to ' + clientName + '\\u2026');
        reveal();
        setTimeout(go, 3000);
        break;
    }
  }

  function fetchStatus() {
    if (inFlight) return inFlight;
    var ctrl = typeof AbortController === 'function' ? new AbortController() : null;
    var timeout = ctrl ? setTimeout(function () { ctrl.abort(); }, 10000) : 0;
    inFlight = fetch(statusUrl.href, {
      method: 'GET',
      credentials: 'same-origin',
      cache: 'no-store',
      headers: { Accept: 'application/json' },
      signal: ctrl ? ctrl.signal : undefined
    }).then(function (res) {
      return res.json().catch(function () { return null; });
    }).then(function (body) {
      if (!body || typeof body.status !== 'string') throw new Error('unexpected status response');
      failures = 0;
      handle(body);
      return true;
    }).catch(function () {
      failures += 1;
      if (failures >= 2 && !finished) statusText.textContent = 'Connection problem. Trying again\\u2026';
      return false;
    }).then(function (ok) {
      clearTimeout(timeout);
      inFlight = null;
      return ok;
    });
    return inFlight;
  }

  function poll() {
    pollTimer = 0;
    if (finished || expired) return;
    fetchStatus().then(function (ok) {
      if (finished || expired) return;
      delay = ok ? MIN_DELAY : Math.min(delay * 2, MAX_DELAY);
      clearTimeout(pollTimer);
      pollTimer = setTimeout(poll, delay);
    });
  }

  function onExpired() {
    if (expired || finished) return;
    expired = true;
    clearTimeout(pollTimer);
    var last = function () {
      if (finished) return;
      if (!canPoll) { handle({ status: 'expired' }); return; }
      // The countdown reached zero: ask the server once more, then give up locally.
      fetchStatus().then(function () { handle({ status: 'expired' }); });
    };
    if (inFlight) inFlight.then(last); else last();
  }

  function format(ms) {
    var total = Math.max(0, Math.ceil(ms / 1000));
    var h = Math.floor(total / 3600);
    var m = Math.floor((total % 3600) / 60);
    var s = total % 60;
    var ss = (s < 10 ? '0' : '') + s;
    return h > 0 ? h + ':' + (m < 10 ? '0' : '') + m + ':' + ss : m + ':' + ss;
  }

  function tick() {
    clearTimeout(tickTimer);
    if (finished || expired) return;
    var left = deadline - Date.now();
    if (left <= 0) {
      if (countdown) countdown.textContent = '0:00';
      onExpired();
      return;
    }
    if (countdown) countdown.textContent = format(left);
    if (left <= 60000) {
      root.classList.add('is-expiring');
      if (!warned && announce) {
        warned = true;
        announce.textContent = 'Less than a minute left to finish in your wallet.';
      }
    }
    tickTimer = setTimeout(tick, (left % 1000) || 1000);
  }

  if (walletLink && walletHint) {
    walletLink.addEventListener('click', function () {
      if (finished) return;
      setTimeout(function () {
        if (!finished && document.visibilityState === 'visible' && root.getAttribute('data-state') === 'pending') {
          walletHint.hidden = false;
        }
      }, 2500);
    });
  }

  document.addEventListener('visibilitychange', function () {
    if (document.visibilityState !== 'visible' || finished || expired) return;
    tick();
    if (canPoll && !inFlight) { clearTimeout(pollTimer); poll(); }
  });

  // Coming back with the Back button after the redirect: never resume a finished page from the cache.
  window.addEventListener('pageshow', function (e) {
    if (e.persisted) location.reload();
  });

  if (canPoll) poll();
  tick();
})();
`;

function renderCredential(kind: PromptView['kind'], c: PromptCredentialType): string {
  const name = c.displayName && c.displayName.trim() ? c.displayName : humanizeAttribute(c.name);
  const attributes = Array.isArray(c.attributes) ? c.attributes : [];
  let attrs: string;
  if (kind === 'verification') {
    attrs =
      attributes.length > 0
        ? `<p class="cred-sub">You will share:</p>
<ul class="attrs">${attributes
            .map((a) => `<li data-attribute="${escapeHtml(a)}">${ICONS.dot}<span>${escapeHtml(humanizeAttribute(a))}</span></li>`)
            .join('')}</ul>`
        : `<p class="cred-sub">You will share all information in this credential.</p>`;
  } else {
    attrs =
      attributes.length > 0
        ? `<p class="cred-sub">Contains</p>
<ul class="chips">${attributes
            .map((a) => `<li class="chip" data-attribute="${escapeHtml(a)}">${escapeHtml(humanizeAttribute(a))}</li>`)
            .join('')}</ul>`
        : '';
  }
  return `<li class="cred" data-credential-type="${escapeHtml(c.name)}">
<span class="cred-icon" aria-hidden="true">${ICONS.credential}</span>
<div class="cred-body"><p class="cred-name">${escapeHtml(name)}</p>${attrs}</div>
</li>`;
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
  const client = escapeHtml(v.clientName);
  const heading = issuance ? 'Add your credential to your wallet' : 'Share your credential';
  const lead = issuance
    ? `<strong>${client}</strong> wants to add this credential to your wallet. You can review it in your wallet before you accept it.`
    : `<strong>${client}</strong> is asking to see the following from your wallet. You review and approve it in your wallet before anything is shared.`;
  const types = Array.isArray(v.credentialTypes) ? v.credentialTypes : [];
  const detailsLabel = issuance ? (types.length > 1 ? 'Credentials' : 'Credential') : 'Requested information';

  const pinLength = v.pin && Number.isInteger(v.pin.length) && v.pin.length > 0 ? v.pin.length : undefined;
  const pinNotice =
    issuance && v.pin
      ? `<div class="notice notice--info" id="pin-notice">${ICONS.key}<p><strong>Have your PIN ready.</strong> Your wallet will ask for ${
          pinLength !== undefined ? `a ${escapeHtml(pinLength)}-digit PIN` : 'a PIN'
        }. ${client} sent it to you separately, for example by e-mail or text message.</p></div>`
      : '';

  const remaining = Math.max(0, Math.round(Number(v.expiresAt) - Date.now()));
  const expiresIso = Number.isFinite(Number(v.expiresAt)) ? new Date(Number(v.expiresAt)).toISOString() : '';
  const walletHref = escapeHtml(safeHref(v.walletUri));
  const continueHref = escapeHtml(safeHref(v.continueUrl));

  const body = `<main class="card prompt prompt--${issuance ? 'issuance' : 'verification'}" id="prompt" data-state="pending" data-kind="${escapeHtml(
    v.kind,
  )}" data-client-name="${client}" data-status-url="${escapeHtml(v.statusUrl)}" data-continue-url="${continueHref}" data-expires-at="${escapeHtml(
    Number(v.expiresAt),
  )}" data-expires-in="${escapeHtml(remaining)}">
<header class="prompt-head">
<p class="eyebrow"><span class="avatar" aria-hidden="true">${escapeHtml(initial(v.clientName))}</span><span>Request from <strong>${client}</strong></span></p>
<h1>${heading}</h1>
<p class="lead">${lead}</p>
</header>
<section class="prompt-details" aria-labelledby="details-label">
<h2 class="section-label" id="details-label">${detailsLabel}</h2>
<ul class="creds">${types.map((c) => renderCredential(v.kind, c)).join('')}</ul>
${pinNotice}
</section>
<section class="prompt-wallet" aria-label="Wallet on this device">
<div class="divider divider--wide" aria-hidden="true">or</div>
<a class="button button--primary wallet-link" id="wallet-link" href="${walletHref}">${ICONS.wallet}<span class="button-label">Open in wallet on this device</span></a>
</section>
<section class="prompt-status" id="progress" aria-label="Progress">
<div class="alert" id="error" role="alert"></div>
<div class="status">
<span class="status-icon" aria-hidden="true"><span class="spinner"></span>${ICONS.check}${ICONS.warn}${ICONS.error}</span>
<div class="status-body">
<p class="status-text" id="status-text" role="status" aria-live="polite" aria-atomic="true">Waiting for your wallet&hellip;</p>
<p class="expiry" id="expiry">Expires in <time id="countdown" datetime="${escapeHtml(expiresIso)}">${escapeHtml(formatRemaining(remaining))}</time></p>
</div>
</div>
<p class="visually-hidden" id="expiry-announce" aria-live="polite"></p>
<p class="hint" id="wallet-hint" hidden>No wallet opened? Make sure a compatible wallet app is installed on this device, or scan the QR code with a wallet on another device.</p>
<noscript><style nonce="${escapeHtml(v.nonce)}">.prompt .status { display: none; }</style><div class="noscript"><p>This page updates automatically only with JavaScript. When your wallet says it is done, select Continue. ${escapeHtml(
    expiresInWords(remaining),
  )}</p><a class="button button--secondary" href="${continueHref}">Continue</a></div></noscript>
</section>
<section class="prompt-scan" aria-label="Wallet on another device">
<div class="divider divider--narrow" aria-hidden="true">or</div>
<figure class="qr">
<div class="qr-code" role="img" aria-label="QR code for your wallet app">${inlineSvg(v.qrSvg)}</div>
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
