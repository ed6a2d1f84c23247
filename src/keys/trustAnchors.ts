/**
 * Which trust anchor may vouch for which credential: trust is per anchor, per format and,
 * where the operator lists them, per credential type. Pure rules; the verifier asks them per Credential
 * Query.
 */

export const ANCHOR_FORMATS = ['dc+sd-jwt', 'mso_mdoc'] as const;
export type AnchorFormat = (typeof ANCHOR_FORMATS)[number];

export interface TrustAnchor {
  /** DER certificates: each one an anchor for the formats and types below */
  certificates: Uint8Array[];
  formats: readonly AnchorFormat[];
  /** names of configured credential types; left out: any type (for dc+sd-jwt, any type not our own) */
  types?: readonly string[];
}

/**
 * Whether a `vct` is in this service's own namespace: a URL on the base URL's origin under its path (the
 * default vct of a configured type is `{baseUrl}/types/{name}`). Credentials of such a type are this
 * service's own, and only its own issuer and the operator's `trustedIssuers` may issue them.
 */
export function isOwnVct(vct: string, baseUrl: string): boolean {
  let v: URL;
  let b: URL;
  try {
    v = new URL(vct);
    b = new URL(baseUrl);
  } catch {
    return false;
  }
  const base = b.pathname.replace(/\/$/, '');
  return v.origin === b.origin && (v.pathname === base || v.pathname.startsWith(`${base}/`));
}

/**
 * The anchors' certificates that may vouch for a credential of `type` in `format`: anchors of that format
 * that list the type, or list no types. For dc+sd-jwt a type of our own namespace (`ownType`) gets none,
 * whatever an anchor lists: a foreign chain never issues our credentials. Our own issuer's chain is checked
 * against the issuer CA we made, and only that CA (src/verification/issuerKeys.ts `OwnIssuer`). An mdoc of
 * any type comes only from an IACA (ours among them, `ownMdocAnchor`), so the namespace plays no part there.
 */
export function anchorsFor(
  anchors: readonly TrustAnchor[],
  format: AnchorFormat,
  type: string,
  ownType: boolean,
): Uint8Array[] {
  if (format === 'dc+sd-jwt' && ownType) return [];
  return anchors
    .filter((a) => a.formats.includes(format) && (a.types === undefined || a.types.includes(type)))
    .flatMap((a) => a.certificates);
}

/**
 * D12: the name under which `verifier.trustAnchors` lists the IACAs of PID providers, for the PID as an mdoc
 * (`identity.VerifiedIdentity.mdoc`). It is the identity flow's scope, not a credential type.
 */
export const PID_ANCHOR_TYPE = 'VerifiedIdentity';

/**
 * The IACAs that may vouch for a PID as an mdoc: anchors of format mso_mdoc that name `VerifiedIdentity` in
 * their types. An anchor without types vouches for credential types, never for a PID: as the identity block's
 * `trustedIssuers` are its own, so are its IACAs (D12).
 */
export function pidMdocAnchors(anchors: readonly TrustAnchor[]): Uint8Array[] {
  return anchors
    .filter((a) => a.formats.includes('mso_mdoc') && a.types?.includes(PID_ANCHOR_TYPE))
    .flatMap((a) => a.certificates);
}

/**
 * This service's own mdocs (src/issuance/mdoc.ts): the local issuer CA is their IACA, trusted for the types
 * with `mdoc` (not verified only) for which `verifier.trustAnchors` names no mdoc anchor. Where the operator names IACAs for a
 * type, those alone vouch for its mdocs (listing issuer-ca.pem among them trusts ours too); an operator's
 * document signer chains to the operator's IACA, which `verifier.trustAnchors` names.
 */
export function ownMdocAnchor(
  caDer: Uint8Array,
  types: readonly { name: string; mdoc?: unknown; verifyOnly?: boolean }[],
  configured: readonly TrustAnchor[],
): TrustAnchor[] {
  // a type verified only is never ours: its mdocs come from the operator's IACAs alone
  const names = types
    .filter(
      (t) => t.mdoc !== undefined && !t.verifyOnly && anchorsFor(configured, 'mso_mdoc', t.name, true).length === 0,
    )
    .map((t) => t.name);
  return names.length ? [{ certificates: [caDer], formats: ['mso_mdoc'], types: names }] : [];
}
