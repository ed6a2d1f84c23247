/**
 * Shared layout of the holder-facing pages: document head, design tokens and base components.
 *
 * Everything is inline (no external assets, works offline) and CSP-friendly: the single <style> and the
 * optional <script> carry the caller's nonce; there are no inline event handlers and no style
 * attributes. The server sends
 *   Content-Security-Policy: default-src 'none'; script-src 'nonce-X'; style-src 'nonce-X';
 *   img-src data: 'self'; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'
 * The stylesheets and scripts are files in views/assets/ (assets.ts), inlined as they are.
 */
import { readAsset } from './assets.js';
import { html, trusted, type SafeHtml } from './html.js';
import { words } from './words.js';
import { safeHref } from './escape.js';
import { ENGLISH, type Texts } from '../../i18n/catalogues.js';
import { directionOf } from '../../i18n/negotiate.js';

/** The operator's brand on every holder page (config `ui`, src/ui/ui.ts), in the page's language. */
export interface BrandView {
  name?: string;
  /** where the service serves the logo (same origin) */
  logoHref?: string;
  supportUrl?: string;
  privacyUrl?: string;
  /** the brand's colours as CSS custom properties (built once at start-up from checked colours) */
  css?: string;
}

export interface LayoutOptions {
  /** CSP nonce for the inline <style> and <script>. */
  nonce: string;
  /** The page's language (its messages, `lang` and `dir`); English when not given. */
  texts?: Texts;
  /** BCP 47 language tag of the page, when `texts` is not given; anything malformed falls back to `en`. */
  lang?: string;
  brand?: BrandView;
  /** Plain-text document title (escaped here). */
  title: string;
  /** The page content, made with `html`. */
  body: SafeHtml;
  /** Extra CSS appended to the base stylesheet: the text of an asset (readAsset). */
  css?: string;
  /** Inline JavaScript: the text of an asset (readAsset), never built per request. */
  script?: string;
  /** Show the standards footer line (default true). */
  footer?: boolean;
}

const LANG_TAG = /^[A-Za-z]{2,8}(?:-[A-Za-z0-9]{1,8})*$/;

/** Returns `lang` when it is a well-formed language tag, otherwise `en`. */
export function normalizeLang(lang?: string): string {
  return typeof lang === 'string' && LANG_TAG.test(lang) ? lang : 'en';
}

/** A tiny accent-coloured favicon as a data: URI (allowed by `img-src data:`; avoids a /favicon.ico fetch). */
const FAVICON =
  "data:image/svg+xml,%3Csvg xmlns='http://www.w3.org/2000/svg' viewBox='0 0 32 32'%3E%3Crect width='32' height='32' rx='8' fill='%231f5fd1'/%3E%3Cpath d='M9 16.5l4.5 4.5L23 11.5' fill='none' stroke='%23fff' stroke-width='3.2' stroke-linecap='round' stroke-linejoin='round'/%3E%3C/svg%3E";

const BASE_CSS = readAsset('layout.css');

const SHIELD = html`<svg width="14" height="14" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false"><path d="M12 3l7 3v6c0 4.5-3 7.7-7 9-4-1.3-7-4.5-7-9V6l7-3z"/><path d="M9 12l2 2 4-4"/></svg>`;

function footer(t: Texts, brand: BrandView | undefined, standards: boolean): SafeHtml | '' {
  const links =
    brand && (brand.supportUrl || brand.privacyUrl)
      ? html`<p class="foot-links">${brand.supportUrl && html`<a href="${safeHref(brand.supportUrl)}" rel="noopener">${words(t, 'page.support')}</a>`}${brand.privacyUrl && html`<a href="${safeHref(brand.privacyUrl)}" rel="noopener">${words(t, 'page.privacy')}</a>`}</p>`
      : '';
  if (!standards && !links) return '';
  return html`
<footer class="foot">${standards && html`<p>${SHIELD}${words(t, 'page.footer')}</p>`}${links}</footer>`;
}

function brandHeader(brand: BrandView | undefined): SafeHtml | '' {
  if (!brand || (!brand.name && !brand.logoHref)) return '';
  return html`<header class="brand">${brand.logoHref && html`<img src="${brand.logoHref}" alt="" height="32">`}${brand.name && html`<span>${brand.name}</span>`}</header>
`;
}

/**
 * A piece of every page that is the same on every request: kept as text and as its UTF-8 bytes, so that a
 * page sent as bytes (renderLayoutBytes) copies it instead of joining it into a string and encoding it
 * again (the stylesheet and script are most of a page).
 */
class Fixed {
  readonly bytes: Buffer;
  constructor(readonly text: string) {
    this.bytes = Buffer.from(text, 'utf8');
  }
}

/**
 * Each view's stylesheet (with the base one in front) and script, by the text the view passes: a handful
 * each. A stylesheet and a script are kept apart, so that equal texts cannot stand for each other.
 */
const stylesheets = new Map<string, Fixed>();
const scripts = new Map<string, Fixed>();
const CACHED_PER_KIND = 64;

function cached(cache: Map<string, Fixed>, key: string, text: () => string): Fixed {
  let f = cache.get(key);
  if (!f) {
    f = new Fixed(text());
    if (cache.size < CACHED_PER_KIND) cache.set(key, f); // the views pass their assets; anything else is built per call
  }
  return f;
}

const SCRIPT_CLOSE = new Fixed('</script>');
const DOCUMENT_CLOSE = new Fixed('\n</body>\n</html>\n');

/** The page in order: markup made for this request, and the pieces fixed at start-up between. */
function layoutParts(o: LayoutOptions): (string | Fixed)[] {
  const t = o.texts ?? ENGLISH;
  const lang = o.texts ? o.texts.lang : normalizeLang(o.lang);
  const parts: (string | Fixed)[] = [
    html`<!doctype html>
<html lang="${lang}" dir="${o.texts ? o.texts.dir : directionOf(lang)}">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<meta name="format-detection" content="telephone=no">
<meta name="color-scheme" content="light dark">
<title>${o.title}</title>
<link rel="icon" href="${FAVICON}">
<style nonce="${o.nonce}">`.toString(),
    // the stylesheet on its own lines
    cached(stylesheets, o.css ?? '', () => `\n${BASE_CSS}${o.css ? `\n${o.css}` : ''}`),
    html`${o.brand?.css ? trusted(`\n${o.brand.css}`) : ''}</style>
</head>
<body>
<div class="page">
${brandHeader(o.brand)}${o.body}${footer(t, o.brand, o.footer !== false)}
</div>`.toString(),
  ];
  const script = o.script;
  if (script)
    parts.push(
      html`\n<script nonce="${o.nonce}">`.toString(),
      cached(scripts, script, () => `\n${script}`),
      SCRIPT_CLOSE,
    );
  parts.push(DOCUMENT_CLOSE);
  return parts;
}

/** Renders a complete HTML document around `body`. */
export function renderLayout(o: LayoutOptions): string {
  let out = '';
  for (const part of layoutParts(o)) out += typeof part === 'string' ? part : part.text;
  return out;
}

/**
 * The same document as `renderLayout`, as the UTF-8 bytes a response carries: only the markup made for
 * this request is encoded; the fixed pieces are copied as they were encoded at start-up.
 */
export function renderLayoutBytes(o: LayoutOptions): Buffer {
  const parts = layoutParts(o);
  const chunks = new Array<Buffer>(parts.length);
  let length = 0;
  for (let i = 0; i < parts.length; i++) {
    const part = parts[i];
    const chunk = typeof part === 'string' ? Buffer.from(part, 'utf8') : part.bytes;
    chunks[i] = chunk;
    length += chunk.length;
  }
  return Buffer.concat(chunks, length);
}
