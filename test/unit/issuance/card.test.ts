import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import type { CredentialType } from '../../../src/config/schema.js';
import { Catalogues } from '../../../src/i18n/catalogues.js';
import {
  cardLocales,
  cardSourcesFrom,
  credentialDisplay,
  issuerDisplay,
  PLAIN_CARD_SOURCES,
  sriOf,
  typeMetadataOf,
} from '../../../src/issuance/card.js';
import { credentialConfigurationFor, mdocConfigurationFor } from '../../../src/issuance/credentialConfigurations.js';
import { TypeMetadata } from '../../../src/issuance/typeMetadata.js';

/** Issue 49, "The card": what wallets are told of a type, per language, from the config and the catalogues. */
const LOGO = { bytes: Buffer.from('logo bytes'), path: '/ui/images/logo' };
const BACKGROUND = { bytes: Buffer.from('background bytes'), path: '/ui/images/bg' };

const badge = {
  name: 'EmployeeBadge',
  displayName: { de: 'Mitarbeiterausweis', en: 'Employee badge' },
  validity: 'P365D',
  card: {
    description: { de: 'Zeigt, dass Sie hier arbeiten', en: 'Shows that you work here' },
    logo: { image: './logo.png', altText: 'Acme' },
    backgroundColor: '#12365f',
    textColor: '#ffffff',
    backgroundImage: './bg.png',
  },
  mdoc: { doctype: 'org.example.badge.1', namespace: 'org.example.badge.1' },
  attributes: {
    FirstName: { type: 'string', required: true, label: 'First name' },
    email: { type: 'email', required: false },
  },
} satisfies CredentialType;

const sources = cardSourcesFrom({
  baseUrl: 'https://vc.example.com',
  catalogues: Catalogues.load('en'),
  images: new Map([
    ['./logo.png', LOGO],
    ['./bg.png', BACKGROUND],
  ]),
  issuerName: { en: 'Acme', de: 'Acme GmbH' },
  issuerLogo: LOGO,
});

describe('the card per language', () => {
  it('W3C SRI of bytes: sha256 and base64 (SRI §3.1)', () => {
    expect(sriOf('')).toBe('sha256-47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU=');
    expect(sriOf(LOGO.bytes)).toBe(`sha256-${createHash('sha256').update(LOGO.bytes).digest('base64')}`);
  });

  it('is shown in every language its texts are given in, the default language first', () => {
    expect(cardLocales(badge, 'en')).toEqual(['en', 'de']);
    expect(cardLocales(badge, 'fr')).toEqual(['de', 'en']);
    expect(cardLocales({ ...badge, displayName: 'Badge', card: {} }, 'fr')).toEqual(['fr']);
  });

  it('OpenID4VCI 1.0 §12.2.4: name, description, logo and its text, colours and background image per language', () => {
    expect(credentialDisplay(badge, sources)).toEqual([
      {
        name: 'Employee badge',
        locale: 'en',
        logo: { uri: 'https://vc.example.com/ui/images/logo', alt_text: 'Acme' },
        description: 'Shows that you work here',
        background_color: '#12365f',
        background_image: { uri: 'https://vc.example.com/ui/images/bg' },
        text_color: '#ffffff',
      },
      {
        name: 'Mitarbeiterausweis',
        locale: 'de',
        logo: { uri: 'https://vc.example.com/ui/images/logo', alt_text: 'Acme' },
        description: 'Zeigt, dass Sie hier arbeiten',
        background_color: '#12365f',
        background_image: { uri: 'https://vc.example.com/ui/images/bg' },
        text_color: '#ffffff',
      },
    ]);
    // the mdoc configuration shows the same card
    expect(mdocConfigurationFor(badge, sources).credential_metadata.display).toEqual(credentialDisplay(badge, sources));
  });

  it("labels a standard claim with the catalogues' translations, a configured label as given", () => {
    const claims = credentialConfigurationFor(badge, 'https://vc.example.com', sources).credential_metadata.claims;
    expect(claims[0].display).toEqual([{ name: 'First name', locale: 'en' }]);
    expect(claims[1].display).toEqual([
      { name: 'E-mail address', locale: 'en' },
      { name: 'E-Mail-Adresse', locale: 'de' },
      { name: 'Adresse e-mail', locale: 'fr' },
    ]);
  });

  it("the issuer's display: the operator's name per language, its logo", () => {
    expect(issuerDisplay(sources)).toEqual([
      { name: 'Acme', locale: 'en', logo: { uri: 'https://vc.example.com/ui/images/logo', alt_text: 'Acme' } },
      {
        name: 'Acme GmbH',
        locale: 'de',
        logo: { uri: 'https://vc.example.com/ui/images/logo', alt_text: 'Acme GmbH' },
      },
    ]);
    expect(issuerDisplay(PLAIN_CARD_SOURCES)).toBeUndefined();
  });

  it('SD-JWT VC Type Metadata: display with simple rendering and image integrity, claims always disclosable', () => {
    const doc = typeMetadataOf(badge, 'https://vc.example.com/types/EmployeeBadge', sources);
    expect(doc.vct).toBe('https://vc.example.com/types/EmployeeBadge');
    expect(doc.description).toBe('Shows that you work here');
    expect(doc.display[1]).toEqual({
      locale: 'de',
      name: 'Mitarbeiterausweis',
      description: 'Zeigt, dass Sie hier arbeiten',
      rendering: {
        simple: {
          logo: { uri: 'https://vc.example.com/ui/images/logo', 'uri#integrity': sriOf(LOGO.bytes), alt_text: 'Acme' },
          background_image: { uri: 'https://vc.example.com/ui/images/bg', 'uri#integrity': sriOf(BACKGROUND.bytes) },
          background_color: '#12365f',
          text_color: '#ffffff',
        },
      },
    });
    expect(doc.claims[0]).toEqual({
      path: ['FirstName'],
      display: [{ locale: 'en', label: 'First name' }],
      sd: 'always',
    });
  });

  it('serves type metadata only for the default vct, its integrity of the bytes served', () => {
    const other = { ...badge, name: 'Other', vct: 'https://types.example.com/other' };
    const book = new TypeMetadata([badge, other], 'https://vc.example.com', sources);
    const integrity = book.integrityOf('https://vc.example.com/types/EmployeeBadge');
    const doc = JSON.stringify(typeMetadataOf(badge, 'https://vc.example.com/types/EmployeeBadge', sources));
    expect(integrity).toBe(sriOf(doc));
    expect(book.integrityOf('https://types.example.com/other')).toBeUndefined();
  });

  it('refuses to build a card whose image was not loaded (a bug, never a half card)', () => {
    expect(() => credentialDisplay(badge, PLAIN_CARD_SOURCES)).toThrow(/logo of credential type EmployeeBadge/);
  });
});
