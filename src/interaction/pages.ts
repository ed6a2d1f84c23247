import type { Context } from 'koa';
import { sendPage } from '../http/page.js';
import { pageTexts } from '../ui/ui.js';
import type { MessageId } from '../i18n/en.js';
import { renderMessage } from './views/message.js';
import type { Interaction } from './deps.js';

/** A page of words (catalogue ids), in the holder's language. */
export interface Words {
  title: MessageId;
  message: MessageId;
  values?: Record<string, string>;
}

/** D13: what the holder's browser shows when an External Client flow's wallet step is over: the app continues, not this page. */
export const HANDED_OVER = {
  done: (client: string): Words => ({ title: 'message.doneTitle', message: 'message.done', values: { client } }),
  ended: (client: string): Words => ({ title: 'message.endedTitle', message: 'message.ended', values: { client } }),
};

/** A form of the prompt posted from another site (Origin, Sec-Fetch-Site): refused, nothing changed. */
export const OTHER_SITE: Words = { title: 'message.otherSiteTitle', message: 'message.otherSite' };

export const MOVED: Words = { title: 'message.movedTitle', message: 'progress.moved' };

// the prompt cannot tell an expired request from one never made or opened elsewhere: it claims none of them
export const EXPIRED: Words = { title: 'message.expiredTitle', message: 'message.expired' };

/** The prompt's pages: the one page answer (src/http/page.ts), with its CSP. */
export const page = sendPage;

/** `interaction`: the request's own `ui_locales` choose the language, before the browser's. */
export function messagePage(ctx: Context, status: number, words: Words, interaction?: Interaction): void {
  const { texts, brand } = pageTexts(ctx, interaction?.params.ui_locales);
  page(ctx, status, (nonce) =>
    renderMessage({
      nonce,
      texts,
      brand,
      title: texts.t(words.title),
      message: texts.t(words.message, words.values),
      status,
      saysWhatToDo: true,
    }),
  );
}
