import { z } from 'zod';
import { absoluteUrl, httpsOrLoopback, httpsOrLoopbackUrl, jwksSchema } from './common.js';

/** `whsec_` and the base64 of 24 to 64 random bytes (Standard Webhooks' secret format). */
const webhookSecret = z.string().refine((v) => {
  const m = /^whsec_([A-Za-z0-9+/]+={0,2})$/.exec(v);
  if (!m) return false;
  const bytes = Buffer.from(m[1], 'base64').length;
  return bytes >= 24 && bytes <= 64;
}, 'must be a Standard Webhooks secret: whsec_ and the base64 of 24 to 64 random bytes');

/** https, or http on a loopback host (development). */
const webhookUrl = z.string().refine((v) => {
  try {
    const u = new URL(v);
    if (u.username || u.password) return false; // credentials in a URL end up in error messages
    return httpsOrLoopbackUrl(u);
  } catch {
    return false;
  }
}, 'must be an https URL (http only on a loopback host), without user or password');

/** D13: where a client's External Client flow events go, signed with each listed secret. */
export const webhookSchema = z
  .object({
    url: webhookUrl,
    secret: webhookSecret.optional(),
    /** for rotation: every listed secret signs, so the header carries one signature per secret */
    secrets: z.array(webhookSecret).min(1).optional(),
  })
  .strict()
  .refine((w) => (w.secret === undefined) !== (w.secrets === undefined), 'give either secret or secrets');

/**
 * RFC 6749 Appendix A.1, A.2: a client_id and a client_secret are printable ASCII (VSCHAR, %x20-7E);
 * oidc-provider refuses a client with anything else when it is first used.
 */
const VSCHAR = /^[\x20-\x7E]*$/;
const VSCHAR_MESSAGE = 'must be printable ASCII (RFC 6749 Appendix A: VSCHAR, %x20-7E)';

export const clientSchema = z
  .object({
    clientId: z.string().min(1).max(200).regex(VSCHAR, VSCHAR_MESSAGE),
    clientSecret: z.string().min(16, 'must be at least 16 characters').regex(VSCHAR, VSCHAR_MESSAGE),
    clientName: z.string().optional(),
    /** the relying party's logo, shown beside "Request from ...": fetched once at start-up and served by us */
    logoUri: z
      .string()
      .refine(
        (v) => URL.canParse(v) && httpsOrLoopbackUrl(new URL(v)),
        'must be an https URL (http only on a loopback host)',
      )
      .optional(),
    redirectUris: z.array(absoluteUrl).min(1),
    pkce: z.enum(['required', 'optional']).default('optional'),
    pkceMethods: z
      .array(z.enum(['S256', 'plain']))
      .min(1)
      .default(['S256', 'plain']),
    scopes: z.array(z.string().min(1)).min(1),
    /** D7: the client's public keys; a jwks_uri is a trust root, https (http only on a loopback host) */
    hintKeys: z
      .object({ jwks: jwksSchema.optional(), jwksUri: httpsOrLoopback('jwksUri').optional() })
      .strict()
      .optional(),
    /** D3: `expires_in` as a string of digits, for clients coded against the spec's sample */
    expiresInAsString: z.boolean().default(false),
    /** D1: ID token `iss` pinned to `{base_url}/oidc` for Version 2 clients coded against the sample */
    legacyV2Issuer: z.boolean().default(false),
    /**
     * OIDC Core §5.3.2: the UserInfo endpoint answers this client with a JWT signed with the ID-token key
     * (iss, aud, the claims) instead of plain JSON
     */
    userinfoSignedResponseAlg: z.enum(['RS256']).optional(),
    /** D13: required for the scope External */
    webhook: webhookSchema.optional(),
    /** verification: the ID token names, per credential type, the issuer that vouched for it (`vc_issuer`) */
    vcIssuerClaim: z.boolean().default(false),
    /**
     * ETSI TS 119 475: the relying party's registration certificates (the registrar's signed JWTs, one per
     * intended use), sent to wallets in `verifier_info`; `subject` is the identifier the registrar registered
     * it under (the certificate's `sub`). Checked at start-up against `verifier.registrars`.
     */
    registration: z
      .object({
        subject: z.string().min(1).max(512),
        /** files, relative to the config file */
        certificates: z.array(z.string().min(1)).min(1),
      })
      .strict()
      .optional(),
  })
  .strict();

/** The claim `vcIssuerClaim` adds to the ID token. */
export const VC_ISSUER_CLAIM = 'vc_issuer';
