import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import {
  Catalogues,
  CatalogueError,
  ENGLISH,
  pickText,
  readCatalogue,
  SHIPPED_LOCALES,
  textsOf,
} from '../../../src/i18n/catalogues.js';
import { EN } from '../../../src/i18n/en.js';
import { chooseLocale, directionOf } from '../../../src/i18n/negotiate.js';

/** Issue 22, Languages: catalogues as files, ICU messages, chosen by ui_locales, then Accept-Language, then ui.defaultLocale. */
const shipped = (tag: string) => join(SHIPPED_LOCALES, `${tag}.json`);
const RTL_SAMPLE = fileURLToPath(new URL('../../fixtures/locales/ar.json', import.meta.url));

function catalogueFile(content: unknown): string {
  const dir = mkdtempSync(join(tmpdir(), 'vc-locales-'));
  const file = join(dir, 'xx.json');
  writeFileSync(file, typeof content === 'string' ? content : JSON.stringify(content));
  return file;
}

describe('the shipped catalogues', () => {
  for (const [tag, file] of [
    ['de', shipped('de')],
    ['fr', shipped('fr')],
    ['ar', RTL_SAMPLE],
  ] as const) {
    it(`${tag}: translates every message, each a valid ICU message with the English arguments`, () => {
      const messages = readCatalogue(file, tag); // refuses unknown ids, bad ICU, other arguments
      expect(Object.keys(messages).sort()).toEqual(Object.keys(EN).sort());
      // translated, not copied (a title made only of its arguments reads the same in every language)
      for (const [id, text] of Object.entries(messages))
        if (id !== 'page.title') expect(text, id).not.toBe(EN[id as keyof typeof EN]);
    });
  }

  it('words plurals by each language\'s rules ("1 attempt left", "2 attempts left")', () => {
    const c = Catalogues.load('en');
    const en = c.texts('en')!;
    expect(en.t('progress.pinRetry', { attemptsLeft: 1 })).toBe('Wrong PIN. 1 attempt left.');
    expect(en.t('progress.pinRetry', { attemptsLeft: 2 })).toBe('Wrong PIN. 2 attempts left.');
    expect(en.t('progress.pinRetry', { attemptsLeft: 0 })).toBe('Wrong PIN. No attempts left.');
    const de = c.texts('de')!;
    expect(de.t('progress.pinRetry', { attemptsLeft: 1 })).toBe('Falsche PIN. Noch 1 Versuch übrig.');
    expect(de.t('progress.pinRetry', { attemptsLeft: 2 })).toBe('Falsche PIN. Noch 2 Versuche übrig.');
    const fr = c.texts('fr')!;
    expect(fr.t('progress.pinRetry', { attemptsLeft: 1 })).toBe('Code PIN incorrect. Il vous reste 1 tentative.');
    expect(fr.t('progress.pinRetry', { attemptsLeft: 3 })).toBe('Code PIN incorrect. Il vous reste 3 tentatives.');
    expect(en.t('progress.expiresAbout', { minutes: 1 })).toBe('This request expires in about 1 minute.');
    expect(en.t('progress.expiresAbout', { minutes: 5 })).toBe('This request expires in about 5 minutes.');
  });

  it('falls back to English for a message a catalogue does not have', () => {
    const c = new Catalogues(new Map([['de', { 'prompt.or': 'oder' }]]), 'en');
    expect(c.texts('de')!.t('prompt.or')).toBe('oder');
    expect(c.texts('de')!.t('prompt.copyLink')).toBe('Copy link');
  });
});

describe('a catalogue file that is wrong stops the start-up, naming the file and the message', () => {
  it.each([
    ['an unknown message id', { 'prompt.nope': 'x' }, /xx\.json: prompt\.nope: not a message id/],
    ['a message that is not ICU', { 'prompt.or': 'oder {' }, /prompt\.or: not an ICU message/],
    [
      'other arguments than the English',
      { 'page.requestFrom': 'Anfrage von {kunde}' },
      /page\.requestFrom: uses \{kunde\} where the English uses \{client\}/,
    ],
    [
      'a plural over another argument',
      { 'progress.pinRetry': '{n, plural, one {# Versuch} other {# Versuche}}' },
      /uses \{n\} where the English uses \{attemptsLeft\}/,
    ],
    ['an empty message', { 'prompt.or': '  ' }, /prompt\.or: must be a non-empty string/],
    ['not an object', ['x'], /must be a JSON object/],
    ['not JSON', '{"prompt.or": ', /not valid JSON/],
  ])('%s', (_what, content, problem) => {
    expect(() => readCatalogue(catalogueFile(content), 'de')).toThrow(CatalogueError);
    expect(() => readCatalogue(catalogueFile(content), 'de')).toThrow(problem);
  });

  it('a default language without a catalogue', () => {
    expect(() => Catalogues.load('pt')).toThrow(/ui\.defaultLocale: no catalogue for pt/);
  });
});

describe('choosing the language (OIDC Core ui_locales, then Accept-Language, then the default)', () => {
  const available = ['en', 'de', 'fr'];
  it.each([
    ['ui_locales first', 'fr de', ['de'], 'fr'],
    ['the first ui_locales one served', 'ja fr', ['de'], 'fr'],
    ['Accept-Language when ui_locales names none served', 'ja', ['de-DE', 'en'], 'de'],
    ['a region falls back to its language', undefined, ['fr-CA'], 'fr'],
    ['the default when nothing matches', 'ja', ['zh'], 'en'],
    ['the default when nothing is asked', undefined, [], 'en'],
    ['malformed tags are skipped', 'x_y!! de', ['*'], 'de'],
    ['a wildcard is not a language', undefined, ['*'], 'en'],
    ['ui_locales that is not a string is ignored', ['fr'], ['de'], 'de'],
  ])('%s', (_what, ui, accept, expected) => {
    expect(chooseLocale(ui, accept as string[], available, 'en')).toBe(expected);
  });

  it('remembers a choice by ui_locales and the header as sent, parsing the header once', () => {
    const c = Catalogues.load('en');
    let parsed = 0;
    const parse = () => (parsed++, ['fr-FR', 'en']);
    expect(c.chooseFor(undefined, 'fr-FR,en;q=0.5', parse).lang).toBe('fr');
    expect(c.chooseFor(undefined, 'fr-FR,en;q=0.5', parse).lang).toBe('fr');
    expect(parsed).toBe(1);
    expect(c.chooseFor('de', 'fr-FR,en;q=0.5', parse).lang).toBe('de'); // another ui_locales, another choice
    expect(c.chooseFor(['de'], 'fr-FR,en;q=0.5', parse).lang).toBe('fr');
  });

  it('the configured default, not English, when nothing matches', () => {
    expect(chooseLocale(undefined, ['ja'], available, 'de')).toBe('de');
  });

  it('writes Arabic, Hebrew, Persian and Arabic-script tags right to left, the rest left to right', () => {
    for (const tag of ['ar', 'ar-EG', 'he', 'fa', 'ur', 'az-Arab']) expect(directionOf(tag), tag).toBe('rtl');
    for (const tag of ['en', 'de-CH', 'fr', 'ku', 'az', 'ja', 'not a tag']) expect(directionOf(tag), tag).toBe('ltr');
  });
});

describe('texts the config gives per language', () => {
  it('picks the page language, then its base language, then English, then the first given', () => {
    const name = { en: 'Employee badge', de: 'Mitarbeiterausweis' };
    expect(pickText(name, 'de')).toBe('Mitarbeiterausweis');
    expect(pickText(name, 'de-AT')).toBe('Mitarbeiterausweis');
    expect(pickText(name, 'fr')).toBe('Employee badge');
    expect(pickText({ fr: 'Badge' }, 'de')).toBe('Badge');
    expect(pickText('Plain', 'de')).toBe('Plain');
    expect(pickText(undefined, 'de')).toBeUndefined();
  });

  it('lists every language, English first, for metadata', () => {
    expect(textsOf({ de: 'Ausweis', en: 'Badge' }, 'x')).toEqual([
      { locale: 'en', text: 'Badge' },
      { locale: 'de', text: 'Ausweis' },
    ]);
    expect(textsOf(undefined, 'EmployeeBadge')).toEqual([{ locale: 'en', text: 'EmployeeBadge' }]);
  });

  it('the English texts are the built-in catalogue', () => {
    expect(ENGLISH.t('page.requestFrom', { client: 'Acme' })).toBe('Request from Acme');
  });
});
