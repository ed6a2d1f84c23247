import { hkdfSync, randomBytes } from 'node:crypto';

/**
 * `c_nonce` values (and DPoP nonces, attestation challenges: each its own `purpose`) are derived from this secret, not stored (oidc-provider's ServerChallenge): every
 * instance must derive the same one (D14), so it comes from a secret every instance shares and that is
 * never rotated (the service's pairwise secret: oidc-provider takes the nonce secret once, at start).
 * Without one, the secret is random and nonces only work on the instance that made them.
 */
export function nonceSecretFrom(secret: string | undefined, purpose = 'OpenID4VCI c_nonce secret'): Buffer {
  if (!secret) return randomBytes(32);
  return Buffer.from(hkdfSync('sha256', secret, 'wallet-issuer', purpose, 32));
}
