import { compactVerify, errors, type JWTVerifyGetKey } from 'jose';

/**
 * A compact JWS verified with a jose key resolver, `alg` limited to `algorithms` (RFC 8725 §3.1). When several
 * keys fit the header (no `kid`), each is tried, as jose documents for ERR_JWKS_MULTIPLE_MATCHING_KEYS.
 */
export async function verifyWithKeys(jws: string, keys: JWTVerifyGetKey, algorithms: string[]): Promise<void> {
  try {
    await compactVerify(jws, keys, { algorithms });
  } catch (err) {
    if (!(err instanceof errors.JWKSMultipleMatchingKeys)) throw err;
    for await (const key of err) {
      try {
        await compactVerify(jws, key, { algorithms });
        return;
      } catch (inner) {
        if (!(inner instanceof errors.JWSSignatureVerificationFailed)) throw inner;
      }
    }
    throw new errors.JWSSignatureVerificationFailed();
  }
}
