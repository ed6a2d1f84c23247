import type { Context } from 'koa';
import { renderMessage } from '../interaction/views/message.js';
import { sendPage } from './page.js';
import { pageTexts } from '../ui/ui.js';
import { noStore } from './respond.js';

/** A browser (its Accept prefers HTML) rather than an API client, which keeps JSON. */
export const wantsPage = (ctx: Context): boolean => ctx.accepts('json', 'html') === 'html';

/**
 * An error at authorise that cannot go back to the app (D4: answered directly), as a holder's browser
 * gets it: the same status and code as the JSON answer, in plain words, and what to do.
 */
export function sendErrorPage(ctx: Context, status: number, error: string, description: string | undefined): void {
  // the request's own ui_locales first, as on the prompt (a request_uri's pushed ones are not looked up for an error)
  const uiLocales = (ctx.query as Record<string, unknown>).ui_locales;
  const { texts, brand } = pageTexts(ctx, typeof uiLocales === 'string' ? uiLocales : undefined);
  sendPage(ctx, status, (nonce) =>
    renderMessage({
      nonce,
      texts,
      brand,
      status,
      saysWhatToDo: true,
      title: texts.t('message.authorizeTitle'),
      message: texts.t('message.authorize'),
      detail: description ? `${error}: ${description}` : error,
    }),
  );
  noStore(ctx);
}
