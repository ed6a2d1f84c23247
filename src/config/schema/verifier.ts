import { z } from 'zod';
import { ANCHOR_FORMATS } from '../../keys/trustAnchors.js';
import { httpsOrLoopback, jwksSchema } from './common.js';

/** a PEM file of anchors, and what they may vouch for */
export const trustAnchorSchema = z
  .object({
    /** PEM certificates, relative to the config file */
    certificates: z.string().min(1),
    formats: z.array(z.enum(ANCHOR_FORMATS)).min(1),
    /** names of configured credential types; left out: any type (for dc+sd-jwt, any type not this service's own) */
    types: z.array(z.string().min(1)).min(1).optional(),
  })
  .strict();

/** a trust root: https as the identity block's issuers, webhooks and status lists (http only on a loopback host) */
export const trustedIssuerSchema = z
  .object({
    issuer: httpsOrLoopback('issuer'),
    jwks: jwksSchema.optional(),
    jwksUri: httpsOrLoopback('jwksUri').optional(),
  })
  .strict();
/** the wallet-facing verifier (OpenID4VP 1.0, OpenID4VC HAIP 1.0): how it identifies itself and how wallets answer */
export const verifierSchema = z
  .object({
    /** OpenID4VP 1.0 §5.9.3; redirect_uri (unsigned requests) is for development only */
    clientIdPrefix: z.enum(['x509_hash', 'x509_san_dns', 'redirect_uri']).default('x509_hash'),
    /** PEM, leaf first, without the trust anchor */
    certificateChain: z.string().default('./keys/verifier-chain.pem'),
    /** PEM, the leaf's P-256 private key */
    key: z.string().default('./keys/verifier-key.pem'),
    /**
     * ISO/IEC 18013-7 Annex C (`org-iso-mdoc`): the reader certificate that signs the DeviceRequest's
     * `readerAuth` (Apple issues one for "Verify with Wallet on the Web"); left out: the certificate above
     */
    readerCertificate: z
      .object({
        /** PEM, leaf first, without the trust anchor */
        certificateChain: z.string().min(1),
        /** PEM, the leaf's P-256 private key */
        key: z.string().min(1),
      })
      .strict()
      .optional(),
    responseMode: z.enum(['direct_post.jwt', 'direct_post']).default('direct_post.jwt'),
    /** seconds a wallet may hold a fetched request unanswered before the prompt offers the holder a fresh one */
    freshRequestAfter: z.number().int().min(1).max(3600).default(30),
    /**
     * Trust anchors, each for its formats and (optionally) credential types. A single PEM file name is
     * read as mdoc IACAs only (formats [mso_mdoc]).
     */
    trustAnchors: z.union([z.string().min(1), z.array(trustAnchorSchema)]).optional(),
    /**
     * The registrars (providers of registration certificates, ETSI TS 119 475) whose certificates vouch for
     * the clients' `registration`: PEM files of their trust anchors, relative to the config file.
     */
    registrars: z.array(z.string().min(1)).min(1).optional(),
  })
  .strict()
  .prefault({});
