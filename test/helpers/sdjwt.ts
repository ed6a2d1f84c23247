import { createHash, randomBytes } from 'node:crypto';
import { SDJwtVcInstance } from '@sd-jwt/sd-jwt-vc';
import { compactVerify, decodeJwt, decodeProtectedHeader, importJWK, SignJWT, type JWK } from 'jose';

/**
 * Verifies an SD-JWT VC the way an outside verifier would, with @sd-jwt/sd-jwt-vc and jose only, sharing
 * no code with src/issuance: the issuer signature (key chosen by `kid` from the given JWKS, ES256), the
 * disclosure digests, `exp`. Returns the signed header and payload (attributes appear there only as
 * `_sd` digests), the claims with every disclosure applied, and how many disclosures the credential carries.
 */
export async function verifySdJwtVcIndependently(
  credential: string,
  issuerJwks: { keys: JWK[] },
): Promise<{
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
  claims: Record<string, unknown>;
  disclosures: number;
}> {
  const [issuerJwt, ...rest] = credential.split('~');
  const header = decodeProtectedHeader(issuerJwt) as Record<string, unknown>;
  const jwk = issuerJwks.keys.find((k) => k.kid === header.kid);
  if (!jwk) throw new Error(`no issuer key with kid ${String(header.kid)}`);
  const key = await importJWK(jwk, 'ES256');

  const sdJwt = new SDJwtVcInstance({
    hasher: (data, alg) => {
      if (alg !== 'sha-256') throw new Error(`unexpected _sd_alg ${alg}`);
      return new Uint8Array(
        createHash('sha256')
          .update(typeof data === 'string' ? data : Buffer.from(data))
          .digest(),
      );
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

/**
 * An SD-JWT VC signed by a certificate's key, the chain in the `x5c` header (SD-JWT VC §3.5), every attribute
 * a disclosure; built with jose alone. Ends with `~` (no key binding JWT yet).
 */
export async function issueWithX5c(input: {
  x5c: string[];
  key: JWK;
  iss: string;
  vct: string;
  attributes: Record<string, unknown>;
  holder: JWK;
}): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const disclosures = Object.entries(input.attributes).map(([name, value]) =>
    Buffer.from(JSON.stringify([randomBytes(16).toString('base64url'), name, value])).toString('base64url'),
  );
  const digests = disclosures.map((d) => createHash('sha256').update(d).digest('base64url')).sort();
  const jwt = await new SignJWT({
    iss: input.iss,
    vct: input.vct,
    iat: now,
    exp: now + 3600,
    cnf: { jwk: input.holder },
    _sd: digests,
    _sd_alg: 'sha-256',
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'dc+sd-jwt', x5c: input.x5c })
    .sign(await importJWK(input.key, 'ES256'));
  return `${jwt}~${disclosures.map((d) => `${d}~`).join('')}`;
}

/** The presentation of an SD-JWT VC with every disclosure and a key binding JWT (RFC 9901 §4.3). */
export async function presentSdJwt(
  credential: string,
  holderKey: JWK,
  kb: { aud: string; nonce: string },
): Promise<string> {
  const key = await importJWK({ ...holderKey, alg: 'ES256' }, 'ES256');
  const kbJwt = await new SignJWT({
    aud: kb.aud,
    nonce: kb.nonce,
    iat: Math.floor(Date.now() / 1000),
    sd_hash: createHash('sha256').update(credential).digest('base64url'),
  })
    .setProtectedHeader({ alg: 'ES256', typ: 'kb+jwt' })
    .sign(key);
  return `${credential}${kbJwt}`;
}
