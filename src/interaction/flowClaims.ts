/**
 * What the wallet step leaves for the token endpoint: the ID token's `sub` (D2) and claims, keyed by
 * the grant the step created, so concurrent flows of one holder never mix.
 */
export interface FlowClaims {
  sub: string;
  claims: Record<string, unknown>;
  /** extra members of the token response (Version 1 non-PAR: `state`, D3) */
  tokenExtras?: Record<string, string>;
}

/** The browser session's account: constant, so a browser can run flow after flow without a logout prompt. */
export const HOLDER_ACCOUNT = 'holder';

export const flowClaimsKey = (namespace: string, grantId: string) => `flow:${namespace}:${grantId}`;
