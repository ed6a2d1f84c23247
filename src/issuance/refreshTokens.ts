import type { Configuration } from 'oidc-provider';

/**
 * The property of a Grant minted for a re-issuable credential (src/issuance/providerCodes.ts): until when
 * (epoch seconds) it must live, read by `ttl.Grant` when the grant is saved. Not part of the stored grant.
 */
export const REISSUE_UNTIL = 'reissueUntil';

export const secondsUntil = (until: number | undefined) => Math.max(1, (until ?? 0) - Math.floor(Date.now() / 1000));

/**
 * Re-issuance (HAIP 1.0 §4, ARF ISSU_42): a token request for a type with `reissue` gets a refresh token
 * (the token edge says so, `reissueUntil`), rotated at every use: single use, and a used one presented again
 * revokes the grant (oidc-provider's reuse detection). A refresh token issued with DPoP is bound to its key
 * (oidc-provider binds a public client's refresh token to the DPoP key of its access token).
 */
export function refreshTokens(o: {
  reissueUntil?: (ctx: unknown) => number | undefined;
}): Pick<Configuration, 'issueRefreshToken' | 'rotateRefreshToken'> {
  return {
    issueRefreshToken: async (ctx) => o.reissueUntil?.(ctx) !== undefined,
    rotateRefreshToken: true,
  };
}
