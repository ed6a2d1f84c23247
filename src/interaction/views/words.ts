import type { Texts } from '../../i18n/catalogues.js';
import type { MessageId } from '../../i18n/en.js';
import { html, type SafeHtml } from './html.js';

const escaped = new WeakMap<Texts, Map<MessageId, SafeHtml>>();

/**
 * A message without arguments as element content, escaped once per language (most of a page's words).
 * Not for attribute values: `html` escapes markup put there again.
 */
export function words(t: Texts, id: MessageId): SafeHtml {
  let forLanguage = escaped.get(t);
  if (!forLanguage) escaped.set(t, (forLanguage = new Map()));
  let markup = forLanguage.get(id);
  if (!markup) forLanguage.set(id, (markup = html`${t.t(id)}`));
  return markup;
}
