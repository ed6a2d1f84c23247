import { createHash } from 'node:crypto';
import type { Store } from '../store/types.js';

/**
 * The `jti` of the ID token a grant's code bought: the SHA-256 of the grant's id (base64url), so the token
 * names its grant without carrying the provider's own id. A grant has one code and a code buys one token
 * (D16), so the value is unique per token (RFC 7519 §4.1.7).
 */
export const grantTokenId = (grantId: string): string => createHash('sha256').update(grantId).digest('base64url');

const revokedKey = (namespace: string, tokenId: string) => `oidc:${namespace}:revoked:{${tokenId}}`;

/**
 * D16 and RFC 6749 §4.1.2: a replayed authorization code revokes what it issued. The ID token is the access
 * token (D3) and no token of it is stored, so what the replay revokes is recorded instead, under the token's
 * `jti`, for as long as a token of that code may still be valid; the UserInfo endpoint refuses it then.
 */
export class RevokedGrants {
  constructor(
    private readonly store: Store,
    private readonly namespace: string,
    /** how long a token of the grant may still be valid after the revocation: the token lifetime, and a margin for clocks */
    private readonly keepSeconds: number,
  ) {}

  revoke(grantId: string): Promise<void> {
    return this.store.set(revokedKey(this.namespace, grantTokenId(grantId)), 1, this.keepSeconds);
  }

  async isRevoked(tokenId: string): Promise<boolean> {
    return (await this.store.get(revokedKey(this.namespace, tokenId))) !== undefined;
  }
}
