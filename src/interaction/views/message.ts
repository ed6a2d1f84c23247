/**
 * A page a person understands, for errors on the holder-facing side (expired link, unknown request,
 * service unavailable …). It shows only the title and message it is given (escaped): never a stack
 * trace, never internal details. No script.
 */
import { escapeHtml } from './escape.js';
import { renderLayout } from './layout.js';

export interface MessageView {
  /** CSP nonce for the inline <style>. */
  nonce: string;
  title: string;
  message: string;
  /** HTTP status the page is sent with; picks the icon and the advice line. */
  status?: number;
  lang?: string;
}

const ICON_ATTRS =
  'width="28" height="28" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="1.8" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false"';

const ICONS = {
  clock: `<svg ${ICON_ATTRS}><circle cx="12" cy="12" r="9"/><path d="M12 7v5l3 2"/></svg>`,
  alert: `<svg ${ICON_ATTRS}><circle cx="12" cy="12" r="9"/><path d="M12 7.5v5.5"/><path d="M12 16.5h.01"/></svg>`,
  unavailable: `<svg ${ICON_ATTRS}><path d="M7 18a4.5 4.5 0 01-.9-8.9A6 6 0 0117.6 8.4 4.8 4.8 0 0117 18z"/><path d="M12 10.5v3"/><path d="M12 16h.01"/></svg>`,
  info: `<svg ${ICON_ATTRS}><circle cx="12" cy="12" r="9"/><path d="M12 11v5"/><path d="M12 7.5h.01"/></svg>`,
};

const MESSAGE_CSS = `
.message { display: grid; gap: 14px; justify-items: start; }
.message-icon {
  display: flex; align-items: center; justify-content: center;
  width: 52px; height: 52px;
  border-radius: 14px;
  background: var(--accent-soft);
  color: var(--accent-soft-ink);
  margin-bottom: 4px;
}
.message--error .message-icon { background: var(--danger-soft); color: var(--danger); }
.message-text { font-size: 17px; overflow-wrap: anywhere; white-space: pre-line; }
.message-hint { color: var(--muted); font-size: 15px; }
.message-code {
  margin-top: 6px; padding-top: 14px;
  border-top: 1px solid var(--border);
  width: 100%;
  color: var(--muted); font-size: 13px;
  font-variant-numeric: tabular-nums;
}
@media (min-width: 480px) { .message { padding: 40px; } }
`;

function classify(status: number | undefined): { icon: string; hint: string; error: boolean } {
  if (status === undefined || !Number.isInteger(status) || status < 400) {
    return { icon: ICONS.info, hint: '', error: false };
  }
  if (status === 408 || status === 410) {
    return {
      icon: ICONS.clock,
      hint: 'Go back to the app or website you came from and start again.',
      error: false,
    };
  }
  if (status >= 500) {
    return {
      icon: ICONS.unavailable,
      hint: 'This is a problem on our side. Please try again in a few minutes.',
      error: true,
    };
  }
  return {
    icon: ICONS.alert,
    hint: 'Go back to the app or website you came from and start again.',
    error: true,
  };
}

/** Renders an error or information page. */
export function renderMessage(v: MessageView): string {
  const status = typeof v.status === 'number' ? v.status : undefined;
  const c = classify(status);
  const code = status !== undefined && Number.isInteger(status) && status >= 400
    ? `<p class="message-code">Error code ${escapeHtml(status)}</p>`
    : '';
  const body = `<main class="card message${c.error ? ' message--error' : ''}" id="message">
<div class="message-icon" aria-hidden="true">${c.icon}</div>
<h1>${escapeHtml(v.title)}</h1>
<p class="message-text">${escapeHtml(v.message)}</p>
${c.hint ? `<p class="message-hint">${escapeHtml(c.hint)}</p>` : ''}
${code}
</main>`;
  return renderLayout({ nonce: v.nonce, lang: v.lang, title: v.title, body, css: MESSAGE_CSS, footer: false });
}
