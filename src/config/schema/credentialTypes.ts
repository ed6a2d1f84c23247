import { z } from 'zod';
import { RESERVED_CLAIM_NAMES } from '../../rules/claimNames.js';
import { MAX_BATCH_SIZE } from '../../rules/batch.js';
import { KEY_ATTESTATION_LEVELS } from '../../rules/keyAttestation.js';
import { absoluteUrl, isoDuration, localizedText } from './common.js';
import { cardSchema, missingCardLanguages } from './card.js';

export const attributeTypes = ['string', 'number', 'boolean', 'date', 'email', 'image'] as const;

export const attributeSchema = z
  .object({
    type: z.enum(attributeTypes),
    required: z.boolean().default(true),
    /** image attributes only: accepted media types and decoded size limit */
    formats: z
      .array(z.enum(['image/png', 'image/jpeg']))
      .min(1)
      .optional(),
    maxBytes: z.number().int().positive().optional(),
    /**
     * image attributes only: limits on the declared dimensions, checked before anything is decoded, so a
     * small file cannot make a decoder allocate gigabytes (defaults 4096, 4096 and maxWidth * maxHeight;
     * 2^31 - 1 is PNG's own maximum)
     */
    maxWidth: z.number().int().positive().max(0x7fffffff).optional(),
    maxHeight: z.number().int().positive().max(0x7fffffff).optional(),
    maxPixels: z.number().int().positive().optional(),
    /** display name shown to holders, one string or per language */
    label: localizedText().optional(),
  })
  .strict()
  .superRefine((a, ctx) => {
    if (a.type === 'image') return;
    for (const key of ['maxWidth', 'maxHeight', 'maxPixels'] as const) {
      if (a[key] !== undefined)
        ctx.addIssue({ code: 'custom', path: [key], message: `${key} applies to image attributes only` });
    }
  });

export const credentialTypeSchema = z
  .object({
    name: z.string().regex(/^[A-Za-z][A-Za-z0-9_-]{0,63}$/, 'must be letters, digits, _ or -, starting with a letter'),
    vct: absoluteUrl.optional(),
    displayName: localizedText().optional(),
    /** what wallets show of the credential besides its name: description, logo, colours, background image */
    card: cardSchema.optional(),
    validity: isoDuration.default('P365D'),
    pinCodeLength: z.number().int().min(1).max(12).optional(),
    /**
     * also as an ISO mdoc, its attributes being elements of `namespace`: verification asks for it (OpenID4VP 1.0
     * §B.2) and issuance offers it as a second configuration, `<name>.mso_mdoc` (OpenID4VCI 1.0 Appendix A.2)
     */
    mdoc: z
      .object({
        doctype: z.string().min(1).max(256),
        namespace: z.string().min(1).max(256),
        /**
         * how long an mdoc of this type is valid at most (the type's validity when shorter): an mdoc carries no
         * status, so a revocation never reaches other verifiers. Default a day (ARF Annex 2 VCR_01: short-lived
         * attestations need no revocation, MDOC_IRREVOCABLE_VALIDITY); longer is the operator's choice, and
         * start-up warns of it.
         */
        irrevocableValidity: isoDuration.refine((d) => /[1-9]/.test(d), 'must be longer than zero').optional(),
      })
      .strict()
      .optional(),
    /**
     * verified only, never issued here (no `issue.<name>` scope, no credential configuration): a credential
     * others issue, such as an mDL for age checks. It is asked for as an mdoc when it has `mdoc` (trusted through
     * the `mso_mdoc` anchors of `verifier.trustAnchors` alone, never the local issuer CA) and as an SD-JWT VC when
     * it names another issuer's `vct`.
     */
    verifyOnly: z.boolean().optional(),
    /**
     * issuance: the most credentials one request may buy, one per key the wallet proves (OpenID4VCI 1.0 §8.2,
     * ARF ISSU_43: one-time-use credentials); default `issuance.batchSize`; 1 is one credential per request
     */
    batchSize: z.number().int().min(1).max(MAX_BATCH_SIZE).optional(),
    /**
     * issuance: re-issuance without the relying party (HAIP 1.0 §4, ARF ISSU_42): the wallet's token response
     * carries a refresh_token, and a refresh buys a fresh batch of the same credential (its attributes,
     * SerialNumber and expiry) until it expires or its SerialNumber is revoked; off unless true
     */
    reissue: z.boolean().optional(),
    /** issuance: `required` refuses a proof without a key attestation (OpenID4VCI 1.0 Appendix D) */
    keyAttestation: z.enum(['required', 'optional']).optional(),
    /**
     * issuance, with `keyAttestation: required`: the least attack potential resistance (ISO/IEC 18045, OpenID4VCI
     * 1.0 Appendix D.2) a key attestation must assert for the key's storage and for the user authentication
     * guarding it; an attestation below either is refused
     */
    keyAttestationLevels: z
      .object({
        keyStorage: z.enum(KEY_ATTESTATION_LEVELS).optional(),
        userAuthentication: z.enum(KEY_ATTESTATION_LEVELS).optional(),
      })
      .strict()
      .optional(),
    attributes: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'attribute names must be identifiers'), attributeSchema)
      .refine((a) => Object.keys(a).length > 0, 'must declare at least one attribute')
      .superRefine((a, ctx) => {
        for (const name of Object.keys(a)) {
          if (RESERVED_CLAIM_NAMES.has(name))
            ctx.addIssue({ code: 'custom', path: [name], message: `${name} is a reserved claim name` });
        }
      }),
  })
  .strict()
  .superRefine((type, ctx) => {
    if (!type.card) return;
    for (const { path, missing } of missingCardLanguages(type.displayName, type.card)) {
      ctx.addIssue({
        code: 'custom',
        path,
        message: `has no text in ${missing.join(', ')}, which the card's other texts are given in (give every text of the card in the same languages, or as one string)`,
      });
    }
  });
