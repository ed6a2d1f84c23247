import type { JWK } from 'jose';
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader } from 'jose';
import { errors } from 'oidc-provider';
import { duplicateKey } from '../rules/batch.js';

/**
 * The keys a credential request proves (OpenID4VCI 1.0 §8.2, Appendix F), one credential each: read from the
 * proofs oidc-provider verified (src/issuance/issueCredential.ts).
 */

/**
 * The proofs oidc-provider verified: `jwt` proofs (with the key attestation of their headers, verified, as
 * `key_attestation`), or one key attestation (`attestation`) whose attested keys are the batch's.
 */
type VerifiedAttestation = { attestedKeys?: unknown[]; payload?: Record<string, unknown> };
export type VerifiedProofs =
  { jwt?: string[]; attestation?: VerifiedAttestation; key_attestation?: VerifiedAttestation } | undefined;

/**
 * An mdoc's device key (ISO/IEC 18013-5 §9.1.3.6): a P-256 key, which HAIP 1.0 requires wallets to sign
 * device authentication with (ES256); the mdoc configuration takes ES256 proofs only.
 */
export function deviceKeyOf(jwk: JWK, at: number, keys: JWK[]): JWK {
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || typeof jwk.x !== 'string' || typeof jwk.y !== 'string') {
    throw new errors.InvalidProof(
      `${keys.length > 1 ? `key ${at} of the request: ` : ''}jwt proof jwk must be an EC P-256 key for mso_mdoc (the mdoc's device key), not ${String(jwk.kty)} ${String(jwk.crv)}`,
    );
  }
  return jwk;
}

/**
 * The keys to bind, one credential each (§8.2, Appendix F.3): each `jwt` proof's key, or the `attested_keys` of a
 * key attestation sent alone as the proof (`attestation`). All or nothing: more keys than the type's batch size,
 * or two proofs of one key (each credential needs its own key: ISSU_35), refuse the whole request.
 */
export async function holderKeysOf(proofs: VerifiedProofs, batchSize: number, configurationId: string): Promise<JWK[]> {
  const attested = proofs?.attestation?.attestedKeys;
  attested?.forEach((jwk, i) => {
    const kty = (jwk as JWK).kty;
    if (kty !== 'EC' && kty !== 'OKP')
      throw new errors.InvalidProof(`attestation proof attested_keys[${i}] is not an EC or OKP key this issuer binds`);
  });
  const keys = attested
    ? (attested as JWK[])
    : (proofs?.jwt ?? []).map((proof, i, all) => holderKeyOf(proof, all.length > 1 ? `proofs.jwt[${i}]: ` : ''));
  if (keys.length === 0) throw new errors.InvalidProof('a jwt proof of possession of the holder key is required');
  const where = attested ? 'attestation proof attested_keys' : 'proofs.jwt';
  if (keys.length > batchSize)
    throw new errors.InvalidProof(
      batchSize > 1
        ? `${where} names ${keys.length} keys: at most ${batchSize} for ${configurationId} (its batch_size)`
        : `${where} names ${keys.length} keys: ${configurationId} is issued one credential per request`,
    );
  const twice = duplicateKey(await Promise.all(keys.map((k) => calculateJwkThumbprint(k))));
  if (twice)
    throw new errors.InvalidProof(
      `${where}[${twice.at}] is the key of ${where}[${twice.first}]: each credential needs its own key`,
    );
  return keys;
}

/**
 * How long a c_nonce is accepted: oidc-provider 9's ServerChallenge (lib/helpers/challenge.js) derives
 * c_nonces per 60 s step, hands out the next step's and accepts a window of five steps around the current
 * one (its `CHALLENGE_OK_WINDOW`, 300 s, not exported), so a c_nonce is good for at most 300 s.
 */
export const C_NONCE_LIFETIME = 300;
/** oidc-provider's default `clockTolerance` (15 s), which the wallet-facing provider keeps. */
export const PROOF_CLOCK_TOLERANCE = 15;

/**
 * OpenID4VCI 1.0 §8.2.1.1: the key to bind is the proof's `jwk` header (our only binding method). The
 * provider has verified the proof with that key by now (signature, `typ`, `aud`, c_nonce, that `iat` is
 * there), so only its header and `iat` are read here. oidc-provider does not bound `iat`: a proof is
 * refused here when it was made before its c_nonce could have been issued (older than the c_nonce's
 * lifetime plus the clock tolerance), or more than the tolerance in the future.
 */
function holderKeyOf(proof: string | undefined, at = '', now = Math.floor(Date.now() / 1000)): JWK {
  if (!proof) throw new errors.InvalidProof('a jwt proof of possession of the holder key is required');
  let header: { jwk?: unknown };
  let iat: unknown;
  try {
    header = decodeProtectedHeader(proof);
    iat = decodeJwt(proof).iat;
  } catch {
    throw new errors.InvalidProof(`${at}jwt proof is not a valid JWT`);
  }
  if (typeof iat !== 'number' || !Number.isFinite(iat))
    throw new errors.InvalidProof(`${at}jwt proof iat must be a number`);
  if (iat < now - C_NONCE_LIFETIME - PROOF_CLOCK_TOLERANCE)
    throw new errors.InvalidProof(`${at}jwt proof iat is too old: sign a new proof with a fresh c_nonce`);
  if (iat > now + PROOF_CLOCK_TOLERANCE) throw new errors.InvalidProof(`${at}jwt proof iat is in the future`);
  const jwk = header.jwk;
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) {
    throw new errors.InvalidProof(
      `${at}jwt proof must carry the holder key in its jwk header (cryptographic binding method jwk)`,
    );
  }
  return jwk as JWK;
}
