import { match } from '@formatjs/intl-localematcher';

/** One well-formed language tag, canonical (`de-ch` → `de-CH`), or undefined. */
export function canonicalTag(tag: string): string | undefined {
  if (!tag || tag === '*' || tag.length > 35) return undefined;
  try {
    return Intl.getCanonicalLocales(tag)[0];
  } catch {
    return undefined;
  }
}

/** At most this many tags are looked at, from `ui_locales` and from `Accept-Language` each. */
const MAX_TAGS = 12;

/**
 * The page's language: the first of the request's `ui_locales` (OIDC Core §3.1.2.1, space-separated, in
 * order of preference) that a catalogue serves, then the first of the browser's `Accept-Language` (as
 * koa orders them by q), then the configured default. A regional tag falls back to its language
 * (`de-AT` → `de`); malformed tags are skipped.
 */
export function chooseLocale(
  uiLocales: unknown,
  acceptLanguages: readonly string[],
  available: readonly string[],
  fallback: string,
): string {
  const fromUi = typeof uiLocales === 'string' ? uiLocales.split(' ').filter(Boolean).slice(0, MAX_TAGS) : [];
  const requested = [...fromUi, ...acceptLanguages.slice(0, MAX_TAGS)]
    .map(canonicalTag)
    .filter((t): t is string => t !== undefined);
  if (requested.length === 0) return fallback;
  return match(requested, available, fallback, { algorithm: 'lookup' });
}

/** Languages and scripts written right to left. */
const RTL_LANGUAGES = new Set([
  'ar',
  'arc',
  'ckb',
  'dv',
  'fa',
  'he',
  'iw',
  'ks',
  'ku',
  'nqo',
  'ps',
  'sd',
  'syr',
  'ug',
  'ur',
  'yi',
]);
const RTL_SCRIPTS = new Set(['Adlm', 'Arab', 'Hebr', 'Nkoo', 'Rohg', 'Syrc', 'Thaa']);
const LTR_SCRIPTS_OF_RTL_LANGUAGES = new Set(['Latn', 'Cyrl']);

const directions = new Map<string, 'ltr' | 'rtl'>();

/** `rtl` for a language written right to left (its script, when the tag names one, decides). */
export function directionOf(locale: string): 'ltr' | 'rtl' {
  let dir = directions.get(locale);
  if (!dir) {
    dir = findDirection(locale);
    if (directions.size < 256) directions.set(locale, dir);
  }
  return dir;
}

function findDirection(locale: string): 'ltr' | 'rtl' {
  try {
    const l = new Intl.Locale(locale);
    if (l.script) return RTL_SCRIPTS.has(l.script) ? 'rtl' : 'ltr';
    return RTL_LANGUAGES.has(l.language) && !LTR_SCRIPTS_OF_RTL_LANGUAGES.has(l.maximize().script ?? '')
      ? 'rtl'
      : 'ltr';
  } catch {
    return 'ltr';
  }
}
