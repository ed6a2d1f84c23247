import { CompactEncrypt, importJWK, type JWK } from 'jose';

/**
 * A wallet's answer encrypted to the verifier's key (OpenID4VP 1.0 §8.3; HAIP 1.0: ECDH-ES on P-256), a
 * compact JWE made with jose. `payload`: the answer (as JSON) or its text. The header names the key's
 * `kid` unless `kid` says another (an attack names one key and encrypts to another).
 */
export async function encryptAnswer(
  jwk: JWK,
  payload: Record<string, unknown> | string,
  opts: { alg?: string; enc?: string; kid?: string } = {},
): Promise<string> {
  const alg = opts.alg ?? 'ECDH-ES';
  const kid = opts.kid ?? jwk.kid;
  return new CompactEncrypt(new TextEncoder().encode(typeof payload === 'string' ? payload : JSON.stringify(payload)))
    .setProtectedHeader({ alg, enc: opts.enc ?? 'A128GCM', ...(kid ? { kid } : {}) })
    .encrypt(await importJWK(jwk, alg));
}
