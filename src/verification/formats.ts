/**
 * The Credential Format Identifiers this verifier asks for and reads (OpenID4VP 1.0 Appendix B): the one
 * place their names are spelled, for the DCQL queries, the verifier metadata and the presentation checks.
 */

/** SD-JWT VC (OpenID4VP 1.0 §B.3). */
export const SD_JWT_VC_FORMAT = 'dc+sd-jwt';
/** ISO mdoc (OpenID4VP 1.0 §B.2). */
export const MDOC_FORMAT = 'mso_mdoc';

export type CredentialFormat = typeof SD_JWT_VC_FORMAT | typeof MDOC_FORMAT;
