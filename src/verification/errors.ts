import { say, type Say } from '../i18n/catalogues.js';

/**
 * Why a presentation was refused. The names are stable: tests and the logs (outcome only, D17) use them.
 */
export type RefusalReason =
  // the response itself
  | 'malformed_response'
  | 'vp_token_too_large'
  | 'unrequested_credential'
  | 'missing_credential'
  | 'too_many_presentations'
  | 'missing_claims'
  // one presentation (SD-JWT VC with key binding)
  | 'malformed_presentation'
  | 'unsupported_credential'
  | 'key_binding_missing'
  | 'issuer_not_trusted'
  | 'issuer_keys_unavailable'
  | 'unknown_issuer_key'
  | 'issuer_signature_invalid'
  | 'wrong_vct'
  | 'credential_expired'
  | 'credential_not_yet_valid'
  | 'disclosure_not_in_credential'
  | 'holder_key_missing'
  | 'key_binding_invalid'
  | 'key_binding_signature_invalid'
  | 'wrong_audience'
  | 'wrong_nonce'
  | 'stale_key_binding'
  | 'wrong_sd_hash'
  | 'credential_status_invalid'
  | 'credential_revoked'
  | 'credential_suspended'
  | 'credential_status_unavailable'
  | 'presentation_invalid'
  // one mdoc presentation (ISO/IEC 18013-5 DeviceResponse)
  | 'mdoc_invalid'
  | 'mdoc_wrong_doctype'
  | 'mdoc_issuer_not_trusted'
  | 'mdoc_issuer_signature_invalid'
  | 'mdoc_not_valid_now'
  | 'mdoc_expired'
  | 'mdoc_not_yet_valid'
  | 'mdoc_digest_mismatch'
  | 'mdoc_device_signature_invalid'
  | 'mdoc_device_mac_unsupported';

/** What the holder reads on the prompt page for each reason (src/i18n/en.ts `refusal.*`): no claim values, no protocol jargon. */
export function personMessage(reason: RefusalReason): Say {
  return say(`refusal.${reason}`);
}

/**
 * A refused Authorization Response. `description` goes to the wallet as `error_description` (it names the
 * field or the rule, never a claim value); the person on the prompt page reads `personMessage(reason)`.
 */
export class VerificationRefusal extends Error {
  readonly reason: RefusalReason;
  /** OpenID4VP / RFC 6749 error code answered to the wallet */
  readonly error: 'invalid_request';

  constructor(reason: RefusalReason, description: string) {
    super(description);
    this.name = 'VerificationRefusal';
    this.reason = reason;
    this.error = 'invalid_request';
  }
}

/** A refusal for `reason`, described by `description` (the wallet's error_description). */
export const refuse = (reason: RefusalReason, description: string) => new VerificationRefusal(reason, description);

/**
 * A library's reason, when it is a short plain sentence: some of the libraries' messages embed what they failed
 * on (a JWT, a CBOR value, a schema dump), which may carry claim values, and those never leave verification (D17).
 */
export function libraryReason(err: unknown): string {
  const message = err instanceof Error ? err.message : '';
  return /^[A-Za-z0-9 _:'-]{1,120}$/.test(message) ? `: ${message}` : '';
}
