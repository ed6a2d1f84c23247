import type { Context, Middleware } from 'koa';
import { importJWK, SignJWT, type JWK } from 'jose';
import type { SigningKeys } from '../keys/keyRing.js';

/** OpenID4VCI 1.0 §12.2.3: the `typ` of signed Credential Issuer Metadata. */
export const SIGNED_METADATA_TYP = 'openidvci-issuer-metadata+jwt';
/** OpenID4VCI 1.0 §12.2.2: the media type a wallet asks for to get the metadata signed. */
export const SIGNED_METADATA_MEDIA_TYPE = 'application/jwt';
/** How long a signed metadata document is valid (`exp`); it is signed afresh well before. */
export const SIGNED_METADATA_LIFETIME = 24 * 3600;
/** How long one signature is served before the next is made: a rotated key (D20) signs within this. */
const RESIGN_AFTER = 3600;

/**
 * Signed Credential Issuer Metadata (OpenID4VCI 1.0 §12.2.2, §12.2.3) of the wallet issuer at `/<path>`: a
 * wallet that prefers `application/jwt` to `application/json` in its Accept header gets the metadata as a JWS
 * whose payload is every metadata parameter at the top level, with `sub` (and `iss`) the credential issuer
 * identifier, `iat` and `exp`; signed with the credential issuer's key under its certificate (`x5c`, HAIP 1.0
 * §6.1.1), the key that signs the credentials. Everyone else gets the JSON, as before. At both locations of
 * the metadata: the well-known one (§12.2.2) and the provider's own.
 */
export function signedMetadata(path: string, credentialIssuer: string, keys: SigningKeys): Middleware {
  const paths = new Set([
    `/.well-known/openid-credential-issuer/${path}`,
    `/${path}/.well-known/openid-credential-issuer`,
  ]);
  const signed = new Map<string, { jwt: string; kid: string | undefined; renewAt: number }>();
  /** the signing key, imported once per key (a rotation makes another) */
  let imported: { jwk: JWK; key: CryptoKey | Uint8Array } | undefined;

  const sign = async (metadata: Record<string, unknown>, jwk: JWK, now: number): Promise<string> => {
    if (imported?.jwk !== jwk) {
      const { x5c: _chain, ...bare } = jwk;
      imported = { jwk, key: await importJWK(bare, 'ES256') };
    }
    const { key } = imported;
    return new SignJWT({ ...metadata, iss: credentialIssuer, sub: credentialIssuer })
      .setProtectedHeader({
        alg: 'ES256',
        typ: SIGNED_METADATA_TYP,
        ...(jwk.kid ? { kid: jwk.kid } : {}),
        ...(jwk.x5c ? { x5c: jwk.x5c } : {}),
      })
      .setIssuedAt(now)
      .setExpirationTime(now + SIGNED_METADATA_LIFETIME)
      .sign(key);
  };

  const serve = (ctx: Context, jwt: string) => {
    ctx.status = 200;
    ctx.type = SIGNED_METADATA_MEDIA_TYPE;
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = jwt;
  };

  return async function signedIssuerMetadata(ctx, next) {
    if (!paths.has(ctx.path) || (ctx.method !== 'GET' && ctx.method !== 'HEAD')) return next();
    // one URL, two representations: caches must keep them apart
    ctx.vary('Accept');
    if (ctx.accepts('application/json', SIGNED_METADATA_MEDIA_TYPE) !== SIGNED_METADATA_MEDIA_TYPE) return next();
    const jwk = keys.signing();
    const now = Math.floor(Date.now() / 1000);
    const hit = signed.get(ctx.path);
    if (hit && hit.kid === jwk.kid && hit.renewAt > now) return serve(ctx, hit.jwt);
    await next();
    // an error the provider answered stays as it is
    if (ctx.status !== 200 || ctx.body === undefined || ctx.body === null) return;
    const metadata = (typeof ctx.body === 'string' ? JSON.parse(ctx.body) : ctx.body) as Record<string, unknown>;
    const jwt = await sign(metadata, jwk, now);
    signed.set(ctx.path, { jwt, kid: jwk.kid, renewAt: now + RESIGN_AFTER });
    serve(ctx, jwt);
  };
}
