import { createHash } from 'node:crypto';
import type { CredentialType } from '../config/schema.js';
import { pickText, type Catalogues, type LocalizedText } from '../i18n/catalogues.js';
import { EN, type MessageId } from '../i18n/en.js';

/** An image as wallets fetch it: its absolute URL, and its W3C SRI integrity metadata (sha256). */
export interface PublishedImage {
  uri: string;
  integrity: string;
}

/** W3C Subresource Integrity metadata of some bytes (SRI §3.1): `sha256-` and the digest in base64. */
export const sriOf = (bytes: Uint8Array | string): string =>
  `sha256-${createHash('sha256').update(bytes).digest('base64')}`;

/**
 * What the cards are made from besides the credential types: the language of a text given as one string
 * (ui.defaultLocale), the images read at start-up (src/ui/ui.ts, served by the service), the catalogues'
 * labels of standard claims, and the issuer's own name and logo (ui.name, ui.logo).
 */
export interface CardSources {
  defaultLocale: string;
  /** a configured image source (file or URL) as published; undefined when it was not loaded */
  image(source: string): PublishedImage | undefined;
  /** the catalogues' `claim.<name>` label in each language a catalogue gives it, or none */
  claimLabels(name: string): { locale: string; text: string }[];
  issuer?: { name?: LocalizedText; logo?: PublishedImage };
}

/** Sources with no images and English labels only: a wallet issuer built without the service's UI (tests, the demo PID issuer). */
export const PLAIN_CARD_SOURCES: CardSources = {
  defaultLocale: 'en',
  image: () => undefined,
  claimLabels: (name) => {
    const id = `claim.${name}`;
    return Object.hasOwn(EN, id) ? [{ locale: 'en', text: EN[id as MessageId] }] : [];
  },
};

/** The catalogues' labels of a standard claim (`claim.<name>`, src/i18n/en.ts), in each language that has its own. */
export function catalogueClaimLabels(catalogues: Catalogues): CardSources['claimLabels'] {
  return (name) => {
    const id = `claim.${name}`;
    if (!Object.hasOwn(EN, id)) return [];
    return catalogues.locales.flatMap((locale) => {
      const texts = catalogues.texts(locale);
      // English is built in; a catalogue of any language (English too) may word it its own way
      const own = texts?.messages[id as MessageId] ?? (locale === 'en' ? EN[id as MessageId] : undefined);
      return own ? [{ locale, text: own }] : [];
    });
  };
}

/** Every language a configured text is given in, the default language for one string. */
export function textsIn(
  text: LocalizedText | undefined,
  defaultLocale: string,
): { locale: string; text: string }[] | undefined {
  if (text === undefined) return undefined;
  if (typeof text === 'string') return [{ locale: defaultLocale, text }];
  return Object.entries(text).map(([locale, t]) => ({ locale, text: t }));
}

/**
 * The languages a type's card is shown in: every language its name, description or logo text is given in
 * (the config refuses a card whose texts differ in languages), the default language first; the default
 * language alone when every text is one string.
 */
export function cardLocales(type: CredentialType, defaultLocale: string): string[] {
  const given = new Set<string>();
  for (const text of [type.displayName, type.card?.description, type.card?.logo?.altText]) {
    if (text !== undefined && typeof text !== 'string') for (const l of Object.keys(text)) given.add(l);
  }
  if (given.size === 0) return [defaultLocale];
  const locales = [...given];
  return locales.includes(defaultLocale) ? [defaultLocale, ...locales.filter((l) => l !== defaultLocale)] : locales;
}

/** One language's card, read from the config: what both the issuer metadata and the type metadata publish. */
export interface CardFace {
  locale: string;
  name: string;
  description?: string;
  logo?: PublishedImage & { altText: string };
  backgroundImage?: PublishedImage;
  backgroundColor?: string;
  textColor?: string;
}

function imageOf(sources: CardSources, source: string, what: string, type: CredentialType): PublishedImage {
  const image = sources.image(source);
  // the service reads every card image before it builds an issuer (src/ui/ui.ts); one missing here is a bug
  if (!image) throw new TypeError(`the ${what} of credential type ${type.name} (${source}) was not loaded`);
  return image;
}

/** A type's card in each of its languages. */
export function cardFaces(type: CredentialType, sources: CardSources): CardFace[] {
  const card = type.card;
  const logo = card?.logo ? imageOf(sources, card.logo.image, 'logo', type) : undefined;
  const background = card?.backgroundImage
    ? imageOf(sources, card.backgroundImage, 'background image', type)
    : undefined;
  return cardLocales(type, sources.defaultLocale).map((locale) => {
    const name = pickText(type.displayName, locale) ?? type.name;
    const description = pickText(card?.description, locale);
    return {
      locale,
      name,
      ...(description !== undefined ? { description } : {}),
      ...(logo ? { logo: { ...logo, altText: pickText(card?.logo?.altText, locale) ?? name } } : {}),
      ...(background ? { backgroundImage: background } : {}),
      ...(card?.backgroundColor ? { backgroundColor: card.backgroundColor, textColor: card.textColor } : {}),
    };
  });
}

/** An attribute's label in each language: configured, else the catalogues' for a standard claim, else its name. */
export function claimLabels(
  name: string,
  label: LocalizedText | undefined,
  sources: CardSources,
): { locale: string; text: string }[] {
  const configured = textsIn(label, sources.defaultLocale);
  if (configured) return configured;
  const catalogued = sources.claimLabels(name);
  return catalogued.length ? catalogued : [{ locale: sources.defaultLocale, text: name }];
}

/** OpenID4VCI 1.0 §12.2.4 `credential_metadata.display`: one entry per language. */
export function credentialDisplay(type: CredentialType, sources: CardSources) {
  return cardFaces(type, sources).map((f) => ({
    name: f.name,
    locale: f.locale,
    ...(f.logo ? { logo: { uri: f.logo.uri, alt_text: f.logo.altText } } : {}),
    ...(f.description !== undefined ? { description: f.description } : {}),
    ...(f.backgroundColor ? { background_color: f.backgroundColor } : {}),
    ...(f.backgroundImage ? { background_image: { uri: f.backgroundImage.uri } } : {}),
    ...(f.textColor ? { text_color: f.textColor } : {}),
  }));
}

/** OpenID4VCI 1.0 §12.2.4 `display` of the credential issuer itself: its name and logo per language (ui.name, ui.logo). */
export function issuerDisplay(sources: CardSources) {
  const issuer = sources.issuer;
  if (!issuer || (issuer.name === undefined && !issuer.logo)) return undefined;
  const names = textsIn(issuer.name, sources.defaultLocale);
  if (!names) return [{ logo: { uri: issuer.logo!.uri } }];
  return names.map(({ locale, text }) => ({
    name: text,
    locale,
    ...(issuer.logo ? { logo: { uri: issuer.logo.uri, alt_text: text } } : {}),
  }));
}

/**
 * SD-JWT VC Type Metadata (draft-ietf-oauth-sd-jwt-vc, "SD-JWT VC Type Metadata"): the type's `vct`, its
 * name for developers, its display per language with simple rendering (logo and background image with their
 * integrity, colours), and each attribute's labels. Every attribute is selectively disclosable (D10): `sd` is
 * `always`.
 */
export function typeMetadataOf(type: CredentialType, vct: string, sources: CardSources) {
  const faces = cardFaces(type, sources);
  const english = pickText(type.card?.description, 'en');
  return {
    vct,
    name: type.name,
    ...(english !== undefined ? { description: english } : {}),
    display: faces.map((f) => {
      const simple = {
        ...(f.logo ? { logo: { uri: f.logo.uri, 'uri#integrity': f.logo.integrity, alt_text: f.logo.altText } } : {}),
        ...(f.backgroundImage
          ? { background_image: { uri: f.backgroundImage.uri, 'uri#integrity': f.backgroundImage.integrity } }
          : {}),
        ...(f.backgroundColor ? { background_color: f.backgroundColor, text_color: f.textColor } : {}),
      };
      return {
        locale: f.locale,
        name: f.name,
        ...(f.description !== undefined ? { description: f.description } : {}),
        ...(Object.keys(simple).length ? { rendering: { simple } } : {}),
      };
    }),
    claims: Object.entries(type.attributes).map(([name, spec]) => ({
      path: [name],
      display: claimLabels(name, spec.label, sources).map(({ locale, text }) => ({ locale, label: text })),
      sd: 'always' as const,
    })),
  };
}

/** An image the service serves itself (src/ui/images.ts): its bytes and its path under the base URL. */
interface ServedBytes {
  bytes: Uint8Array;
  path: string;
}

/**
 * The service's card sources: the images the holder UI read at start-up (served at their content-named paths
 * under the base URL), the catalogues' claim labels, and the operator's name and logo as the issuer's display.
 */
export function cardSourcesFrom(o: {
  baseUrl: string;
  catalogues: Catalogues;
  images: ReadonlyMap<string, ServedBytes>;
  issuerName?: LocalizedText;
  issuerLogo?: ServedBytes;
}): CardSources {
  const published = (image: ServedBytes): PublishedImage => ({
    uri: `${o.baseUrl}${image.path}`,
    integrity: sriOf(image.bytes),
  });
  const images = new Map([...o.images].map(([source, image]) => [source, published(image)]));
  return {
    defaultLocale: o.catalogues.defaultLocale,
    image: (source) => images.get(source),
    claimLabels: catalogueClaimLabels(o.catalogues),
    issuer: { name: o.issuerName, logo: o.issuerLogo && published(o.issuerLogo) },
  };
}
