import { cborDecode, type Document, type MdocContext } from '@owf/mdoc';
import { AEAD_AES_128_GCM, CipherSuite, KDF_HKDF_SHA256, KEM_DHKEM_P256_HKDF_SHA256 } from 'hpke';
import { deviceAuthenticationBytes, type AnnexCKey } from './annexC.js';
import { refuse } from './errors.js';
import { MDOC_LIMIT } from './mdocDocument.js';

/**
 * ISO/IEC 18013-7:2025 Annex C, the answer: the wallet's `EncryptedResponse`, read strictly and opened (HPKE
 * by `hpke`) with the request's own key over the `dcapi` SessionTranscript, and the device signature of each
 * document over that transcript.
 */

/** The largest DeviceResponse accepted, as for every mdoc presentation. */
export const DEVICE_RESPONSE_LIMIT = MDOC_LIMIT;
/** The largest EncryptedResponse accepted, decoded: the DeviceResponse, the AEAD tag, `enc` and the envelope. */
export const ENCRYPTED_RESPONSE_LIMIT = DEVICE_RESPONSE_LIMIT + 16 + 1024;

/** Annex C: HPKE base mode, DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-128-GCM (RFC 9180 ids 0x0010, 0x0001, 0x0001). */
const SUITE = new CipherSuite(KEM_DHKEM_P256_HKDF_SHA256, KDF_HKDF_SHA256, AEAD_AES_128_GCM);
/** DHKEM(P-256): `enc` is an uncompressed P-256 point (RFC 9180 §7.1.1, Nenc 65) */
const ENC_LENGTH = 65;

const b64uBytes = (value: string | undefined): Uint8Array => new Uint8Array(Buffer.from(value ?? '', 'base64url'));

/** The answer's parts: `EncryptedResponse = ["dcapi", {"enc": bstr, "cipherText": bstr}]`. */
export interface EncryptedResponse {
  enc: Uint8Array;
  cipherText: Uint8Array;
}

const malformed = (description: string) => refuse('malformed_response', `${description} (ISO/IEC 18013-7 Annex C)`);

/**
 * The wallet's `response` (base64url CBOR EncryptedResponse): at most ENCRYPTED_RESPONSE_LIMIT bytes, one
 * CBOR item with nothing after it, of exactly the Annex C shape, `enc` a DHKEM(P-256) encapsulated key.
 */
export function readEncryptedResponse(response: unknown): EncryptedResponse {
  if (typeof response !== 'string' || response.length === 0)
    throw malformed('response: the answer has no EncryptedResponse (base64url CBOR)');
  if (response.length > Math.ceil((ENCRYPTED_RESPONSE_LIMIT * 4) / 3))
    throw refuse('vp_token_too_large', `response: the EncryptedResponse exceeds ${ENCRYPTED_RESPONSE_LIMIT} bytes`);
  if (!/^[A-Za-z0-9_-]+$/.test(response) || response.length % 4 === 1)
    throw malformed('response: the EncryptedResponse is not base64url without padding');
  let decoded: unknown;
  try {
    decoded = cborDecode(b64uBytes(response));
  } catch {
    throw malformed(
      'response: the EncryptedResponse is not one well-formed CBOR item (truncated, or with bytes after it)',
    );
  }
  if (!Array.isArray(decoded) || decoded.length !== 2 || decoded[0] !== 'dcapi' || !(decoded[1] instanceof Map))
    throw malformed('response: the EncryptedResponse is not ["dcapi", {enc, cipherText}]');
  const body = decoded[1] as Map<unknown, unknown>;
  const enc = body.get('enc');
  const cipherText = body.get('cipherText');
  if (body.size !== 2 || !(enc instanceof Uint8Array) || !(cipherText instanceof Uint8Array))
    throw malformed('response: the EncryptedResponse holds other members than the byte strings enc and cipherText');
  if (enc.length !== ENC_LENGTH || enc[0] !== 0x04)
    throw malformed(
      'response: enc is not a DHKEM(P-256, HKDF-SHA256) encapsulated key (65 bytes, uncompressed); the suite is DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-128-GCM',
    );
  return { enc: new Uint8Array(enc), cipherText: new Uint8Array(cipherText) };
}

/**
 * Opens the answer (HPKE base mode, `info` the CBOR SessionTranscript, `aad` empty) with the request's key:
 * the DeviceResponse bytes. One that does not open was sealed to another key, over another transcript
 * (another origin or request), or with another suite.
 */
export async function openResponse(
  key: AnnexCKey,
  encrypted: EncryptedResponse,
  info: Uint8Array,
): Promise<Uint8Array> {
  const { x, y, d } = key.recipientKey;
  let plaintext: Uint8Array;
  try {
    const keyPair = {
      privateKey: await SUITE.DeserializePrivateKey(b64uBytes(d), false),
      publicKey: await SUITE.DeserializePublicKey(new Uint8Array([0x04, ...b64uBytes(x), ...b64uBytes(y)])),
    };
    plaintext = await SUITE.Open(keyPair, encrypted.enc, encrypted.cipherText, { info, aad: new Uint8Array() });
  } catch {
    throw malformed(
      "response: the EncryptedResponse does not open with this request's key and SessionTranscript (HPKE DHKEM(P-256, HKDF-SHA256), HKDF-SHA256, AES-128-GCM; info: the dcapi SessionTranscript of this request's EncryptionInfo and this origin)",
    );
  }
  if (plaintext.length > DEVICE_RESPONSE_LIMIT)
    throw refuse('vp_token_too_large', `response: the DeviceResponse exceeds ${DEVICE_RESPONSE_LIMIT} bytes`);
  return plaintext;
}

/**
 * The device signature of an Annex C document (ISO/IEC 18013-5 §9.1.3.6) over DeviceAuthentication with the
 * `dcapi` transcript, by the MSO device key. @owf/mdoc 0.6 decodes a SessionTranscript only with the
 * handovers it knows, and `dcapi` is not one of them (docs/decisions.md): DeviceAuthenticationBytes are built
 * here with the library's CBOR codec, and the detached COSE_Sign1 is checked through its public Sign1 API
 * (`detachedPayload`, `verifySignature`) with the caller's context, as every other check. A document without
 * a device signature is false; a key or algorithm the context refuses throws its error.
 */
export async function annexCDeviceSignatureValid(
  document: Document,
  transcript: unknown[],
  ctx: Pick<MdocContext, 'cose' | 'x509'>,
): Promise<boolean> {
  const signature = document.deviceSigned.deviceAuth.deviceSignature;
  if (!signature) return false;
  signature.detachedPayload = deviceAuthenticationBytes(
    transcript,
    document.docType,
    document.deviceSigned.deviceNamespaces.encodedStructure,
  );
  return signature.verifySignature(
    { key: document.issuerSigned.issuerAuth.mobileSecurityObject.deviceKeyInfo.deviceKey },
    ctx,
  );
}
