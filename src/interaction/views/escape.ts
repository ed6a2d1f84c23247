/**
 * HTML escaping for the server-rendered holder pages. The views do not call it: their `html` templates
 * (html.ts) pass every interpolated value through `escapeHtml`.
 *
 * The output is safe in element content and in quoted attribute values; it is NOT meant for use inside
 * <script> or <style> bodies nor for unquoted attributes (`html` refuses values in those places).
 */

const ENTITIES: Record<string, string> = {
  '&': '&amp;',
  '<': '&lt;',
  '>': '&gt;',
  '"': '&quot;',
  "'": '&#39;',
  '`': '&#96;',
};

/** The HTML specials, and every character outside ASCII (a surrogate pair as one code point). */
const SPECIAL = /[&<>"'`]|[\uD800-\uDBFF][\uDC00-\uDFFF]|[^\x00-\x7F]/g;

/**
 * Escapes a value for HTML text or a quoted attribute. `null` and `undefined` become the empty string;
 * other non-strings are converted with `String()` first.
 *
 * Characters outside ASCII become numeric character references (`ü` → `&#xfc;`), which the browser reads
 * back as the same text. The pages are then pure ASCII: V8 keeps them as one-byte strings, whose UTF-8
 * encoding for the response is a copy, where one character outside Latin-1 anywhere in a page makes
 * the whole page a two-byte string.
 */
export function escapeHtml(v: unknown): string {
  if (v === null || v === undefined) return '';
  const s = typeof v === 'string' ? v : String(v);
  return s.replace(SPECIAL, (c) => ENTITIES[c] ?? `&#x${c.codePointAt(0)!.toString(16)};`);
}

/** Schemes a browser would execute or render as a document: never allowed in an href. */
const UNSAFE_SCHEME = /^(?:javascript|vbscript|data|file|blob):/i;

/**
 * Makes a URL safe to put in an `href` (the result is still escaped, as every value in an `html` template).
 * Wallet URIs use custom schemes (`openid-credential-offer:`, `openid4vp:`, `haip:` …), so this is a
 * deny-list of the schemes that run code or render attacker-supplied documents rather than an
 * allow-list. Control characters and whitespace that browsers strip before parsing are removed before
 * the check. Anything refused becomes `#`.
 */
export function safeHref(url: string): string {
  const probe = String(url).replace(/[\u0000-\u0020\u007f]/g, '');
  if (probe === '' || UNSAFE_SCHEME.test(probe)) return '#';
  return String(url).trim();
}
