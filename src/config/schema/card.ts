import { z } from 'zod';
import { AA_TEXT, contrastRatio, HEX_COLOUR } from '../../rules/contrast.js';
import { isLoopbackHost } from '../../rules/loopback.js';
import { localizedText } from './common.js';

const colour = z.string().regex(HEX_COLOUR, 'must be a colour written #rgb or #rrggbb');

/**
 * An image of the card: a PNG, JPEG, WebP or SVG file (relative to the config file) or an https URL (http
 * only on a loopback host), read once at start-up and served by the service, so that every instance
 * publishes the same bytes (their digest is in the type metadata).
 */
export const cardImageSource = z
  .string()
  .min(1)
  .max(2048)
  .refine((v) => {
    // a scheme makes it a URL, which must then be one the service fetches; anything else is a file path
    if (!/^[A-Za-z][A-Za-z0-9+.-]*:/.test(v) || /^[A-Za-z]:[\\/]/.test(v)) return true;
    if (!URL.canParse(v)) return false;
    const u = new URL(v);
    return (
      !u.username && !u.password && (u.protocol === 'https:' || (u.protocol === 'http:' && isLoopbackHost(u.hostname)))
    );
  }, 'must be a file (relative to the config file) or an https URL (http only on a loopback host)');

/**
 * What a wallet shows of a credential type beside its name (OpenID4VCI 1.0 §12.2.4 `credential_metadata.display`,
 * SD-JWT VC Type Metadata `rendering.simple`): a description, a logo with its alternative text, the colours
 * and a background image. Texts are one string or one per language, like the type's `displayName`.
 */
export const cardSchema = z
  .object({
    description: localizedText(500).optional(),
    logo: z
      .object({
        image: cardImageSource,
        /** what a screen reader says for the logo (default: the type's name) */
        altText: localizedText(200).optional(),
      })
      .strict()
      .optional(),
    backgroundColor: colour.optional(),
    textColor: colour.optional(),
    backgroundImage: cardImageSource.optional(),
  })
  .strict()
  .superRefine((card, ctx) => {
    const { backgroundColor: bg, textColor: fg } = card;
    if ((bg === undefined) !== (fg === undefined)) {
      ctx.addIssue({
        code: 'custom',
        path: [bg === undefined ? 'backgroundColor' : 'textColor'],
        message: 'give backgroundColor and textColor together, so that their contrast can be checked',
      });
      return;
    }
    if (bg === undefined || fg === undefined || !HEX_COLOUR.test(bg) || !HEX_COLOUR.test(fg)) return;
    const ratio = contrastRatio(fg, bg);
    if (ratio < AA_TEXT) {
      ctx.addIssue({
        code: 'custom',
        path: ['textColor'],
        message: `${fg} on ${bg} has a contrast ratio of ${ratio.toFixed(2)}:1; WCAG AA needs at least ${AA_TEXT}:1 for text (choose colours further apart)`,
      });
    }
  });

export type CardConfig = z.infer<typeof cardSchema>;

type Localized = string | Record<string, string> | undefined;

/** The languages a text is given in; a single string stands for every language. */
const languagesOf = (text: Localized): string[] =>
  text === undefined || typeof text === 'string' ? [] : Object.keys(text);

/**
 * A card's texts must be given in the same languages (a single string counts as every language): a wallet
 * showing the card in German must find each of its texts in German. The texts are the type's `displayName`,
 * the card's description and the logo's alternative text. Returns each text that lacks a language, with the
 * languages it lacks.
 */
export function missingCardLanguages(
  displayName: Localized,
  card: CardConfig,
): { path: (string | number)[]; missing: string[] }[] {
  const texts: { path: (string | number)[]; text: Localized }[] = [
    { path: ['displayName'], text: displayName },
    { path: ['card', 'description'], text: card.description },
    { path: ['card', 'logo', 'altText'], text: card.logo?.altText },
  ];
  const all = new Set(texts.flatMap((t) => languagesOf(t.text)));
  return texts.flatMap(({ path, text }) => {
    if (text === undefined || typeof text === 'string') return [];
    const missing = [...all].filter((l) => !Object.hasOwn(text, l));
    return missing.length ? [{ path, missing }] : [];
  });
}
