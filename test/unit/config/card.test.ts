import { describe, expect, it } from 'vitest';
import { ConfigError, validateConfig } from '../../../src/config/load.js';
import { minimalDoc } from './fixtures.js';

/** Issue 49, "The card" and its bad input: what a misconfigured card gets at start-up, naming its config path. */
function problems(doc: Record<string, unknown>): string[] {
  try {
    validateConfig(doc);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

const PATH = 'credentialTypes[0] (name EmployeeBadge)';

function withCard(card: Record<string, unknown>, displayName?: unknown): Record<string, any> {
  const doc = minimalDoc();
  doc.credentialTypes[0].card = card;
  if (displayName !== undefined) doc.credentialTypes[0].displayName = displayName;
  return doc;
}

describe('a credential type card in the config', () => {
  it('takes a description, a logo with its text, colours and a background image, per language', () => {
    const card = {
      description: { en: 'Shows that you work here', de: 'Zeigt, dass Sie hier arbeiten' },
      logo: { image: 'logos/badge.png', altText: { en: 'Acme logo', de: 'Acme-Logo' } },
      backgroundColor: '#12365f',
      textColor: '#fff',
      backgroundImage: 'https://cdn.example.com/badge-background.png',
    };
    const doc = withCard(card, { en: 'Employee badge', de: 'Mitarbeiterausweis' });
    expect(validateConfig(doc).credentialTypes[0].card).toEqual(card);
  });

  it('refuses text and background colours below WCAG AA (4.5:1), as the pages’ colours are', () => {
    const found = problems(withCard({ backgroundColor: '#777777', textColor: '#ffffff' }));
    expect(found).toContainEqual(
      expect.stringContaining(
        `${PATH}.card.textColor: #ffffff on #777777 has a contrast ratio of 4.48:1; WCAG AA needs at least 4.5:1`,
      ),
    );
    expect(problems(withCard({ backgroundColor: '#12365f', textColor: '#ffffff' }))).toEqual([]);
  });

  it('refuses one colour without the other (their contrast cannot be checked) and what is no colour', () => {
    expect(problems(withCard({ backgroundColor: '#12365f' })).join('\n')).toMatch(
      /card\.textColor: give backgroundColor and textColor together/,
    );
    expect(problems(withCard({ backgroundColor: 'navy', textColor: '#fff' })).join('\n')).toMatch(
      /card\.backgroundColor: must be a colour written #rgb or #rrggbb/,
    );
  });

  it('refuses a card whose texts are not given in the same languages, naming the text and the language', () => {
    const found = problems(
      withCard(
        {
          description: { en: 'Shows that you work here', de: 'Zeigt, dass Sie hier arbeiten' },
          logo: { image: 'l.png', altText: 'Logo' },
        },
        { en: 'Employee badge', de: 'Mitarbeiterausweis', fr: 'Badge d’employé' },
      ),
    ).join('\n');
    expect(found).toMatch(/card\.description: has no text in fr, which the card's other texts are given in/);
    // one string stands for every language
    expect(found).not.toMatch(/altText/);
    expect(found).not.toMatch(/displayName/);
  });

  it('refuses an image that is not a file or an https URL', () => {
    for (const image of [
      'ftp://cdn.example.com/logo.png',
      'http://cdn.example.com/logo.png',
      'https://',
      'https://user:pw@cdn.example.com/l.png',
      'javascript:alert(1)',
    ]) {
      expect(problems(withCard({ logo: { image } })).join('\n'), image).toMatch(
        /card\.logo\.image: must be a file \(relative to the config file\) or an https URL/,
      );
    }
    expect(problems(withCard({ logo: { image: 'http://127.0.0.1:8080/logo.png' } }))).toEqual([]);
    expect(problems(withCard({ backgroundImage: 'C:\\logos\\badge.png' }))).toEqual([]);
  });

  it('refuses a 1 MB display text and a text in too many languages, with the path (never more than a line of it)', () => {
    const huge = 'x'.repeat(1024 * 1024);
    const found = problems(withCard({ description: huge, logo: { image: 'l.png', altText: huge } }, huge));
    expect(found.join('\n')).toMatch(/card\.description: .*500 characters/);
    expect(found.join('\n')).toMatch(/card\.logo\.altText: .*200 characters/);
    expect(found.join('\n')).toMatch(/\.displayName: .*200 characters/);
    expect(found.join('\n').length).toBeLessThan(4096);
    // 65 well-formed language subtags: aa, ab, ... ck
    const tags = Array.from({ length: 65 }, (_, i) => String.fromCharCode(97 + Math.floor(i / 26), 97 + (i % 26)));
    const many = Object.fromEntries(tags.map((tag) => [tag, 'text']));
    expect(problems(withCard({ description: many })).join('\n')).toMatch(
      /card\.description: must give the text in at most 64 languages/,
    );
  });

  it('refuses keys it does not know', () => {
    expect(problems(withCard({ logo: { image: 'l.png', uri: 'x' }, colour: '#fff' })).join('\n')).toMatch(/colour/);
  });
});
