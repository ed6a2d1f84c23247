/**
 * Shared layout of the holder-facing pages: document head, design tokens and base components.
 *
 * Everything is inline (no external assets, works offline) and CSP-friendly: the single <style> and the
 * optional <script> carry the caller's nonce; there are no inline event handlers and no style
 * attributes. The server sends
 *   Content-Security-Policy: default-src 'none'; script-src 'nonce-X'; style-src 'nonce-X';
 *   img-src data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'
 */
import { escapeHtml } from './escape.js';

export interface LayoutOptions {
  /** CSP nonce for the inline <style> and <script>. */
  nonce: string;
  /** BCP 47 language tag of the page; anything malformed falls back to `en`. */
  lang?: string;
  /** Plain-text document title (escaped here). */
  title: string;
  /** Trusted HTML of the page content (the views build it from escaped values). */
  body: string;
  /** Extra trusted CSS appended to the base stylesheet. */
  css?: string;
  /** Trusted inline JavaScript (static, never interpolated). */
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

export const BASE_CSS = `
:root {
  color-scheme: light dark;
  --bg: #f4f6f9;
  --surface: #ffffff;
  --surface-2: #f7f8fa;
  --text: #18202b;
  --muted: #5a6472;
  --border: #e2e6ec;
  --accent: #1f5fd1;
  --accent-hover: #1a4fb8;
  --accent-ink: #ffffff;
  --accent-soft: #eef3fd;
  --accent-soft-ink: #1a4fb8;
  --danger: #b42318;
  --danger-soft: #fef3f2;
  --danger-border: #fecdca;
  --warn: #8a4b06;
  --warn-soft: #fffaeb;
  --warn-border: #fedf89;
  --success: #067647;
  --shadow: 0 1px 2px rgba(16, 24, 40, .06), 0 8px 24px rgba(16, 24, 40, .06);
  --radius: 16px;
  --focus: 0 0 0 3px rgba(31, 95, 209, .35);
}
@media (prefers-color-scheme: dark) {
  :root {
    --bg: #0f1318;
    --surface: #171c23;
    --surface-2: #1d232b;
    --text: #e8ecf1;
    --muted: #9aa4b2;
    --border: #2a313b;
    --accent: #8fb2ff;
    --accent-hover: #a9c4ff;
    --accent-ink: #0b1530;
    --accent-soft: #1c2740;
    --accent-soft-ink: #b7ccff;
    --danger: #ff9c92;
    --danger-soft: #2d1a1a;
    --danger-border: #5c2b27;
    --warn: #fdd38a;
    --warn-soft: #2b2414;
    --warn-border: #5a4716;
    --success: #6fdca6;
    --shadow: 0 1px 2px rgba(0, 0, 0, .3), 0 8px 24px rgba(0, 0, 0, .25);
    --focus: 0 0 0 3px rgba(143, 178, 255, .45);
  }
}
*, *::before, *::after { box-sizing: border-box; }
[hidden] { display: none !important; }
html { -webkit-text-size-adjust: 100%; text-size-adjust: 100%; }
body {
  margin: 0;
  min-height: 100vh;
  background: var(--bg);
  color: var(--text);
  font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, "Noto Sans",
    "Liberation Sans", sans-serif;
  font-size: 16px;
  line-height: 1.5;
  -webkit-font-smoothing: antialiased;
}
h1, h2, p, ul, figure { margin: 0; }
a { color: var(--accent); }
a:focus-visible, button:focus-visible { outline: none; box-shadow: var(--focus); }
strong { font-weight: 600; }
.visually-hidden {
  position: absolute !important; width: 1px; height: 1px; padding: 0; margin: -1px;
  overflow: hidden; clip: rect(0 0 0 0); clip-path: inset(50%); white-space: nowrap; border: 0;
}
.page {
  display: flex; flex-direction: column; align-items: center;
  min-height: 100vh;
  padding: 16px 10px 24px;
}
.card {
  width: 100%;
  max-width: 460px;
  background: var(--surface);
  border: 1px solid var(--border);
  border-radius: var(--radius);
  box-shadow: var(--shadow);
  padding: 24px 18px;
}
.foot {
  max-width: 460px;
  margin-top: 16px;
  padding: 0 8px;
  color: var(--muted);
  font-size: 13px;
  text-align: center;
}
.foot svg { vertical-align: -2px; margin-right: 4px; }
.eyebrow {
  display: flex; align-items: center; gap: 10px;
  color: var(--muted);
  font-size: 14px;
}
.eyebrow strong { color: var(--text); }
.avatar {
  flex: none;
  display: inline-flex; align-items: center; justify-content: center;
  width: 32px; height: 32px;
  border-radius: 8px;
  background: var(--accent-soft);
  color: var(--accent-soft-ink);
  font-weight: 700; font-size: 15px;
}
h1 {
  font-size: 24px;
  line-height: 1.25;
  font-weight: 700;
  letter-spacing: -.01em;
}
.lead { color: var(--muted); }
.button {
  display: flex; align-items: center; justify-content: center; gap: 8px;
  width: 100%;
  min-height: 52px;
  padding: 12px 16px;
  border-radius: 12px;
  border: 1px solid transparent;
  font: inherit;
  font-weight: 600;
  text-align: center;
  text-decoration: none;
  cursor: pointer;
  transition: background-color .15s ease, border-color .15s ease;
}
.button-label { text-wrap: balance; }
.button--primary { background: var(--accent); color: var(--accent-ink); }
.button--primary:hover { background: var(--accent-hover); }
.button--secondary { background: var(--surface); color: var(--accent); border-color: var(--border); }
.button--secondary:hover { border-color: var(--accent); }
.notice {
  display: flex; gap: 12px; align-items: flex-start;
  padding: 12px 14px;
  border-radius: 12px;
  border: 1px solid var(--border);
  background: var(--surface-2);
  font-size: 15px;
}
.notice svg { flex: none; margin-top: 2px; }
.notice--info { background: var(--accent-soft); border-color: transparent; }
.notice--info svg { color: var(--accent-soft-ink); }
@media (min-width: 480px) {
  .page { padding: 48px 24px; justify-content: center; }
  .card { padding: 32px; }
  h1 { font-size: 26px; }
}
@media (prefers-reduced-motion: reduce) {
  *, *::before, *::after { animation-duration: 0s !important; animation-iteration-count: 1 !important; transition: none !important; }
}
`;

const SHIELD_ICON =
  '<svg width="14" height="14" viewBox="0 0 24 24" fill="none" stroke="currentColor" stroke-width="2" stroke-linecap="round" stroke-linejoin="round" aria-hidden="true" focusable="false"><path d="M12 3l7 3v6c0 4.5-3 7.7-7 9-4-1.3-7-4.5-7-9V6l7-3z"/><path d="M9 12l2 2 4-4"/></svg>';

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
 * Each view's stylesheet (with the base one in front) and script, by the constant the view passes: a
 * handful each. A stylesheet and a script are kept apart, so that equal texts cannot stand for each other.
 */
const stylesheets = new Map<string, Fixed>();
const scripts = new Map<string, Fixed>();
const CACHED_PER_KIND = 64;

function cached(cache: Map<string, Fixed>, key: string, text: () => string): Fixed {
  let f = cache.get(key);
  if (!f) {
    f = new Fixed(text());
    if (cache.size < CACHED_PER_KIND) cache.set(key, f); // the views pass constants; anything else is built per call
  }
  return f;
}

const HEAD_OPEN = new Fixed('<!doctype html>\n<html lang="');
const HEAD_META = new Fixed(`">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1, viewport-fit=cover">
<meta name="robots" content="noindex, nofollow">
<meta name="referrer" content="no-referrer">
<meta name="format-detection" content="telephone=no">
<meta name="color-scheme" content="light dark">
<title>`);
const HEAD_STYLE = new Fixed(`</title>
<link rel="icon" href="${escapeHtml(FAVICON)}">
<style nonce="`);
const ATTRIBUTE_END = new Fixed('">');
const BODY_OPEN = new Fixed(`</style>
</head>
<body>
<div class="page">
`);
const FOOTER = new Fixed(`\n<p class="foot">${SHIELD_ICON}Uses the open OpenID standards for verifiable credentials, so any compatible wallet works.</p>`);
const PAGE_CLOSE = new Fixed('\n</div>');
const SCRIPT_OPEN = new Fixed('\n<script nonce="');
const SCRIPT_CLOSE = new Fixed('</script>');
const DOCUMENT_CLOSE = new Fixed('\n</body>\n</html>\n');

/** The page in order: text made for this request, and pieces fixed at start-up. */
function layoutParts(o: LayoutOptions): (string | Fixed)[] {
  const nonce = escapeHtml(o.nonce);
  const parts: (string | Fixed)[] = [
    HEAD_OPEN,
    escapeHtml(normalizeLang(o.lang)),
    HEAD_META,
    escapeHtml(o.title),
    HEAD_STYLE,
    nonce,
    ATTRIBUTE_END,
    cached(stylesheets, o.css ?? '', () => BASE_CSS + (o.css ?? '')),
    BODY_OPEN,
    o.body,
  ];
  if (o.footer !== false) parts.push(FOOTER);
  parts.push(PAGE_CLOSE);
  const script = o.script;
  if (script) parts.push(SCRIPT_OPEN, nonce, ATTRIBUTE_END, cached(scripts, script, () => script), SCRIPT_CLOSE);
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
 * The same document as `renderLayout`, as the UTF-8 bytes a response carries: only the text made for this
 * request is encoded; the fixed pieces are copied as they were encoded at start-up.
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
