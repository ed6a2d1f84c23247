/** The pieces the prompt pages share (views/prompt.ts, views/identityJourney.ts): who asks, the progress box, icons. */
import { readAsset } from './assets.js';
import { html, type SafeHtml } from './html.js';
import { words } from './words.js';
import type { Texts } from '../../i18n/catalogues.js';
import type { MessageId } from '../../i18n/en.js';

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
export function withMarkup(
  t: Texts,
  id: MessageId,
  values: Record<string, string | number>,
  markup: Record<string, (value: string) => SafeHtml>,
): SafeHtml {
  const names = Object.keys(markup);
  const marked: Record<string, string | number> = { ...values };
  names.forEach((name, i) => (marked[name] = `\u0001${i}\u0002`));
  const parts = t.t(id, marked).split(/\u0001(\d+)\u0002/);
  return html`${parts.map((part, i) => (i % 2 === 0 ? part : markup[names[Number(part)]](String(values[names[Number(part)]] ?? ''))))}`;
}

export const strong = (value: string) => html`<strong>${value}</strong>`;

/** Strips an XML declaration / doctype in front of the trusted QR SVG (they are invalid inside HTML). */
export function inlineSvg(svg: string): string {
  return String(svg)
    .replace(/^\s*<\?xml[^>]*\?>\s*/i, '')
    .replace(/^\s*<!DOCTYPE[^>]*>\s*/i, '');
}

function initial(name: string): string {
  const first = Array.from(name.trim())[0];
  return first ? first.toLocaleUpperCase() : '?';
}

const ICON_ATTRS = html`width="20" height="20" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false"`;

export const ICONS = {
  check: html`<svg class="i-check" ${ICON_ATTRS}><circle cx="12" cy="12" r="9"/><path d="M8 12.5l2.7 2.7L16 10"/></svg>`,
  warn: html`<svg class="i-warn" ${ICON_ATTRS}><path d="M12 3.5l9.5 16.5h-19z"/><path d="M12 10v4.5"/><path d="M12 17.5h.01"/></svg>`,
  error: html`<svg class="i-error" ${ICON_ATTRS}><circle cx="12" cy="12" r="9"/><path d="M12 7.5v5.5"/><path d="M12 16.5h.01"/></svg>`,
  key: html`<svg ${ICON_ATTRS}><circle cx="8" cy="15" r="4"/><path d="M11 12l9-9"/><path d="M17 6l3 3"/><path d="M14.5 8.5l2 2"/></svg>`,
  wallet: html`<svg ${ICON_ATTRS}><path d="M4 7.5A2.5 2.5 0 016.5 5H18v3"/><rect x="4" y="8" width="16" height="11" rx="2.5"/><path d="M16 13.5h.01"/></svg>`,
  credential: html`<svg width="22" height="22" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false"><rect x="2.5" y="5" width="19" height="14" rx="2.5"/><circle cx="8.5" cy="11" r="2"/><path d="M5.5 16c.6-1.5 1.7-2.2 3-2.2s2.4.7 3 2.2"/><path d="M14 10h4.5"/><path d="M14 13.5h3"/></svg>`,
  copy: html`<svg ${ICON_ATTRS}><rect x="9" y="9" width="11" height="11" rx="2"/><path d="M5 15V6a2 2 0 012-2h9"/></svg>`,
  refresh: html`<svg ${ICON_ATTRS}><path d="M20 11a8 8 0 10-2.3 5.7"/><path d="M20 4.5V11h-6.5"/></svg>`,
  dot: html`<svg width="16" height="16" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2.4" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false"><path d="M6 12.5l4 4L18 8"/></svg>`,
};

export const PROMPT_CSS = readAsset('prompt.css');
// the Digital Credentials API's action (views/dcApiParts.ts) runs after it, on the pages that have one
export const PROMPT_SCRIPT = `${readAsset('prompt.js')}\n${readAsset('dcApi.js')}`;

/** Who asks, and what for. */
export function promptHead(t: Texts, clientName: string, heading: string, lead: SafeHtml, logoHref?: string): SafeHtml {
  const badge = logoHref
    ? html`<img class="client-logo" src="${logoHref}" alt="">`
    : html`<span class="avatar" aria-hidden="true">${initial(clientName)}</span>`;
  return html`<header class="prompt-head">
<p class="eyebrow">${badge}<span>${withMarkup(t, 'page.requestFrom', { client: clientName }, { client: strong })}</span></p>
<h1>${heading}</h1>
<p class="lead">${lead}</p>
</header>`;
}

/** The progress box the script updates (assets/prompt.js), with a Continue link for pages without JavaScript. */
export function statusSection(
  t: Texts,
  o: { nonce: string; expiresAt: number; continueHref: string; waiting: string; hint?: SafeHtml; fresh?: SafeHtml },
): SafeHtml {
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
${o.fresh ?? ''}
<noscript><style nonce="${o.nonce}">.prompt .status { display: none; }</style><div class="noscript"><p>${words(t, 'progress.noscript')} ${expiresInWords(t, remaining)}</p><a class="button button--secondary" href="${o.continueHref}">${words(t, 'progress.continue')}</a></div></noscript>
</section>`;
}
