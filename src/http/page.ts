import type { Context } from 'koa';
import { randomBase64 } from '../random.js';

/**
 * The Content-Security-Policy of every HTML page the service renders (the prompt, its message pages, and
 * the error boundary's 500 and 503 pages): scripts and styles only with the page's nonce, images only as
 * data URLs, fetches and form posts only to the service, never framed.
 */
export const pageCsp = (nonce: string): string =>
  `default-src 'none'; script-src 'nonce-${nonce}'; style-src 'nonce-${nonce}'; img-src data: 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

/** The one HTML page answer: a fresh nonce for `render`, the page's CSP (the service's unless given), uncached. */
export function sendPage(
  ctx: Context,
  status: number,
  render: (nonce: string) => string | Buffer,
  csp: (nonce: string) => string = pageCsp,
): void {
  const nonce = randomBase64(16);
  ctx.status = status;
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', csp(nonce));
  ctx.set('Cache-Control', 'no-store');
  ctx.body = render(nonce);
}
