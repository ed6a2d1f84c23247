import { z } from 'zod';
import { AA_TEXT, contrastRatio, HEX_COLOUR } from '../../rules/contrast.js';
import { httpsOrLoopback, languageTag, localizedText } from './common.js';

/** the holder pages' languages and the operator's brand */
export const uiSchema = z
  .object({
    /** the language of a holder whose request and browser name none that a catalogue serves */
    defaultLocale: languageTag.default('en'),
    /** a directory of more catalogues (`<tag>.json`), relative to the config file; they override the shipped ones */
    locales: z.string().min(1).optional(),
    /** the operator's name, shown at the top of every holder page */
    name: localizedText(100).optional(),
    /** a PNG, JPEG, WebP or SVG file (relative to the config file) or an https URL, fetched once at start-up */
    logo: z.string().min(1).optional(),
    /** buttons, links and focus rings (white text on it, and it on the white page: AA) */
    primaryColor: z.string().regex(HEX_COLOUR, 'must be a colour written #rgb or #rrggbb').optional(),
    /** the "Request from" badge and the credential icon (white text on it: AA) */
    accentColor: z.string().regex(HEX_COLOUR, 'must be a colour written #rgb or #rrggbb').optional(),
    supportUrl: httpsOrLoopback('supportUrl').optional(),
    privacyUrl: httpsOrLoopback('privacyUrl').optional(),
  })
  .strict()
  .superRefine((ui, ctx) => {
    for (const key of ['primaryColor', 'accentColor'] as const) {
      const colour = ui[key];
      if (colour === undefined || !HEX_COLOUR.test(colour)) continue;
      const ratio = contrastRatio(colour, '#ffffff');
      if (ratio < AA_TEXT) {
        ctx.addIssue({
          code: 'custom',
          path: [key],
          message: `${colour} against white (#ffffff) has a contrast ratio of ${ratio.toFixed(2)}:1; WCAG AA needs at least ${AA_TEXT}:1 for text (choose a darker colour)`,
        });
      }
    }
  })
  .prefault({});
