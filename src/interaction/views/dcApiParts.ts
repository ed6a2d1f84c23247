/** The prompt's Digital Credentials API action (OpenID4VP 1.0 Appendix A): markup that assets/dcApi.js shows where the browser offers it. */
import { html, type SafeHtml } from './html.js';
import { ICONS } from './promptParts.js';
import { words } from './words.js';
import type { Texts } from '../../i18n/catalogues.js';

/**
 * "Use a wallet on this device", hidden: the script reveals it only where `DigitalCredential` allows one of
 * the protocols the service offers, so elsewhere the page is the link and the QR code alone. `url` is the
 * prompt's `/dc-api` (its requests by GET, the answer by POST).
 */
export function dcApiAction(t: Texts, url: string): SafeHtml {
  const texts = JSON.stringify({
    checking: t.t('prompt.dcApi.checking'),
    declined: t.t('prompt.dcApi.declined'),
    unavailable: t.t('prompt.dcApi.unavailable'),
  });
  return html`<div class="dc-api" id="dc-api" data-url="${url}" data-text="${texts}" hidden>
<button type="button" class="button button--primary dc-api-button" id="dc-api-button"><span class="button-label">${ICONS.wallet}${words(t, 'prompt.dcApi.use')}</span></button>
<p class="copy-status dc-api-status" id="dc-api-status" role="status" aria-live="polite"></p>
</div>`;
}
