import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { IntlMessageFormat } from 'intl-messageformat';
import { EN, type MessageId } from './en.js';
import { canonicalTag, chooseLocale, directionOf } from './negotiate.js';

/** A message to a holder, kept until the page it is shown on knows the holder's language. */
export interface Say {
  id: MessageId;
  values?: Record<string, string | number>;
}

export const say = (id: MessageId, values?: Say['values']): Say => (values ? { id, values } : { id });

/** A status's message both ways: in English (for the relying party and the logs) and as words for the holder's page. */
export const said = (words: Say): { message: string; say: Say } => ({ message: ENGLISH.say(words), say: words });

/** Catalogues that come with the service (`locales/<tag>.json` at the top of the repository). */
export const SHIPPED_LOCALES = fileURLToPath(new URL('../../locales/', import.meta.url));

/** A catalogue file's limit: a few hundred short messages. */
const MAX_FILE_BYTES = 256 * 1024;
const FILE_NAME = /^([A-Za-z]{2,8}(?:-[A-Za-z0-9]{1,8})*)\.json$/;

export class CatalogueError extends Error {}

type Messages = Partial<Record<MessageId, string>>;

/** The argument names a message uses (`{client}`, `{n, plural, ...}`), from the parsed message. */
function argumentsOf(ast: unknown, into = new Set<string>()): Set<string> {
  if (Array.isArray(ast)) for (const el of ast) argumentsOf(el, into);
  else if (ast && typeof ast === 'object') {
    const el = ast as {
      type?: number;
      value?: unknown;
      options?: Record<string, { value: unknown }>;
      children?: unknown;
    };
    // argument, number, date, time, select, plural: their `value` is the argument's name
    if (typeof el.value === 'string' && el.type !== undefined && [1, 2, 3, 4, 5, 6].includes(el.type))
      into.add(el.value);
    if (el.options) for (const option of Object.values(el.options)) argumentsOf(option.value, into);
    if (el.children) argumentsOf(el.children, into);
  }
  return into;
}

const sameSet = (a: Set<string>, b: Set<string>) => a.size === b.size && [...a].every((x) => b.has(x));

/**
 * Reads and checks one catalogue: a JSON object of message id → ICU message. Unknown ids, messages that
 * do not parse and messages whose arguments differ from the English are refused with the file and the
 * id, so a translation mistake stops the start-up instead of reaching a holder. Missing ids fall back
 * to English.
 */
export function readCatalogue(file: string, locale: string): Messages {
  const where = (id?: string) => (id ? `${file}: ${id}` : file);
  if (statSync(file).size > MAX_FILE_BYTES) throw new CatalogueError(`${where()}: larger than ${MAX_FILE_BYTES} bytes`);
  let doc: unknown;
  try {
    doc = JSON.parse(readFileSync(file, 'utf8'));
  } catch (err) {
    throw new CatalogueError(`${where()}: not valid JSON (${(err as Error).message})`);
  }
  if (!doc || typeof doc !== 'object' || Array.isArray(doc))
    throw new CatalogueError(`${where()}: must be a JSON object of message id to message`);
  const messages: Messages = {};
  for (const [id, text] of Object.entries(doc)) {
    if (!Object.hasOwn(EN, id))
      throw new CatalogueError(`${where(id)}: not a message id of this service (see src/i18n/en.ts)`);
    if (typeof text !== 'string' || text.trim() === '')
      throw new CatalogueError(`${where(id)}: must be a non-empty string`);
    let ast: unknown;
    try {
      ast = new IntlMessageFormat(text, locale).getAst();
    } catch (err) {
      throw new CatalogueError(`${where(id)}: not an ICU message (${(err as Error).message})`);
    }
    const english = argumentsOf(new IntlMessageFormat(EN[id as MessageId], 'en').getAst());
    const own = argumentsOf(ast);
    if (!sameSet(english, own))
      throw new CatalogueError(
        `${where(id)}: uses {${[...own].join('}, {')}} where the English uses {${[...english].join('}, {')}}`,
      );
    messages[id as MessageId] = text;
  }
  return messages;
}

/** The catalogues of the given directories, later directories overriding earlier ones per language. */
function readDirectories(dirs: readonly string[]): Map<string, Messages> {
  const found = new Map<string, Messages>();
  for (const dir of dirs) {
    let names: string[];
    try {
      names = readdirSync(dir);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT' && dir === SHIPPED_LOCALES) continue;
      throw new CatalogueError(
        `${dir}: cannot read the directory (${(err as NodeJS.ErrnoException).code ?? (err as Error).message})`,
      );
    }
    for (const name of names.sort()) {
      const m = FILE_NAME.exec(name);
      if (!m) continue;
      const file = join(dir, name);
      const locale = canonicalTag(m[1]);
      if (!locale) throw new CatalogueError(`${file}: ${m[1]} is not a language tag`);
      found.set(locale, { ...found.get(locale), ...readCatalogue(file, locale) });
    }
  }
  return found;
}

/** Worded messages with arguments kept per language; past this many the memory starts over. */
const MAX_WORDED = 2048;

/** The texts of one language: messages formatted with ICU (plurals, selects), English where a catalogue has none. */
export class Texts {
  readonly dir: 'ltr' | 'rtl';
  readonly #formats = new Map<MessageId, IntlMessageFormat>();
  /** worded messages: the same few come back on every page (plain ones, the client's name, a PIN length) */
  readonly #worded = new Map<string, string>();

  constructor(
    readonly lang: string,
    readonly messages: Messages = {},
  ) {
    this.dir = directionOf(lang);
  }

  t(id: MessageId, values?: Say['values']): string {
    const key = values === undefined ? id : `${id}\u0000${JSON.stringify(values)}`;
    let text = this.#worded.get(key);
    if (text === undefined) {
      text = this.#format(id, values);
      if (this.#worded.size >= MAX_WORDED) this.#worded.clear();
      this.#worded.set(key, text);
    }
    return text;
  }

  #format(id: MessageId, values: Say['values']): string {
    let f = this.#formats.get(id);
    if (!f) {
      const own = this.messages[id];
      f = own !== undefined ? new IntlMessageFormat(own, this.lang) : new IntlMessageFormat(EN[id], 'en');
      this.#formats.set(id, f);
    }
    return String(f.format(values));
  }

  say(s: Say): string {
    return this.t(s.id, s.values);
  }

  /** A configured text given as one string or per language (`{en: ..., de: ...}`), in this language. */
  pick(text: LocalizedText | undefined): string | undefined {
    return pickText(text, this.lang);
  }
}

/** The English texts: what the relying party and the logs read, and every page's fallback. */
export const ENGLISH = new Texts('en');

export type LocalizedText = string | Record<string, string>;

/** The text for `lang`: its own, then its language's (`de` for `de-CH`), then English, then the first given. */
export function pickText(text: LocalizedText | undefined, lang: string): string | undefined {
  if (text === undefined || typeof text === 'string') return text;
  const base = lang.split('-')[0];
  return text[lang] ?? text[base] ?? text.en ?? Object.values(text)[0];
}

/** Every language a configured text is given in, English first (for metadata that lists them). */
export function textsOf(text: LocalizedText | undefined, fallback: string): { locale: string; text: string }[] {
  if (text === undefined) return [{ locale: 'en', text: fallback }];
  if (typeof text === 'string') return [{ locale: 'en', text }];
  return Object.entries(text)
    .sort(([a], [b]) => (a === 'en' ? -1 : b === 'en' ? 1 : 0))
    .map(([locale, t]) => ({ locale, text: t }));
}

/** The service's languages: English built in, the shipped catalogues, and an operator's directory. */
export class Catalogues {
  readonly locales: string[];
  readonly #texts = new Map<string, Texts>();

  constructor(
    own: Map<string, Messages>,
    readonly defaultLocale: string,
  ) {
    this.#texts.set('en', ENGLISH);
    for (const [locale, messages] of own) this.#texts.set(locale, new Texts(locale, messages));
    this.locales = [...this.#texts.keys()];
    if (!this.#texts.has(defaultLocale))
      throw new CatalogueError(`ui.defaultLocale: no catalogue for ${defaultLocale} (have ${this.locales.join(', ')})`);
  }

  /** `extra`: the operator's directory of catalogues (ui.locales), read after the shipped ones. */
  static load(defaultLocale: string, extra?: string): Catalogues {
    return new Catalogues(readDirectories(extra ? [SHIPPED_LOCALES, extra] : [SHIPPED_LOCALES]), defaultLocale);
  }

  /** The holder's language: `ui_locales`, then `Accept-Language`, then the default (src/i18n/negotiate.ts). */
  choose(uiLocales: unknown, acceptLanguages: readonly string[]): Texts {
    return this.#texts.get(chooseLocale(uiLocales, acceptLanguages, this.locales, this.defaultLocale))!;
  }

  readonly #chosen = new Map<string, Texts>();

  /**
   * `choose` for a request, remembered by its ui_locales and Accept-Language header as sent (browsers send
   * a handful of distinct headers; the header is parsed only the first time).
   */
  chooseFor(uiLocales: unknown, acceptLanguage: string, parse: () => readonly string[]): Texts {
    const key = `${typeof uiLocales === 'string' ? uiLocales : ''}\n${acceptLanguage}`;
    let texts = this.#chosen.get(key);
    if (!texts) {
      texts = this.choose(uiLocales, parse());
      if (this.#chosen.size >= 512) this.#chosen.clear();
      if (key.length <= 512) this.#chosen.set(key, texts);
    }
    return texts;
  }

  texts(locale: string): Texts | undefined {
    return this.#texts.get(locale);
  }
}
