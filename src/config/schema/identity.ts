import { z } from 'zod';
import { RESERVED_CLAIM_NAMES } from '../../rules/claimNames.js';
import { httpsOrLoopback, jwksSchema, localizedText } from './common.js';
import { PID_MDOC_DOCTYPE, pidMdocElement } from '../../rules/pidMdoc.js';

/** Claim names a relying party reads in our ID token: the registered ones stay ours. */
const claimName = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, 'claim names must be identifiers')
  .refine((n) => !RESERVED_CLAIM_NAMES.has(n), 'is a reserved claim name');

/** D12: the identity-verification flows, one block per scope. */
export const identitySchema = z
  .object({
    /** the holder presents a person-identification credential (SD-JWT VC PID) */
    VerifiedIdentity: z
      .object({
        vct: z.array(z.string().min(1)).min(1).default(['urn:eudi:pid:1']),
        displayName: localizedText().default('Identity document'),
        claims: z.array(claimName).min(1).default(['given_name', 'family_name', 'birthdate']),
        optionalClaims: z.array(claimName).default([]),
        /** what the prompt calls a claim, per language; the shipped catalogues name the EU PID's standard claims */
        labels: z.record(claimName, localizedText()).default({}),
        /** a persistent identifier in the PID: `sub` stays the same for the same person */
        subjectClaim: claimName.optional(),
        /**
         * also the PID as an ISO mdoc (PID Rulebook, ISO/IEC 18013-5 encoding): one DCQL credential_sets entry
         * offers either form; the claims keep their names in the ID token, read from the mdoc's elements
         * (`birthdate` from `birth_date`, ... src/identity/pidMdoc.ts; `elements` names others). Trusted through
         * `verifier.trustAnchors` entries of format mso_mdoc that list `VerifiedIdentity` in their types.
         */
        mdoc: z
          .object({
            doctype: z.string().min(1).max(256).default(PID_MDOC_DOCTYPE),
            namespace: z.string().min(1).max(256).default(PID_MDOC_DOCTYPE),
            /** claim -> the mdoc element it is read from, where the rulebook's mapping does not say or should not apply */
            elements: z.record(claimName, z.string().min(1).max(256)).default({}),
          })
          .strict()
          .optional(),
        trustedIssuers: z
          .array(
            z
              .object({
                issuer: httpsOrLoopback('issuer'),
                jwks: jwksSchema.optional(),
                jwksUri: httpsOrLoopback('jwksUri').optional(),
              })
              .strict(),
          )
          .min(1),
      })
      .strict()
      .superRefine((b, ctx) => {
        const seen = new Set<string>();
        [...b.claims, ...b.optionalClaims].forEach((name, i) => {
          if (seen.has(name))
            ctx.addIssue({
              code: 'custom',
              path: i < b.claims.length ? ['claims', i] : ['optionalClaims', i - b.claims.length],
              message: `${name} is listed twice`,
            });
          seen.add(name);
        });
        // the mdoc form must be able to satisfy the query: every required claim needs an element
        if (b.mdoc)
          b.claims.forEach((name, i) => {
            if (pidMdocElement(name, b.mdoc!.elements) === undefined)
              ctx.addIssue({
                code: 'custom',
                path: ['claims', i],
                message: `${name} has no element in the PID's mdoc form (PID Rulebook); name one in mdoc.elements, or make it an optional claim`,
              });
          });
        // one element per claim: the mdoc query's claims are its elements (OpenID4VP 1.0 §6.3: ids are unique)
        if (b.mdoc) {
          const claimOf = new Map<string, string>();
          for (const name of new Set([...b.claims, ...b.optionalClaims, ...(b.subjectClaim ? [b.subjectClaim] : [])])) {
            const element = pidMdocElement(name, b.mdoc.elements);
            if (element === undefined) continue;
            const other = claimOf.get(element);
            if (other !== undefined)
              ctx.addIssue({
                code: 'custom',
                path: ['mdoc', 'elements'],
                message: `${other} and ${name} are both read from the mdoc element ${element}; each claim needs an element of its own`,
              });
            claimOf.set(element, name);
          }
        }
      })
      .optional(),
    /** a hosted identity-verification provider, an OpenID Connect provider */
    VerifiedIdentity_Other: z
      .object({
        displayName: localizedText(100),
        issuer: httpsOrLoopback('issuer'),
        clientId: z.string().min(1),
        clientSecret: z.string().min(1),
        clientAuth: z.enum(['client_secret_basic', 'client_secret_post']).default('client_secret_basic'),
        scopes: z
          .array(z.string().regex(/^[\x21\x23-\x5B\x5D-\x7E]+$/, 'must be an OAuth scope token'))
          .min(1)
          .default(['openid'])
          .refine((s) => s.includes('openid'), 'must contain openid'),
        /** provider claim -> our ID token claim */
        claims: z
          .record(z.string().min(1), claimName)
          .refine((c) => Object.keys(c).length > 0, 'must map at least one claim'),
        /** OpenID Connect for Identity Assurance: ask for the claims as `verified_claims` and map those */
        verifiedClaims: z.boolean().default(false),
      })
      .strict()
      .optional(),
  })
  .strict();
