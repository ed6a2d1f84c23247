import { describe, expect, it } from 'vitest';
import { ConfigError, validateConfig } from '../../../src/config/load.js';
import { contrastRatio } from '../../../src/rules/contrast.js';
import { brandCss } from '../../../src/ui/ui.js';
import { minimalDoc } from './fixtures.js';

/** Issue 22, Branding: `ui` and per-language texts in the config; colours refused below WCAG AA, with the path and the ratio. */
function problems(doc: Record<string, unknown>): string[] {
  try {
    validateConfig(doc);
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
}

describe('ui in the config', () => {
  it('defaults to English and no brand', () => {
    expect(validateConfig(minimalDoc()).ui).toEqual({ defaultLocale: 'en' });
  });

  it('accepts a brand whose colours pass AA against white', () => {
    const ui = {
      defaultLocale: 'de',
      name: { en: 'Acme', de: 'Acme GmbH' },
      logo: 'logo.svg',
      primaryColor: '#1f5fd1',
      accentColor: '#0b6e4f',
      supportUrl: 'https://acme.example/help',
      privacyUrl: 'https://acme.example/privacy',
    };
    expect(validateConfig({ ...minimalDoc(), ui }).ui).toEqual(ui);
  });

  it('refuses a colour below 4.5:1 against white, naming the path and the ratio', () => {
    const found = problems({ ...minimalDoc(), ui: { primaryColor: '#ffcc00', accentColor: '#777' } });
    expect(found).toContainEqual(
      expect.stringMatching(
        /^ui\.primaryColor: #ffcc00 against white \(#ffffff\) has a contrast ratio of 1\.\d\d:1; WCAG AA needs at least 4\.5:1/,
      ),
    );
    // #777 is the classic just-below case: 4.48:1
    expect(found).toContainEqual(expect.stringMatching(/^ui\.accentColor: #777 .* 4\.48:1/));
  });

  it('refuses what is not a colour, a language tag or an https page', () => {
    const found = problems({
      ...minimalDoc(),
      ui: { primaryColor: 'blue', defaultLocale: 'not a tag', supportUrl: 'http://acme.example/help', extra: 1 },
    });
    expect(found.join('\n')).toMatch(/ui\.primaryColor: must be a colour written #rgb or #rrggbb/);
    expect(found.join('\n')).toMatch(/ui\.defaultLocale: must be a BCP 47 language tag/);
    expect(found.join('\n')).toMatch(/ui\.supportUrl/);
    expect(found.join('\n')).toMatch(/extra/);
  });

  it('takes a credential type name and attribute labels as one string or per language', () => {
    const doc = minimalDoc();
    doc.credentialTypes[0].displayName = { en: 'Employee badge', de: 'Mitarbeiterausweis' };
    doc.credentialTypes[0].attributes.FirstName.label = { en: 'First name', de: 'Vorname' };
    expect(validateConfig(doc).credentialTypes[0].displayName).toEqual({
      en: 'Employee badge',
      de: 'Mitarbeiterausweis',
    });
    doc.credentialTypes[0].displayName = { 'not a tag!': 'x' };
    doc.credentialTypes[0].attributes.FirstName.label = {};
    const found = problems(doc).join('\n');
    expect(found).toMatch(/credentialTypes\[0\] \(name EmployeeBadge\)\.displayName/);
    expect(found).toMatch(/credentialTypes\[0\] \(name EmployeeBadge\)\.attributes\.FirstName\.label/);
  });

  it('takes a client logoUri only over https (http on loopback)', () => {
    const doc = minimalDoc();
    doc.clients[0].logoUri = 'http://evil.example/logo.png';
    expect(problems(doc).join('\n')).toMatch(/clients\[0\] \(clientId hr-portal\)\.logoUri: must be an https URL/);
    doc.clients[0].logoUri = 'https://hr.example.com/logo.png';
    expect(problems(doc)).toEqual([]);
  });
});

describe('contrast (WCAG 2.2)', () => {
  it('measures known pairs', () => {
    expect(contrastRatio('#000000', '#ffffff')).toBeCloseTo(21, 5);
    expect(contrastRatio('#fff', '#fff')).toBeCloseTo(1, 5);
    expect(contrastRatio('#777777', '#ffffff')).toBeCloseTo(4.48, 2);
    expect(contrastRatio('#ffffff', '#767676')).toBeCloseTo(4.54, 2);
  });

  it('the brand reaches the pages as custom properties, light scheme only for text colours', () => {
    expect(brandCss({ defaultLocale: 'en' })).toBeUndefined();
    const css = brandCss({ defaultLocale: 'en', primaryColor: '#0b6e4f', accentColor: '#5b2a86' })!;
    expect(css).toContain('@media not (prefers-color-scheme: dark) { :root { --accent: #0b6e4f;');
    expect(css).toContain('.avatar, .cred-icon { background: #5b2a86; color: #ffffff; }');
  });
});
