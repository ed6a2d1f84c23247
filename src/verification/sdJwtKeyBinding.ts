import { SDJwtInstance } from '@sd-jwt/core';
import { compactVerify, decodeJwt, decodeProtectedHeader, importJWK, type JWK } from 'jose';
import { hashB64, hashBytes, isObject } from './disclosures.js';
import { libraryReason, refuse } from './errors.js';

/** Key binding signature algorithms: what `client_metadata.vp_formats_supported` announces. */
export const KB_ALGS = ['ES256', 'EdDSA'];
/** A key binding JWT older than this (seconds) is refused, whatever the clock tolerance. */
export const KB_MAX_AGE = 300;

/** SD-JWT VC §3.2.2.2 / RFC 7800: the holder key the key binding JWT must be signed with. */
export function holderKeyOf(payload: Record<string, unknown>): JWK {
  const holderJwk = (payload.cnf as { jwk?: unknown } | undefined)?.jwk;
  if (!isPublicJwk(holderJwk))
    throw refuse('holder_key_missing', 'the credential has no cnf.jwk public key to bind it to its holder');
  return holderJwk;
}

/** What a key binding JWT is checked against. */
export interface KeyBindingExpectations {
  clientId: string;
  nonce: string;
  /** the SD-JWT up to and including the last `~`, for `sd_hash` */
  sdJwtWithoutKb: string;
  sdAlg: string;
  now: number;
  tolerance: number;
}

/** RFC 9901 §4.3: the key binding JWT's header and claims (its signature is the library's, verifySdJwt). Returns its alg. */
export function checkKeyBindingJwt(kbJwt: string, expected: KeyBindingExpectations): string {
  const { now, tolerance } = expected;
  let kbHeader: Record<string, unknown>;
  let kbPayload: Record<string, unknown>;
  try {
    kbHeader = decodeProtectedHeader(kbJwt) as Record<string, unknown>;
    kbPayload = decodeJwt(kbJwt) as Record<string, unknown>;
  } catch {
    throw refuse('key_binding_invalid', 'the key binding JWT is not a JWT');
  }
  // RFC 9901 §4.3: typ kb+jwt
  if (kbHeader.typ !== 'kb+jwt') throw refuse('key_binding_invalid', 'the key binding JWT typ is not kb+jwt');
  if (typeof kbHeader.alg !== 'string' || !KB_ALGS.includes(kbHeader.alg)) {
    throw refuse(
      'key_binding_invalid',
      `the key binding JWT's signature algorithm (alg) is not accepted; accepted: ${KB_ALGS.join(', ')}`,
    );
  }
  // OpenID4VP 1.0 §B.3.6, RFC 9901 §7.3 step 5: `aud` is our client identifier, exactly
  if (kbPayload.aud !== expected.clientId)
    throw refuse(
      'wrong_audience',
      expected.clientId.startsWith('origin:')
        ? `the key binding JWT aud is not ${expected.clientId} (OpenID4VP 1.0 Appendix A.4: the origin, for signed requests too)`
        : "the key binding JWT aud is not this verifier's client_id",
    );
  // OpenID4VP 1.0 §B.3.6: `nonce` is the request's (the library checks it again)
  if (kbPayload.nonce !== expected.nonce)
    throw refuse('wrong_nonce', 'the key binding JWT nonce is not the nonce of this request');
  // RFC 9901 §7.3 step 5: `iat` within an acceptable window: not older than KB_MAX_AGE, not in the future
  if (typeof kbPayload.iat !== 'number') throw refuse('key_binding_invalid', 'the key binding JWT has no iat');
  if (kbPayload.iat - tolerance > now) throw refuse('stale_key_binding', 'the key binding JWT iat is in the future');
  if (now - kbPayload.iat > KB_MAX_AGE + tolerance)
    throw refuse('stale_key_binding', `the key binding JWT is older than ${KB_MAX_AGE} seconds`);
  // RFC 9901 §4.3.1: sd_hash over the presentation up to and including the last `~` (the library checks it again)
  if (kbPayload.sd_hash !== hashB64(expected.sdJwtWithoutKb, expected.sdAlg))
    throw refuse('wrong_sd_hash', 'the key binding JWT sd_hash does not match the presentation');
  return kbHeader.alg;
}

/**
 * The library (@sd-jwt/core): time claims, KB-JWT signature by cnf.jwk, nonce, sd_hash. The issuer signature
 * was verified before: its callback only checks that the library looks at that same JWT. Its errors do not
 * tell which signature failed, so the callbacks record it. Returns the payload with the disclosed claims.
 */
export async function verifySdJwt(
  presentation: string,
  signed: { issuerJwt: string; holderJwk: JWK; kbAlg: string },
  check: { nonce: string; now: number; tolerance: number },
): Promise<Record<string, unknown>> {
  let issuerSignatureFailed = false;
  let kbSignatureFailed = false;
  const sdJwt = new SDJwtInstance({
    hasher: (data, algorithm) => hashBytes(typeof data === 'string' ? data : Buffer.from(data), algorithm),
    verifier: async (data, signature) => {
      const ok = `${data}.${signature}` === signed.issuerJwt;
      if (!ok) issuerSignatureFailed = true;
      return ok;
    },
    kbVerifier: async (data, signature) => {
      const ok = await verifyWithHolderKey(`${data}.${signature}`, signed.holderJwk, signed.kbAlg);
      if (!ok) kbSignatureFailed = true;
      return ok;
    },
  });
  let verified: Awaited<ReturnType<SDJwtInstance<Record<string, unknown>>['verify']>>;
  try {
    verified = await sdJwt.verify(presentation, {
      keyBindingNonce: check.nonce,
      currentDate: check.now,
      skewSeconds: check.tolerance,
    });
  } catch (err) {
    if (issuerSignatureFailed)
      throw refuse('issuer_signature_invalid', "the credential signature does not verify with the issuer's keys");
    if (kbSignatureFailed)
      throw refuse('key_binding_signature_invalid', "the key binding JWT is not signed by the credential's cnf.jwk");
    throw refuse('presentation_invalid', `the presentation does not verify${libraryReason(err)}`);
  }
  if (!verified.kb) throw refuse('key_binding_missing', 'the key binding JWT was not verified'); // defence in depth for the holder-binding rule in presentation.ts
  return verified.payload as Record<string, unknown>;
}

/** The key binding JWT (RFC 9901 §4.3) verified with the credential's cnf.jwk, public members only. */
async function verifyWithHolderKey(jws: string, jwk: JWK, alg: string): Promise<boolean> {
  try {
    await compactVerify(jws, await importJWK(publicMembers(jwk), alg), { algorithms: [alg] });
    return true;
  } catch {
    return false;
  }
}

function publicMembers(jwk: JWK): JWK {
  const { kty, crv, x, y, n, e } = jwk;
  return Object.fromEntries(Object.entries({ kty, crv, x, y, n, e }).filter(([, v]) => v !== undefined)) as JWK;
}

function isPublicJwk(value: unknown): value is JWK {
  if (!isObject(value) || typeof value.kty !== 'string') return false;
  return !('d' in value) && !('p' in value) && !('k' in value);
}
