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

/** What the holder reads on the prompt page for each reason: no claim values, no protocol jargon. */
const PERSON_MESSAGES: Record<RefusalReason, string> = {
  malformed_response: 'The wallet sent an answer this service could not read.',
  vp_token_too_large: 'The wallet sent more data than this service accepts.',
  unrequested_credential: 'The wallet presented a credential that was not asked for.',
  missing_credential: 'The wallet did not present every credential that was asked for.',
  too_many_presentations: 'The wallet presented more credentials than were asked for.',
  missing_claims: 'The presented credential does not contain everything that was asked for.',
  malformed_presentation: 'The wallet sent a credential this service could not read.',
  unsupported_credential: 'The presented credential is of a kind this service does not accept.',
  key_binding_missing: 'The wallet did not prove that the credential belongs to it.',
  issuer_not_trusted: 'The credential was issued by an issuer this service does not trust.',
  issuer_keys_unavailable: "The credential issuer's keys could not be retrieved. Please try again later.",
  unknown_issuer_key: 'The credential was not signed with a key of its issuer.',
  issuer_signature_invalid: "The credential's signature is not valid.",
  wrong_vct: 'The presented credential is not of the type that was asked for.',
  credential_expired: 'The presented credential has expired.',
  credential_not_yet_valid: 'The presented credential is not valid yet.',
  disclosure_not_in_credential: 'The presented credential was altered.',
  holder_key_missing: 'The presented credential is not bound to a wallet key.',
  key_binding_invalid: "The wallet's proof for this request is not valid.",
  key_binding_signature_invalid: "The wallet's proof for this request is not valid.",
  wrong_audience: "The wallet's proof was made for another service.",
  wrong_nonce: "The wallet's proof was made for another request.",
  stale_key_binding: "The wallet's proof is too old. Please try again.",
  wrong_sd_hash: "The wallet's proof does not match the presented credential.",
  credential_status_invalid: "The presented credential's status could not be checked.",
  credential_revoked: 'The presented credential has been revoked by its issuer.',
  credential_suspended: 'The presented credential is suspended by its issuer.',
  credential_status_unavailable: "The presented credential's status could not be checked right now. Please try again later.",
  presentation_invalid: 'The presented credential could not be verified.',
  mdoc_invalid: 'The wallet sent a document this service could not read.',
  mdoc_wrong_doctype: 'The presented document is not of the type that was asked for.',
  mdoc_issuer_not_trusted: 'The document was issued by an issuer this service does not trust.',
  mdoc_issuer_signature_invalid: "The document's signature is not valid.",
  mdoc_not_valid_now: 'The presented document has expired or is not valid yet.',
  mdoc_expired: 'The presented document has expired.',
  mdoc_not_yet_valid: 'The presented document is not valid yet.',
  mdoc_digest_mismatch: 'The presented document was altered.',
  mdoc_device_signature_invalid: "The wallet's proof for this request is not valid.",
  mdoc_device_mac_unsupported: 'The wallet proved the document in a way this service does not accept.',
};

export function personMessage(reason: RefusalReason): string {
  return PERSON_MESSAGES[reason];
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
