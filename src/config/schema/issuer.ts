import { z } from 'zod';
import { MAX_BATCH_SIZE } from '../../rules/batch.js';
import { jwksSchema } from './common.js';

/**
 * The credential issuer's X.509 certificate (OpenID4VC HAIP 1.0 §6.1.1): its chain goes into the `x5c` header
 * of every SD-JWT VC and Status List Token. Both files: that key signs (instead of keys.credential, whose keys
 * stay published). Neither, with keys.generate: a local issuer CA certifies each credential key.
 */
export const issuerSchema = z
  .object({
    /** PEM, leaf first, without the trust anchor; the leaf names the credential issuer (subjectAltName URI or dNSName) */
    certificateChain: z.string().default('./keys/issuer-chain.pem'),
    /** PEM, the leaf's P-256 private key: the credential signing key */
    key: z.string().default('./keys/issuer-key.pem'),
    /** PEM leaf certificates of earlier issuer keys: published until removed, so that what they signed keeps verifying */
    previousCertificates: z.array(z.string()).default([]),
    /**
     * ISO mdoc issuance: the document signer (PEM chain, signer first, without the IACA; and its P-256 key).
     * Left out: the local issuer CA makes one per credential key, and with an operator's certificate credential
     * types are issued as SD-JWT VCs only.
     */
    documentSigner: z
      .object({ certificateChain: z.string().min(1), key: z.string().min(1) })
      .strict()
      .optional(),
  })
  .strict()
  .prefault({});

/** D18: the Token Status Lists of issued credentials, and the status checks of presented ones */
export const statusListSchema = z
  .object({
    /** seconds a Status List Token may be cached (its `ttl`, and Cache-Control) */
    ttl: z.number().int().min(1).max(86400).default(300),
    /** entries per list; a full list starts a new one */
    size: z
      .number()
      .int()
      .min(1024)
      .max(1 << 24)
      .default(1 << 17),
    /** verification: a credential whose status list cannot be fetched is refused (default) or accepted */
    onUnavailable: z.enum(['refuse', 'accept']).default('refuse'),
    /**
     * verification: a fetched list of more entries is refused, before it takes more memory
     * than such a list needs (maxEntries × bits / 8 bytes); the default is 16 Mi
     */
    maxEntries: z
      .number()
      .int()
      .min(1024)
      .max(1 << 26)
      .default(1 << 24),
  })
  .strict()
  // this service's verifier reads its own lists too
  .refine((s) => s.size <= s.maxEntries, { message: 'size must not exceed maxEntries', path: ['size'] })
  .prefault({});

/** issuance: OAuth 2.0 Attestation-Based Client Authentication of wallets at the token endpoint */
export const walletAttestationSchema = z
  .object({
    required: z.boolean().default(false),
    /** wallet providers whose attestations (wallet and key attestations) are trusted */
    trustedProviders: z
      .array(
        z
          .object({
            name: z.string().min(1).max(100),
            jwks: jwksSchema.optional(),
            certificates: z.string().optional(),
          })
          .strict()
          .refine(
            (p) => (p.jwks === undefined) !== (p.certificates === undefined),
            'needs exactly one of jwks or certificates (a PEM file of roots)',
          ),
      )
      .default([]),
  })
  .strict()
  .prefault({});

/** issuance: what the operator sets for every credential type that does not say otherwise */
export const issuanceSchema = z
  .object({
    /**
     * one-time-use credentials (OpenID4VCI 1.0 §8.2, ARF ISSU_43): the most credentials one credential request
     * may buy, one per key the wallet proves; 1 (the default) is one credential per request
     */
    batchSize: z.number().int().min(1).max(MAX_BATCH_SIZE).default(1),
    /** re-issuance (a type's `reissue`): the refreshes one credential's wallet may make per day, at most */
    reissuesPerDay: z.number().int().min(1).max(1000).default(24),
  })
  .strict()
  .prefault({});
