import { CompactSign, importJWK, type JWK } from 'jose';
import type Provider from 'oidc-provider';
import { signingKeysOf, type SigningKeys } from '../keys/keyRing.js';

type Signer = (payload: Record<string, unknown>) => Promise<string>;

/**
 * One RS256 signature over the claims, with the header the spec shows: `alg`, `typ: JWT`, `kid`; by the
 * key that signs now (D20: a rotation changes it without a restart; each key is imported once).
 */
export async function createIdTokenSigner(keys: SigningKeys | { keys: JWK[] }): Promise<Signer> {
  const ring = signingKeysOf(keys);
  let current:
    | { jwk: JWK; key: Awaited<ReturnType<typeof importJWK>>; header: { alg: string; typ: string; kid?: string } }
    | undefined;
  const signerKey = async () => {
    const jwk = ring.signing();
    if (current?.jwk !== jwk)
      current = {
        jwk,
        key: await importJWK({ ...jwk, alg: 'RS256' }, 'RS256'),
        header: { alg: 'RS256', typ: 'JWT', kid: jwk.kid },
      };
    return current;
  };
  await signerKey();
  const encoder = new TextEncoder();
  return async (payload) => {
    const { key, header } = await signerKey();
    return new CompactSign(encoder.encode(JSON.stringify(payload))).setProtectedHeader(header).sign(key);
  };
}

/** Claims oidc-provider adds that have no meaning here: a hash of an access token that is the ID token itself, session ids. */
const DROPPED = new Set(['at_hash', 'c_hash', 's_hash', 'sid', 'auth_time', 'acr', 'amr']);

/**
 * oidc-provider builds the ID token's claims (scope-filtered account claims, nonce) and this signs them.
 * Its own signer sets no `typ` and no `nbf`, which the spec's ID token carries, and would add an
 * `at_hash` of an access token that the edge replaces with the ID token itself (D3). The override
 * applies to ID tokens only; every other JWT the provider makes is untouched.
 */
export function installIdTokenSigner(
  provider: Provider,
  sign: Signer,
  opts: {
    ttl: number;
    issuerFor: (clientId: string) => string;
    /** the `jti` that names the grant whose code bought the token (src/oidc/revokedGrants.ts) */
    tokenIdFor?: (grantId: string) => string;
  },
): void {
  const IdToken = provider.IdToken as unknown as {
    prototype: {
      issue: (o?: { use?: string }) => Promise<string>;
      payload: () => Promise<Record<string, unknown>>;
      client: { clientId: string };
      ctx?: { oidc?: { entities?: { Grant?: { jti?: string } } } };
    };
  };
  const original = IdToken.prototype.issue;
  IdToken.prototype.issue = async function issue(this: typeof IdToken.prototype, o?: { use?: string }) {
    if (o?.use !== 'idtoken') return original.call(this, o);
    const claims = await this.payload();
    const kept: Record<string, unknown> = {};
    for (const name of Object.keys(claims)) if (!DROPPED.has(name)) kept[name] = claims[name];
    const now = Math.floor(Date.now() / 1000);
    const { clientId } = this.client;
    kept.iss = opts.issuerFor(clientId);
    kept.aud = clientId;
    kept.iat = now;
    kept.nbf = now;
    kept.exp = now + opts.ttl;
    // the token request's grant (ctx.oidc.entities, documented): a replayed code revokes it (D16)
    const grantId = this.ctx?.oidc?.entities?.Grant?.jti;
    if (opts.tokenIdFor && grantId) kept.jti = opts.tokenIdFor(grantId);
    return sign(kept);
  };
}
