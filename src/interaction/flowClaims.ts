/**
 * What the wallet step leaves for the token endpoint: the ID token's `sub` (D2) and claims, on the
 * grant the step created (src/oidc/grantClaims.ts), so concurrent flows of one holder never mix.
 */
export interface FlowClaims {
  sub: string;
  claims: Record<string, unknown>;
  /** extra members of the token response (Version 1 non-PAR: `state`, D3) */
  tokenExtras?: Record<string, string>;
}

/** The browser session's account: constant, so a browser can run flow after flow without a logout prompt. */
export const HOLDER_ACCOUNT = 'holder';

/** D2: an issuance's `sub` is the credential's SerialNumber; its claims are the attributes issued, with SerialNumber and ExpiresAt. */
export function issuanceFlowClaims(offer: { attributes: Record<string, unknown>; serialNumber: string; credentialExpiresAt: number }): FlowClaims {
  const expiresAt = new Date(offer.credentialExpiresAt * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return { sub: offer.serialNumber, claims: { ...offer.attributes, SerialNumber: offer.serialNumber, ExpiresAt: expiresAt } };
}

/** D2: a verification's `sub` is the holder key's thumbprint; its claims are the attributes presented. */
export function verificationFlowClaims(result: { holderKeyThumbprint: string; claims: Record<string, unknown> }): FlowClaims {
  return { sub: result.holderKeyThumbprint, claims: result.claims };
}
