import { VC_ISSUER_CLAIM } from '../config/schema.js';
import type { Store } from '../store/types.js';

/**
 * What a finished wallet step leaves for the token endpoint: the ID token's `sub` (D2) and claims. They
 * are kept under the Grant the holder's prompt creates, so concurrent flows of one browser never mix, and
 * `findAccount` reads them when the code is redeemed (src/oidc/provider.ts).
 */
export interface FlowClaims {
  sub: string;
  claims: Record<string, unknown>;
  /** extra members of the token response (Version 1 non-PAR: `state`, D3) */
  tokenExtras?: Record<string, string>;
  /** the flow's root span context (a traceparent), when tracing is on: the token request links to it */
  trace?: string;
}

/** The browser session's account: constant, so a browser can run flow after flow without a logout prompt. */
export const HOLDER_ACCOUNT = 'holder';

const grantClaimsKey = (grantId: string) => `flow:{${grantId}}:claims`;

/** The ID token's claims of the flow behind a Grant, for as long as the Grant lives. */
export class GrantClaims {
  constructor(private readonly store: Store) {}

  save(grantId: string, flow: FlowClaims, ttlSeconds: number): Promise<void> {
    return this.store.set(grantClaimsKey(grantId), flow, ttlSeconds);
  }

  find(grantId: string): Promise<FlowClaims | undefined> {
    return this.store.get<FlowClaims>(grantClaimsKey(grantId));
  }

  /** Reads and removes them: the token endpoint reads them once, when the one code of the grant is redeemed. */
  take(grantId: string): Promise<FlowClaims | undefined> {
    return this.store.consume<FlowClaims>(grantClaimsKey(grantId));
  }
}

/** D2: an issuance's `sub` is the credential's SerialNumber; its claims are the attributes issued, with SerialNumber and ExpiresAt. */
export function issuanceFlowClaims(offer: {
  attributes: Record<string, unknown>;
  serialNumber: string;
  credentialExpiresAt: number;
}): FlowClaims {
  const expiresAt = new Date(offer.credentialExpiresAt * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return {
    sub: offer.serialNumber,
    claims: { ...offer.attributes, SerialNumber: offer.serialNumber, ExpiresAt: expiresAt },
  };
}

/**
 * D2: a verification's `sub` is the holder key's thumbprint; its claims are the attributes presented. For a
 * client with `vcIssuerClaim`, `vc_issuer` names per credential type who vouched for it: an
 * SD-JWT VC's `iss`, an mdoc's document signer (`ds_subject`) and its IACA (`ds_issuer`).
 */
export function verificationFlowClaims(
  result: { holderKeyThumbprint: string; claims: Record<string, unknown>; issuers?: Record<string, unknown> },
  opts: { issuerClaim?: boolean } = {},
): FlowClaims {
  const issuers = opts.issuerClaim && result.issuers ? { [VC_ISSUER_CLAIM]: result.issuers } : {};
  return { sub: result.holderKeyThumbprint, claims: { ...result.claims, ...issuers } };
}
