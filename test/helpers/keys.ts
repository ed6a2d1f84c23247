import { exportJWK, generateKeyPair, type JWK } from 'jose';

export interface TestKeyPair {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  privateJwk: JWK;
  publicJwk: JWK;
}

/**
 * A fresh extractable key pair and its two JWKs: ES256 (P-256) unless `alg` says another (EdDSA is
 * Ed25519). With `kid`, both JWKs carry it and, unless `kidOnly`, their `alg` too (as an issuer's
 * published key does).
 */
export async function keyPair(kid?: string, opts: { alg?: string; kidOnly?: boolean } = {}): Promise<TestKeyPair> {
  const alg = opts.alg ?? 'ES256';
  const { privateKey, publicKey } = await generateKeyPair(alg, {
    extractable: true,
    ...(alg === 'EdDSA' ? { crv: 'Ed25519' } : {}),
  });
  const named = kid ? { kid, ...(opts.kidOnly ? {} : { alg }) } : {};
  return {
    privateKey,
    publicKey,
    privateJwk: { ...(await exportJWK(privateKey)), ...named },
    publicJwk: { ...(await exportJWK(publicKey)), ...named },
  };
}
