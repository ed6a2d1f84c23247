import { createHash } from 'node:crypto';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { compactVerify, decodeJwt, decodeProtectedHeader, importJWK, type JWK } from 'jose';

/**
 * Verifies an SD-JWT VC the way an outside verifier would, with @sd-jwt/sd-jwt-vc and jose only, sharing
 * no code with src/issuance: the issuer signature (key chosen by `kid` from the given JWKS, ES256), the
 * disclosure digests, `exp`. Returns the signed header and payload (attributes appear there only as
 * `_sd` digests), the claims with every disclosure applied, and how many disclosures the credential carries.
 */
export async function verifySdJwtVcIndependently(
  credential: string,
  issuerJwks: { keys: JWK[] },
): Promise<{ header: Record<string, unknown>; payload: Record<string, unknown>; claims: Record<string, unknown>; disclosures: number }> {
  const [issuerJwt, ...rest] = credential.split('~');
  const header = decodeProtectedHeader(issuerJwt) as Record<string, unknown>;
  const jwk = issuerJwks.keys.find((k) => k.kid === header.kid);
  if (!jwk) throw new Error(`no issuer key with kid ${String(header.kid)}`);
  const key = await importJWK(jwk, 'ES256');

  const sdJwt = new SDJwtVcInstance({
    hasher: (data, alg) => {
      if (alg !== 'sha-256') throw new Error(`unexpected _sd_alg ${alg}`);
      return new Uint8Array(createHash('sha256').update(typeof data === 'string' ? data : Buffer.from(data)).digest());
    },
    verifier: async (data, signature) => {
      try {
        await compactVerify(`${data}.${signature}`, key, { algorithms: ['ES256'] });
        return true;
      } catch {
        return false;
      }
    },
  });
  // verify() checks the signature, every disclosure's digest and exp, and returns the disclosed claims
  const { payload: claims } = await sdJwt.verify(credential);
  const payload = decodeJwt(issuerJwt); // as signed: attributes only as _sd digests
  // an issued SD-JWT ends with '~' (no key binding JWT): the parts between are the disclosures
  const disclosures = rest.filter((part) => part.length > 0).length;
  return { header, payload, claims: claims as Record<string, unknown>, disclosures };
}
