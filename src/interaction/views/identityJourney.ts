import { safeHref } from './escape.js';
import { html, trusted } from './html.js';
import { words } from './words.js';
import { renderLayoutBytes, type BrandView } from './layout.js';
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
import { scriptTexts } from './prompt.js';
import { ENGLISH, type Texts } from '../../i18n/catalogues.js';

/**
 * D12, VerifiedIdentity_Other: the prompt of a journey through another identity provider. It waits for the
 * holder's click, not for a wallet: no wallet footer, and the button's icon inside its label, so that it
 * stays with the label's first line when the provider's name wraps it.
 */
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
  const resume =
    v.resumeUri && v.resumeQrSvg
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
<a class="button button--primary" id="provider-link" href="${safeHref(v.startUrl)}"><span class="button-label">${ICONS.credential}${t.t('journey.continueWith', names)}</span></a>
</section>
${statusSection(t, { nonce: v.nonce, expiresAt: v.expiresAt, continueHref, waiting })}
${resume}
</main>`;
  return renderLayoutBytes({
    nonce: v.nonce,
    footer: false,
    texts: v.texts,
    lang: v.lang,
    brand: v.brand,
    title: t.t('page.title', { heading, client: v.clientName }),
    body,
    css: PROMPT_CSS,
    script: PROMPT_SCRIPT,
  });
}
