/**
 * A page a person understands, for errors on the holder-facing side (expired link, unknown request,
 * service unavailable …). It shows only the title and message it is given (escaped): never a stack
 * trace, never internal details. No script.
 */
import { readAsset } from './assets.js';
import { html, type SafeHtml } from './html.js';
import { renderLayout, type BrandView } from './layout.js';
import { safeHref } from './escape.js';
import { ENGLISH, type Texts } from '../../i18n/catalogues.js';

export interface MessageView {
  /** CSP nonce for the inline <style>. */
  nonce: string;
  title: string;
  message: string;
  /** HTTP status the page is sent with; picks the icon and the advice line. */
  status?: number;
  lang?: string;
  /** the page's language; English when not given */
  texts?: Texts;
  brand?: BrandView;
  /** the message already says what to do: no advice line under it (when not given, English wording decides) */
  saysWhatToDo?: boolean;
  /** a technical detail for whoever the holder asks for help (e.g. the error code and its description) */
  detail?: string;
  /** a link onwards (the page is also sent with a Refresh header to it) */
  next?: { href: string; label: string };
}

const ICON_ATTRS = html`width="28" height="28" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false"`;

const ICONS = {
  clock: html`<svg ${ICON_ATTRS}><circle cx="12" cy="12" r="9"/><path d="M12 7v5l3 2"/></svg>`,
  alert: html`<svg ${ICON_ATTRS}><circle cx="12" cy="12" r="9"/><path d="M12 7.5v5.5"/><path d="M12 16.5h.01"/></svg>`,
  unavailable: html`<svg ${ICON_ATTRS}><path d="M7 18a4.5 4.5 0 01-.9-8.9A6 6 0 0117.6 8.4 4.8 4.8 0 0117 18z"/><path d="M12 10.5v3"/><path d="M12 16h.01"/></svg>`,
  info: html`<svg ${ICON_ATTRS}><circle cx="12" cy="12" r="9"/><path d="M12 11v5"/><path d="M12 7.5h.01"/></svg>`,
};

const MESSAGE_CSS = readAsset('message.css');

function classify(status: number | undefined, t: Texts): { icon: SafeHtml; hint: string; error: boolean } {
  if (status === undefined || !Number.isInteger(status) || status < 400) {
    return { icon: ICONS.info, hint: '', error: false };
  }
  if (status === 408 || status === 410) {
    return {
      icon: ICONS.clock,
      hint: t.t('message.hintStartAgain'),
      error: false,
    };
  }
  if (status >= 500) {
    return {
      icon: ICONS.unavailable,
      hint: t.t('message.hintOurSide'),
      error: true,
    };
  }
  return {
    icon: ICONS.alert,
    hint: t.t('message.hintStartAgain'),
    error: true,
  };
}

/** A message that already says what to do is not followed by the generic advice (it would say it twice). */
const SAYS_WHAT_TO_DO = /\b(start again|try again)\b/i;

/** Renders an error or information page. */
export function renderMessage(v: MessageView): string {
  const status = typeof v.status === 'number' ? v.status : undefined;
  const t = v.texts ?? ENGLISH;
  const c = classify(status, t);
  const code =
    status !== undefined &&
    Number.isInteger(status) &&
    status >= 400 &&
    html`<p class="message-code">${t.t('message.code', { status })}${v.detail ? ` (${v.detail})` : ''}</p>`;
  const advice = c.hint && !(v.saysWhatToDo ?? SAYS_WHAT_TO_DO.test(v.message));
  const body = html`<main class="card message${c.error ? ' message--error' : ''}" id="message">
<div class="message-icon" aria-hidden="true">${c.icon}</div>
<h1>${v.title}</h1>
<p class="message-text">${v.message}</p>
${advice && html`<p class="message-hint">${c.hint}</p>`}
${v.next && html`<p><a class="button button--primary" id="next" href="${safeHref(v.next.href)}">${v.next.label}</a></p>`}
${code}
</main>`;
  return renderLayout({
    nonce: v.nonce,
    texts: v.texts,
    lang: v.lang,
    brand: v.brand,
    title: v.title,
    body,
    css: MESSAGE_CSS,
    footer: false,
  });
}
