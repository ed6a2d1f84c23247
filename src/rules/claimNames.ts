/** Registered JWT claims (RFC 7519 §4.1). */
const JWT_CLAIMS = ['iss', 'sub', 'aud', 'exp', 'nbf', 'iat', 'jti'];

/** D7: the claims of an `id_token_hint` that are the token's own or the PIN, never credential attributes. */
export const HINT_CONTROL_CLAIMS: ReadonlySet<string> = new Set([...JWT_CLAIMS, 'PinCode']);

/**
 * The one list of claim names no credential attribute may have, because the hint, the ID token or the
 * SD-JWT VC already uses them: the configuration refuses such attributes at start (docs/decisions.md),
 * and a presented credential's own claims are never taken for attributes.
 */
export const RESERVED_CLAIM_NAMES: ReadonlySet<string> = new Set([
  ...HINT_CONTROL_CLAIMS,
  // the ID token (spec: Issued ID token; OIDC Core §2)
  'nonce',
  'SerialNumber',
  'ExpiresAt',
  'azp',
  'auth_time',
  'acr',
  'amr',
  'sid',
  'at_hash',
  'c_hash',
  // the SD-JWT VC (SD-JWT VC §3.2.2, SD-JWT §4)
  'cnf',
  'vct',
  'vct#integrity',
  'status',
  '_sd',
  '_sd_alg',
  '...',
]);
