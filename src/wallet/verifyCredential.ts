import { decodeJws } from './jws.js';
import { digest } from '@sd-jwt/crypto-nodejs';
import { SDJwtInstance } from '@sd-jwt/core';
import { calculateJwkThumbprint, compactVerify, importJWK, type JWK } from 'jose';
import { jsonOrOAuthError, WalletError } from './errors.js';
import { wellKnownUrl } from './metadata.js';

/** Claims the SD-JWT VC itself carries, as opposed to the holder's attributes. */
const REGISTERED_CLAIMS = new Set(['iss', 'sub', 'aud', 'iat', 'nbf', 'exp', 'jti', 'cnf', 'vct', 'vct#integrity', 'status', '_sd_alg']);

export interface VerifiedCredential {
  issuer: string;
  vct: string;
  /** epoch seconds, when the credential has one */
  expiresAt?: number;
  /** the disclosed attributes */
  claims: Record<string, unknown>;
}

/** SD-JWT VC §5: the issuer's keys from `/.well-known/jwt-vc-issuer/<path>` (inline `jwks` or `jwks_uri`). */
export async function fetchIssuerKeys(issuer: string, fetchImpl: typeof fetch): Promise<JWK[]> {
  const metadata = await jsonOrOAuthError(await fetchImpl(wellKnownUrl(issuer, 'jwt-vc-issuer')), 'fetching the SD-JWT VC issuer metadata');
  if (metadata.issuer !== issuer) throw new WalletError(`SD-JWT VC issuer metadata names ${String(metadata.issuer)}, not ${issuer}`);
  let jwks = metadata.jwks as { keys?: unknown } | undefined;
  if (!jwks && typeof metadata.jwks_uri === 'string') jwks = await jsonOrOAuthError(await fetchImpl(metadata.jwks_uri), 'fetching the issuer JWKS');
  if (!jwks || !Array.isArray(jwks.keys)) throw new WalletError('SD-JWT VC issuer metadata has no keys');
  return jwks.keys as JWK[];
}

/**
 * Checks a received SD-JWT VC before keeping it: `typ dc+sd-jwt`, issued by the issuer we asked, signed by
 * one of its published keys, disclosures matching their digests, not expired, of the offered `vct`, and
 * bound (`cnf.jwk`) to the key the wallet proved.
 */
export async function verifyReceivedCredential(
  credential: string,
  expected: { credentialIssuer: string; vct?: string; holderPublicJwk: JWK },
  fetchImpl: typeof fetch,
): Promise<VerifiedCredential> {
  const issuerJwt = credential.split('~')[0];
  const { header, payload } = decodeJws(issuerJwt, 'the issuer returned a credential that is not an SD-JWT');
  if (header.typ !== 'dc+sd-jwt') throw new WalletError(`credential typ is ${String(header.typ)}, expected dc+sd-jwt`);
  if (payload.iss !== expected.credentialIssuer) throw new WalletError(`credential iss is ${String(payload.iss)}, expected ${expected.credentialIssuer}`);

  const keys = (await fetchIssuerKeys(expected.credentialIssuer, fetchImpl)).filter((k) => header.kid === undefined || k.kid === header.kid);
  if (!keys.length) throw new WalletError('none of the issuer\'s published keys matches the credential\'s kid');
  // @sd-jwt/core, not sd-jwt-vc: a credential just issued is valid, and its status list is the verifier's to check
  const sdJwt = new SDJwtInstance({ hasher: digest, verifier: verifierFor(keys, String(header.alg)) });
  try {
    await sdJwt.verify(credential);
  } catch (err) {
    throw new WalletError(`the credential does not verify: ${(err as Error).message}`);
  }

  if (typeof payload.vct !== 'string' || (expected.vct !== undefined && payload.vct !== expected.vct)) {
    throw new WalletError(`credential vct is ${String(payload.vct)}, expected ${expected.vct}`);
  }
  const cnf = payload.cnf as { jwk?: JWK } | undefined;
  if (!cnf?.jwk || (await calculateJwkThumbprint(cnf.jwk)) !== (await calculateJwkThumbprint(expected.holderPublicJwk))) {
    throw new WalletError('the credential is not bound to the key this wallet proved');
  }

  const disclosed = (await sdJwt.getClaims(credential)) as Record<string, unknown>;
  const claims = Object.fromEntries(Object.entries(disclosed).filter(([name]) => !REGISTERED_CLAIMS.has(name)));
  return {
    issuer: expected.credentialIssuer,
    vct: payload.vct,
    ...(typeof payload.exp === 'number' ? { expiresAt: payload.exp } : {}),
    claims,
  };
}

/** Asymmetric algorithms only: a MAC or `none` never proves who issued a credential. */
const ISSUER_ALGS = ['ES256', 'ES384', 'ES512', 'EdDSA', 'Ed25519', 'PS256', 'RS256'];

function verifierFor(keys: JWK[], alg: string) {
  return async (data: string, signature: string): Promise<boolean> => {
    if (!ISSUER_ALGS.includes(alg)) return false;
    for (const jwk of keys) {
      try {
        await compactVerify(`${data}.${signature}`, await importJWK(jwk, alg), { algorithms: [alg] });
        return true;
      } catch {
        // try the next key
      }
    }
    return false;
  };
}
