import type { OpenID4VCICredentialConfiguration } from 'oidc-provider';
import type { CredentialType } from '../config/schema.js';
import { MDOC_FORMAT, SD_JWT_VC_FORMAT } from '../rules/formats.js';
import { claimLabels, credentialDisplay, PLAIN_CARD_SOURCES, type CardSources } from './card.js';
import { reusePolicyOf } from '../rules/batch.js';
import { keyAttestationsRequired } from '../rules/keyAttestation.js';

export { MDOC_FORMAT, SD_JWT_VC_FORMAT };

/** Proof algorithms the credential endpoint accepts for the holder's key (OpenID4VCI 1.0 §8.2.1.1). */
export const PROOF_SIGNING_ALGS = ['ES256', 'EdDSA'];

/** The type's `vct` (SD-JWT VC §3.2.2.1.1): configured, or `{base_url}/types/<name>`. */
export function vctFor(type: CredentialType, baseUrl: string): string {
  return type.vct ?? defaultVct(type, baseUrl);
}

/** `{base_url}/types/<name>`: the vct whose Type Metadata this service serves (src/issuance/typeMetadata.ts). */
export const defaultVct = (type: CredentialType, baseUrl: string): string => `${baseUrl}/types/${type.name}`;

/** The access-token scope that authorises issuing one type: the type's name. */
export function scopeFor(type: CredentialType): string {
  return type.name;
}

/**
 * One entry of `credential_configurations_supported` (OpenID4VCI 1.0 §12.2.4, Appendix A.3.2 for
 * `dc+sd-jwt`): id = the type's name, holder binding by JWK from a `jwt` proof, display metadata for the
 * credential and each attribute under `credential_metadata`.
 */
export function credentialConfigurationFor(
  type: CredentialType,
  baseUrl: string,
  sources: CardSources = PLAIN_CARD_SOURCES,
) {
  return {
    format: SD_JWT_VC_FORMAT,
    scope: scopeFor(type),
    vct: vctFor(type, baseUrl),
    cryptographic_binding_methods_supported: ['jwk' as const],
    credential_signing_alg_values_supported: ['ES256'],
    // OpenID4VCI 1.0 §12.2.4, Appendix D.1: `key_attestations_required` says that a proof without a key
    // attestation (or one below the type's levels) is refused
    proof_types_supported: proofTypesFor(type, PROOF_SIGNING_ALGS),
    credential_metadata: {
      // OpenID4VCI 1.0 §12.2.4: the card in each language the config gives it in (src/issuance/card.ts)
      display: credentialDisplay(type, sources),
      claims: Object.entries(type.attributes).map(([name, spec]) => ({
        path: [name],
        mandatory: spec.required,
        display: claimLabels(name, spec.label, sources).map(({ locale, text }) => ({ name: text, locale })),
      })),
    },
  };
}

/** What key attestations sign with, in an `attestation` proof (the wallet providers' algorithms). */
export const ATTESTATION_SIGNING_ALGS = ['ES256', 'EdDSA'];

/**
 * A configuration's proof types (OpenID4VCI 1.0 §12.2.4, Appendix D, F.3): `jwt` proofs of the holder's keys,
 * with `key_attestations_required` (and the type's levels) when the type requires a key attestation; and, for a
 * type that takes key attestations (`keyAttestation` set), the `attestation` proof type: a key attestation alone,
 * whose `attested_keys` are the keys of the batch.
 */
function proofTypesFor(type: CredentialType, algs: string[]) {
  const required = keyAttestationsRequired(type);
  return {
    jwt: { proof_signing_alg_values_supported: algs, ...(required ? { key_attestations_required: required } : {}) },
    ...(type.keyAttestation
      ? {
          attestation: {
            proof_signing_alg_values_supported: ATTESTATION_SIGNING_ALGS,
            ...(required ? { key_attestations_required: required } : {}),
          },
        }
      : {}),
  };
}

/**
 * The suffix of a type's mdoc configuration id: `<name>.mso_mdoc`. A type's name has no dot (letters,
 * digits, `_`, `-`), so the id can name no other type's SD-JWT configuration, and the SD-JWT VC
 * configuration keeps the type's name as its id.
 */
const MDOC_SUFFIX = `.${MDOC_FORMAT}`;

export const mdocConfigurationId = (type: CredentialType) => `${type.name}${MDOC_SUFFIX}`;

/** The credential type a configuration id names, and in which format (the id need not be one we publish: callers look the type up). */
export function configurationOf(id: string): {
  typeName: string;
  format: typeof SD_JWT_VC_FORMAT | typeof MDOC_FORMAT;
} {
  return id.endsWith(MDOC_SUFFIX)
    ? { typeName: id.slice(0, -MDOC_SUFFIX.length), format: MDOC_FORMAT }
    : { typeName: id, format: SD_JWT_VC_FORMAT };
}

/** The COSE algorithm of our MSOs (ES256, RFC 9053 §2.1) on its P-256 document signer, and its fully specified name (ESP256). */
export const MDOC_SIGNING_ALGS = [-7, -9];
/** Device keys we bind mdocs to: P-256, from an ES256 proof (HAIP 1.0 mandates ES256 for mdoc device signatures). */
export const MDOC_PROOF_SIGNING_ALGS = ['ES256'];

/**
 * A type's mdoc configuration (OpenID4VCI 1.0 Appendix A.2.2): `doctype`, the device key as a COSE key
 * (`cose_key`, taken from the `jwk` of a `jwt` proof), the same scope as the type's SD-JWT VC
 * configuration (§12.2.4: a scope may be shared by configurations; the offer's token carries it), and the
 * attributes as claims at [namespace, element].
 */
export function mdocConfigurationFor(
  type: CredentialType & { mdoc: { doctype: string; namespace: string } },
  sources: CardSources = PLAIN_CARD_SOURCES,
) {
  return {
    format: MDOC_FORMAT,
    scope: scopeFor(type),
    doctype: type.mdoc.doctype,
    cryptographic_binding_methods_supported: ['cose_key'],
    credential_signing_alg_values_supported: MDOC_SIGNING_ALGS,
    proof_types_supported: proofTypesFor(type, MDOC_PROOF_SIGNING_ALGS),
    credential_metadata: {
      display: credentialDisplay(type, sources),
      claims: Object.entries(type.attributes).map(([name, spec]) => ({
        path: [type.mdoc.namespace, name],
        mandatory: spec.required,
        display: claimLabels(name, spec.label, sources).map(({ locale, text }) => ({ name: text, locale })),
      })),
    },
  };
}

const hasMdoc = (type: CredentialType): type is CredentialType & { mdoc: { doctype: string; namespace: string } } =>
  type.mdoc !== undefined;

/** The ids of a type's configurations, the SD-JWT VC one first: what its offers name (the wallet picks one). */
export function configurationIdsOf(type: CredentialType, mdoc: boolean): string[] {
  return mdoc && hasMdoc(type) ? [type.name, mdocConfigurationId(type)] : [type.name];
}

/**
 * `credential_configurations_supported` as published; `mdoc`: whether mdocs can be signed (a document signer
 * exists); `cards`: what the cards are made from; `batchSize`: each type's batch size, published as its
 * `credential_reuse_policy` (src/rules/batch.ts).
 */
export function credentialConfigurationsFor(
  types: CredentialType[],
  baseUrl: string,
  opts: { mdoc?: boolean; cards?: CardSources; batchSize?: (type: CredentialType) => number } = {},
) {
  const sources = opts.cards ?? PLAIN_CARD_SOURCES;
  return Object.fromEntries(
    types.flatMap((type) => [
      [type.name, withReusePolicy(credentialConfigurationFor(type, baseUrl, sources), type, opts.batchSize)] as const,
      ...(opts.mdoc && hasMdoc(type)
        ? [
            [
              mdocConfigurationId(type),
              withReusePolicy(mdocConfigurationFor(type, sources), type, opts.batchSize),
            ] as const,
          ]
        : []),
    ]),
  );
}

/** ARF ISSU_39: a batch type's configurations say how the wallet uses and renews its batch (ETSI TS 119 472-3 §4.2.4.2). */
function withReusePolicy<C extends { credential_metadata: object }>(
  configuration: C,
  type: CredentialType,
  batchSize: ((type: CredentialType) => number) | undefined,
): C {
  const policy = batchSize && reusePolicyOf(batchSize(type));
  if (!policy) return configuration;
  return {
    ...configuration,
    credential_metadata: { ...configuration.credential_metadata, credential_reuse_policy: policy },
  };
}

/**
 * The configurations as oidc-provider 9 is given them: it checks configurations as if every `jwt` proof
 * bound a JWK (it refuses any binding method but `jwk`), and reads binding methods nowhere else. Its copy
 * of an mdoc configuration says `jwk`; the published metadata says `cose_key` (walletProvider.ts).
 */
export function providerConfigurations(
  published: Record<string, { format: string }>,
): Record<string, OpenID4VCICredentialConfiguration> {
  return Object.fromEntries(
    Object.entries(published).map(([id, c]) => [
      id,
      (c.format === MDOC_FORMAT
        ? { ...c, cryptographic_binding_methods_supported: ['jwk'] }
        : c) as OpenID4VCICredentialConfiguration,
    ]),
  );
}
