import type { JWK } from 'jose';
import type { Context, Middleware, Next } from 'koa';
import { publicJwk } from './sdJwtVc.js';
import type { SigningKeys } from '../keys/keyRing.js';

/**
 * Metadata at the locations wallets and verifiers look first for an issuer identifier with a path: the
 * well-known segment goes between host and path.
 * - OpenID4VCI 1.0 §12.2.2: `/.well-known/openid-credential-issuer/<path>`
 * - RFC 8414 §3.1: `/.well-known/oauth-authorization-server/<path>`
 * The provider serves both under its mount path too; these aliases answer with the same documents.
 */
export function metadataAliases(path: string, mounted: Middleware): Middleware {
  const aliases = new Map([
    [`/.well-known/openid-credential-issuer/${path}`, `/${path}/.well-known/openid-credential-issuer`],
    [`/.well-known/oauth-authorization-server/${path}`, `/${path}/.well-known/oauth-authorization-server`],
  ]);
  // The documents are fixed for a configuration and a host: oidc-provider builds them on every request,
  // so the first answer per host and path is kept, serialised, and served again.
  const cache = new Map<string, { body: string; headers: Record<string, string> }>();
  // not async: a request for another path passes on without a promise of its own
  return function metadataAlias(ctx, next) {
    const target =
      ctx.method === 'GET' || ctx.method === 'HEAD' || ctx.method === 'OPTIONS' ? aliases.get(ctx.path) : undefined;
    return target ? serve(ctx, next, target) : next();
  };

  async function serve(ctx: Context, next: Next, target: string): Promise<void> {
    const cacheKey = `${ctx.method === 'OPTIONS' ? 'O' : 'G'} ${ctx.protocol}://${ctx.host}${target}`;
    const hit = ctx.method === 'OPTIONS' ? undefined : cache.get(cacheKey);
    if (hit) {
      ctx.set(hit.headers);
      ctx.body = hit.body;
      return;
    }
    const original = ctx.path;
    ctx.path = target;
    try {
      await mounted(ctx, next);
    } finally {
      ctx.path = original;
    }
    if (ctx.status === 200 && ctx.method !== 'OPTIONS' && cache.size < 64) {
      const headers: Record<string, string> = {};
      for (const name of ['content-type', 'cache-control', 'access-control-allow-origin']) {
        const v = ctx.response.get(name);
        if (v) headers[name] = String(v);
      }
      headers['content-type'] ??= 'application/json; charset=utf-8';
      cache.set(cacheKey, { body: JSON.stringify(ctx.body), headers });
    }
  }
}

/**
 * SD-JWT VC issuer metadata (draft-ietf-oauth-sd-jwt-vc §5): where verifiers find the keys that sign our
 * credentials, at `/.well-known/jwt-vc-issuer/<path>`. Public members only.
 */
export function jwtVcIssuerMetadata(path: string, credentialIssuer: string, keys: SigningKeys): Middleware {
  const route = `/.well-known/jwt-vc-issuer/${path}`;
  // the issuer's own JWKS route (oidc-provider's jwks_uri) publishes the same keys
  const jwksRoute = `/${path}/jwks`;
  let made: { published: { keys: JWK[] }; jwks: { keys: JWK[] } } | undefined;
  // a rotation (D20) changes the published set; its public form is made once per set
  const jwks = (): { keys: JWK[] } => {
    const published = keys.published();
    if (made?.published === published) return made.jwks;
    const set = {
      keys: published.keys.map((k: JWK) => ({ ...publicJwk(k), kid: k.kid, use: 'sig', alg: k.alg ?? 'ES256' })),
    };
    made = { published, jwks: set };
    return set;
  };
  return function jwtVcIssuer(ctx, next) {
    if ((ctx.path !== route && ctx.path !== jwksRoute) || (ctx.method !== 'GET' && ctx.method !== 'HEAD'))
      return next();
    ctx.set('Access-Control-Allow-Origin', '*');
    ctx.set('Cache-Control', 'public, max-age=300');
    ctx.body = ctx.path === route ? { issuer: credentialIssuer, jwks: jwks() } : jwks();
    return Promise.resolve();
  };
}
