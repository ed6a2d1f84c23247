import { hkdfSync, randomBytes } from 'node:crypto';

/**
 * `c_nonce` values (and DPoP nonces, attestation challenges: each its own `purpose`) are derived from this secret, not stored (oidc-provider's ServerChallenge): every
 * instance must derive the same one (D14), so it comes from the shared cookie keys. Without any, the
 * secret is random and nonces only work on the instance that made them.
 */
export function nonceSecretFrom(cookieKeys: string[], purpose = 'OpenID4VCI c_nonce secret'): Buffer {
  if (!cookieKeys.length) return randomBytes(32);
  return Buffer.from(hkdfSync('sha256', cookieKeys[0], 'wallet-issuer', purpose, 32));
}
