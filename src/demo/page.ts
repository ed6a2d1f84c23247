import { randomBytes } from 'node:crypto';
import type { Context } from 'koa';
import { readAsset } from '../interaction/views/assets.js';
import { html, type SafeHtml } from '../interaction/views/html.js';
import { renderLayout } from '../interaction/views/layout.js';

const CSP = (nonce: string) =>
  `default-src 'none'; style-src 'nonce-${nonce}'; img-src data:; form-action 'self'; frame-ancestors 'none'; base-uri 'none'`;

const DEMO_CSS = readAsset('demo.css');

/** A demo page: the layout, the demo's stylesheet and its CSP (no script; styles by nonce). */
export function page(ctx: Context, title: string, body: SafeHtml): void {
  const nonce = randomBytes(16).toString('base64');
  ctx.type = 'text/html; charset=utf-8';
  ctx.set('Content-Security-Policy', CSP(nonce));
  ctx.set('Cache-Control', 'no-store');
  ctx.body = renderLayout({ nonce, title, body: html`<main class="page-main">${body}</main>`, css: DEMO_CSS });
}

/** A result of the relying party's: a title, what it received as JSON, and a way back to the demo's start. */
export function resultPage(
  ctx: Context,
  baseUrl: string,
  title: string,
  data: unknown,
  extra: SafeHtml = html``,
): void {
  page(
    ctx,
    title,
    html`<section class="card demo"><h1>${title}</h1><pre>${JSON.stringify(data, null, 2)}</pre>${extra}<p><a href="${`${baseUrl}/demo`}">Start again</a></p></section>`,
  );
}
