import { createPrivateKey, type JsonWebKey } from 'node:crypto';
import { compactDecrypt, decodeProtectedHeader, exportJWK, generateKeyPair, type JWK } from 'jose';
import { say } from '../../i18n/catalogues.js';
import { randomBase64url } from '../../random.js';
import { ANNEX_C_NONCE_BYTES, type AnnexCKey } from '../annexC.js';
import type { VerifierDeps } from '../deps.js';
import { RESPONSE_ALG, RESPONSE_ENC_VALUES } from '../requestObject.js';
import { failed, withinRateLimits } from './outcomes.js';

/** Encryption key ids: 128 random bits, base64url. */
const KID = /^[A-Za-z0-9_-]{22}$/;

/** OpenID4VP 1.0 §8.3 and HAIP 1.0: a key of the request's own, ECDH-ES on P-256, found again by its kid. */
export async function newEncryptionKey(): Promise<JWK> {
  const { privateKey } = await generateKeyPair(RESPONSE_ALG, { crv: 'P-256', extractable: true });
  return { ...(await exportJWK(privateKey)), kid: randomBase64url(16), use: 'enc', alg: RESPONSE_ALG };
}

/** ISO/IEC 18013-7 Annex C: the EncryptionInfo nonce and a P-256 key of the request's own, the HPKE recipient. */
export async function newAnnexCKey(): Promise<AnnexCKey> {
  const { privateKey } = await generateKeyPair('ECDH-ES', { crv: 'P-256', extractable: true });
  const { kty, crv, x, y, d } = await exportJWK(privateKey);
  return { nonce: randomBase64url(ANNEX_C_NONCE_BYTES), recipientKey: { kty, crv, x, y, d } };
}

/** The public half of a request's encryption key, as `client_metadata.jwks` publishes it. */
export function publicEncryptionKey({ d: _d, ...rest }: JWK): JWK {
  return rest;
}

export type Refusal = { status: number; error: string; description: string };

/**
 * The parameters of an encrypted Authorization Response (OpenID4VP 1.0 §8.3): the JWE names the request's
 * key by its `kid`; it is decrypted with that key only (jose, ECDH-ES, A128GCM or A256GCM). A JWE that does
 * not decrypt, or that carries another request's state, ends the request whose key it names.
 */
export async function decryptResponse(
  deps: Pick<VerifierDeps, 'requests' | 'onFailed' | 'rateLimits'>,
  jwe: string,
  address: string,
): Promise<{ params: Record<string, unknown> } | { refusal: Refusal }> {
  let kid: unknown;
  try {
    kid = decodeProtectedHeader(jwe).kid;
  } catch {
    await withinRateLimits(deps, address);
    return { refusal: { status: 400, error: 'invalid_request', description: 'response: not a JWE' } };
  }
  const record = typeof kid === 'string' && KID.test(kid) ? await deps.requests.findByKid(kid) : undefined;
  await withinRateLimits(deps, address, record?.clientId);
  if (!record?.encryptionKey)
    return {
      refusal: {
        status: 400,
        error: 'invalid_request',
        description: 'response: the JWE kid names no pending request of this verifier',
      },
    };
  const endRequest = async (description: string) => {
    const taken = await deps.requests.takeByState(record.state);
    if (taken) await failed(deps, taken.record, say('refusal.malformed_response'), description);
    return { refusal: { status: 400, error: 'invalid_request', description } };
  };
  const decrypted = await decryptWith(record.encryptionKey, jwe);
  if ('why' in decrypted) return endRequest(decrypted.why);
  if (decrypted.params.state !== record.state)
    return endRequest("response: the encrypted response carries another request's state");
  return decrypted;
}

/** A response JWE decrypted with a request's own key (ECDH-ES, A128GCM or A256GCM): its JSON object, or why not. */
export async function decryptWith(
  key: JWK,
  jwe: string,
): Promise<{ params: Record<string, unknown> } | { why: string }> {
  let plaintext: Uint8Array;
  try {
    // a KeyObject: node imports a JWK in a third of the time WebCrypto (jose's importJWK) takes
    ({ plaintext } = await compactDecrypt(jwe, createPrivateKey({ key: key as JsonWebKey, format: 'jwk' }), {
      keyManagementAlgorithms: [RESPONSE_ALG],
      contentEncryptionAlgorithms: RESPONSE_ENC_VALUES,
    }));
  } catch {
    return { why: "response: the JWE does not decrypt with this request's key" };
  }
  let params: unknown;
  try {
    params = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(plaintext));
  } catch {
    params = undefined;
  }
  if (typeof params !== 'object' || params === null || Array.isArray(params))
    return { why: 'response: the decrypted response is not a JSON object' };
  return { params: params as Record<string, unknown> };
}
