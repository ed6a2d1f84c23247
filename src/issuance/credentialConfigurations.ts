import type { CredentialType } from '../config/schema.js';
import { textsOf } from '../i18n/catalogues.js';

export const SD_JWT_VC_FORMAT = 'dc+sd-jwt';

/** Proof algorithms the credential endpoint accepts for the holder's key (OpenID4VCI 1.0 §8.2.1.1). */
export const PROOF_SIGNING_ALGS = ['ES256', 'EdDSA'];

/** The type's `vct` (SD-JWT VC §3.2.2.1.1): configured, or `{base_url}/types/<name>`. */
export function vctFor(type: CredentialType, baseUrl: string): string {
  return type.vct ?? `${baseUrl}/types/${type.name}`;
}

/** The access-token scope that authorises issuing one type: the type's name. */
export function scopeFor(type: CredentialType): string {
  return type.name;
}

/**
 * One entry of `credential_configurations_supported` (OpenID4VCI 1.0 §12.2.4, Appendix A.3.2 for
 * `dc+sd-jwt`): id = the type's name, holder binding by JWK from a `jwt` proof, display metadata for the
 * credential and each attribute under `credential_metadata`.
 */
export function credentialConfigurationFor(type: CredentialType, baseUrl: string) {
  return {
    format: SD_JWT_VC_FORMAT,
    scope: scopeFor(type),
    vct: vctFor(type, baseUrl),
    cryptographic_binding_methods_supported: ['jwk' as const],
    credential_signing_alg_values_supported: ['ES256'],
    // OpenID4VCI 1.0 §12.2.4, Appendix D.1: `key_attestations_required` (here without key_storage or
    // user_authentication levels) says that a proof without a key attestation is refused
    proof_types_supported: {
      jwt: { proof_signing_alg_values_supported: PROOF_SIGNING_ALGS, ...(type.keyAttestation === 'required' ? { key_attestations_required: {} } : {}) },
    },
    credential_metadata: {
      // OpenID4VCI 1.0 §12.2.4: one entry per language the config gives the name in
      display: textsOf(type.displayName, type.name).map(({ locale, text }) => ({ name: text, locale })),
      claims: Object.entries(type.attributes).map(([name, spec]) => ({
        path: [name],
        mandatory: spec.required,
        display: textsOf(spec.label, name).map(({ locale, text }) => ({ name: text, locale })),
      })),
    },
  };
}

export function credentialConfigurationsFor(types: CredentialType[], baseUrl: string) {
  return Object.fromEntries(types.map((type) => [type.name, credentialConfigurationFor(type, baseUrl)]));
}
