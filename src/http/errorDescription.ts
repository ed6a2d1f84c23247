/**
 * RFC 6749 §4.1.2.1 and §5.2: `error_description` holds only %x20-21 / %x23-5B / %x5D-7E (printable
 * ASCII without `"` and `\`). Every description that leaves the service (a redirect to a relying party,
 * a JSON error, a webhook event) passes through `safeErrorDescription`, so that no text a wallet or
 * credential put into one (quotes, markup's line breaks, bidi controls, megabytes) reaches a client as is,
 * nor overflows a redirect's Location.
 */

/** Long enough for any of our rules, short enough for any redirect URL. */
export const MAX_ERROR_DESCRIPTION = 300;

const ELLIPSIS = '...';
const FALLBACK = 'the request was refused';

/** Characters our own texts use, written in the allowed set; any other outside it becomes `?`. */
const REPLACEMENTS: Record<string, string> = {
  '"': "'",
  '\\': '/',
  '§': 'section ',
  '\u2018': "'",
  '\u2019': "'",
  '\u201C': "'",
  '\u201D': "'",
  '\u2013': '-',
  '\u2014': '-',
  '\u2026': ELLIPSIS,
};

const allowed = (c: number) => c === 0x20 || c === 0x21 || (c >= 0x23 && c <= 0x5b) || (c >= 0x5d && c <= 0x7e);
/** whitespace and line breaks: a space, so words stay apart */
const SPACE = /^\s$/u;

/**
 * `text` in the RFC's character set: known typographic characters written out, whitespace (CR, LF, tabs)
 * as one space, anything else (controls, bidi overrides, other scripts) as `?`; at most
 * MAX_ERROR_DESCRIPTION characters, a cut one ending in `...`. Never empty.
 */
export function safeErrorDescription(text: string): string {
  let out = '';
  let cut = false;
  // by code point, so that a character outside the BMP becomes one `?`; spaces collapse as they come
  for (const ch of text) {
    const mapped = allowed(ch.codePointAt(0)!) ? ch : (REPLACEMENTS[ch] ?? (SPACE.test(ch) ? ' ' : '?'));
    out += mapped === ' ' && (out === '' || out.endsWith(' ')) ? '' : mapped;
    if (out.trimEnd().length > MAX_ERROR_DESCRIPTION) {
      cut = true;
      break;
    }
  }
  out = out.trimEnd();
  if (cut) out = `${out.slice(0, MAX_ERROR_DESCRIPTION - ELLIPSIS.length).trimEnd()}${ELLIPSIS}`;
  return out || FALLBACK;
}
