import { z } from 'zod';

/**
 * The interface versions served, and Version 2's issuer (docs/operations.md, "Discovery from the issuer").
 * The defaults are the interface's: both versions, Version 2's issuer `{base_url}`.
 */
export const versionsSchema = z
  .object({
    /** false: Version 1 is off (no /oidc endpoints or documents); the root document becomes Version 2's */
    v1: z.boolean().default(true),
    /**
     * Version 2's issuer (discovery `issuer`, ID tokens' `iss`, hints' `aud`): `base` is `{base_url}` (the
     * interface); `v2.0` is `{base_url}/v2.0`, where its document is, so that discovery from the issuer works
     */
    v2Issuer: z.enum(['base', 'v2.0']).default('base'),
    /**
     * The Version 1 PAR document: `interface` (without subject_types_supported, as the interface says), or
     * `oidc-discovery` (with it: OIDC Discovery 1.0 §3 requires it, and Nimbus-based clients such as Spring
     * Security refuse a document without it)
     */
    v1ParDocument: z.enum(['interface', 'oidc-discovery']).default('interface'),
  })
  .strict()
  .prefault({});
