import type { Context } from 'koa';
import { renderMessage } from '../interaction/views/message.js';
import { sendPage } from './page.js';
import { noStore } from './respond.js';

/** A browser (its Accept prefers HTML) rather than an API client, which keeps JSON. */
export const wantsPage = (ctx: Context): boolean => ctx.accepts('json', 'html') === 'html';

/**
 * An error at authorise that cannot go back to the app (D4: answered directly), as a holder's browser
 * gets it: the same status and code as the JSON answer, in plain words, and what to do.
 */
export function sendErrorPage(ctx: Context, status: number, error: string, description: string | undefined): void {
  sendPage(ctx, status, (nonce) =>
    renderMessage({
      nonce,
      status,
      title: 'This request cannot be completed',
      message: "The app that sent you here asked for something this service cannot do, or its link is no longer valid. Go back to the app and start again; if it happens again, tell the app's provider.",
      detail: description ? `${error}: ${description}` : error,
    }),
  );
  noStore(ctx);
}
