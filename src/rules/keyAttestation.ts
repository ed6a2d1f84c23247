/**
 * Key attestations (OpenID4VCI 1.0 Appendix D; HAIP 1.0 §4.5.1): the attack potential resistance levels of a
 * key's storage and of the user authentication guarding it (Appendix D.2, ISO/IEC 18045), and what a type
 * requires of them. Pure functions; oidc-provider checks an attestation's levels against the published ones.
 */

/** Appendix D.2's values, weakest first. */
export const KEY_ATTESTATION_LEVELS = [
  'iso_18045_basic',
  'iso_18045_enhanced-basic',
  'iso_18045_moderate',
  'iso_18045_high',
] as const;
export type KeyAttestationLevel = (typeof KEY_ATTESTATION_LEVELS)[number];

/** The levels at or above `least`, strongest first: what `key_attestations_required` lists as accepted. */
export function levelsFrom(least: KeyAttestationLevel): KeyAttestationLevel[] {
  return KEY_ATTESTATION_LEVELS.slice(KEY_ATTESTATION_LEVELS.indexOf(least)).reverse();
}

/**
 * A type's `key_attestations_required` (§12.2.4, Appendix D.1): absent when it requires no key attestation;
 * `{}` when it requires one without levels; else the accepted levels of each the operator set. An attestation
 * is accepted when one of its values is among them (oidc-provider), so a key attested below the least level is
 * refused.
 */
export function keyAttestationsRequired(type: {
  keyAttestation?: 'required' | 'optional';
  keyAttestationLevels?: { keyStorage?: KeyAttestationLevel; userAuthentication?: KeyAttestationLevel };
}): { key_storage?: KeyAttestationLevel[]; user_authentication?: KeyAttestationLevel[] } | undefined {
  if (type.keyAttestation !== 'required') return undefined;
  const levels = type.keyAttestationLevels;
  return {
    ...(levels?.keyStorage ? { key_storage: levelsFrom(levels.keyStorage) } : {}),
    ...(levels?.userAuthentication ? { user_authentication: levelsFrom(levels.userAuthentication) } : {}),
  };
}

/**
 * The Token Status List entry an attestation names (`status.status_list`, draft-ietf-oauth-status-list §6.1;
 * OpenID4VCI 1.0 Appendix D.1 and E for key and wallet attestations); undefined when it names none, `malformed`
 * when its `status` is not one.
 */
export function attestationStatusEntry(
  payload: Record<string, unknown>,
): { idx: number; uri: string } | 'malformed' | undefined {
  const status = payload.status;
  if (status === undefined) return undefined;
  if (typeof status !== 'object' || status === null || Array.isArray(status)) return 'malformed';
  const list = (status as { status_list?: unknown }).status_list;
  // another mechanism than a Token Status List: none this issuer knows how to check
  if (list === undefined) return undefined;
  if (typeof list !== 'object' || list === null) return 'malformed';
  const { idx, uri } = list as { idx?: unknown; uri?: unknown };
  if (typeof idx !== 'number' || !Number.isSafeInteger(idx) || idx < 0 || typeof uri !== 'string') return 'malformed';
  return { idx, uri };
}
