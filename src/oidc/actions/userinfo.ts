import type { Context } from 'koa';
import { createLocalJWKSet, errors, jwtVerify, type JWK, type JWTPayload } from 'jose';
import type { ClientConfig, Config } from '../../config/schema.js';
import type { RateLimits } from '../../http/rateLimits.js';
import { readForm } from '../../http/form.js';
import { noStore, sendError } from '../../http/respond.js';
import { safeErrorDescription } from '../../http/errorDescription.js';
import { ProtocolError } from '../../rules/errors.js';
import { bearerToken, invalidToken } from '../../rules/bearerToken.js';
import type { SigningKeys } from '../../keys/keyRing.js';
import { createIdTokenSigner } from '../idToken.js';
import { issuerFor } from '../provider.js';
import type { RevokedGrants } from '../revokedGrants.js';
import type { VersionProfile } from '../versions.js';

export interface UserinfoDeps {
  profile: VersionProfile;
  config: Config;
  clients: ReadonlyMap<string, ClientConfig>;
  /** the ID-token keys published now, retired ones included while what they signed may be checked (D20) */
  publicKeys: () => { keys: JWK[] };
  /** signs the answers of clients that registered `userinfoSignedResponseAlg` */
  idTokenKeys: SigningKeys | { keys: JWK[] };
  revokedGrants: RevokedGrants;
  rateLimits?: RateLimits;
}

/** A POST form has room for a few parameters, none of which is read but `access_token` (refused). */
const FORM_LIMIT = 16 * 1024;
/** What the ID token carries about itself rather than the person: not repeated in the UserInfo answer. */
const TOKEN_CLAIMS = new Set(['iss', 'aud', 'exp', 'iat', 'nbf', 'nonce', 'jti', 'azp', 'sid', 'auth_time']);
/** The instances' clocks may differ slightly: a token made by one is not yet valid (nbf) on another otherwise. */
const CLOCK_TOLERANCE = 5;

/** RFC 6750 in a browser: any origin may call with a bearer token (no cookies are read), and read the challenge. */
function cors(ctx: Context): void {
  ctx.set('Access-Control-Allow-Origin', '*');
  ctx.set('Access-Control-Expose-Headers', 'WWW-Authenticate');
}

/** The CORS preflight of a call with an Authorization header (Fetch: a non-safelisted request header). */
export function userinfoPreflight(ctx: Context): void {
  cors(ctx);
  ctx.set('Access-Control-Allow-Methods', 'GET, POST');
  ctx.set('Access-Control-Allow-Headers', 'Authorization, Content-Type');
  ctx.set('Access-Control-Max-Age', '600');
  ctx.status = 204;
}

/** RFC 6750 §3: the error in the challenge (and, as every error here, in the JSON body, D4). */
function sendBearerError(ctx: Context, err: ProtocolError): void {
  const description = safeErrorDescription(err.description);
  sendError(ctx, err, { 'WWW-Authenticate': `Bearer error="${err.error}", error_description="${description}"` });
}

/** What the verification of a token says, in words naming the rule and never the token. */
function describeJoseError(err: unknown): ProtocolError | undefined {
  if (err instanceof errors.JWTExpired) return invalidToken('the access token has expired');
  if (err instanceof errors.JWTClaimValidationFailed)
    return invalidToken(`the access token's ${err.claim} claim is ${err.reason === 'missing' ? 'missing' : 'invalid'}`);
  if (err instanceof errors.JOSEAlgNotAllowed) return invalidToken('the access token is not signed with RS256');
  if (err instanceof errors.JWKSNoMatchingKey)
    return invalidToken('the access token was not signed by a key of this service');
  if (err instanceof errors.JWSSignatureVerificationFailed)
    return invalidToken('the access token signature does not verify');
  if (err instanceof errors.JOSEError)
    return invalidToken('the access token is not a JWT of this service (an ID token of its token endpoint)');
  return undefined;
}

/** The request's bearer token (header only), or undefined when it carries no authentication. */
async function tokenOf(ctx: Context): Promise<string | undefined> {
  const query = new URLSearchParams(ctx.querystring).has('access_token');
  // a form body is read for its access_token (§2.2, refused); a body of any other type cannot carry one
  const form = ctx.method === 'POST' && typeof ctx.is('application/x-www-form-urlencoded') === 'string';
  const body = form && (await readForm(ctx, FORM_LIMIT)).access_token !== undefined;
  return bearerToken(ctx.req.headers.authorization, { query, body });
}

/**
 * The checks of an access token (the ID token, D3): our signature (RS256, a published ID-token key),
 * unexpired, issued to a registered client by this version (or as the client's legacy issuer, D1), and its
 * grant not revoked by a replayed code (D16). Returns the token's claims and its client.
 */
function tokenVerifier(d: UserinfoDeps) {
  let cached: { set: { keys: JWK[] }; jwks: ReturnType<typeof createLocalJWKSet> } | undefined;
  const jwks = () => {
    const set = d.publicKeys();
    if (cached?.set !== set) cached = { set, jwks: createLocalJWKSet(set) };
    return cached.jwks;
  };
  return async (token: string): Promise<{ payload: JWTPayload; client: ClientConfig }> => {
    let payload: JWTPayload;
    try {
      ({ payload } = await jwtVerify(token, jwks(), {
        algorithms: ['RS256'],
        clockTolerance: CLOCK_TOLERANCE,
        requiredClaims: ['iss', 'aud', 'exp', 'sub', 'jti'],
      }));
    } catch (err) {
      throw describeJoseError(err) ?? err;
    }
    const aud = Array.isArray(payload.aud) && payload.aud.length === 1 ? payload.aud[0] : payload.aud;
    const client = typeof aud === 'string' ? d.clients.get(aud) : undefined;
    if (!client) throw invalidToken('the access token was not issued to a registered client');
    const issuer = issuerFor(d.profile, client.legacyV2Issuer);
    if (payload.iss !== issuer)
      throw invalidToken(`the access token was not issued by ${issuer}, which this endpoint serves`);
    if (await d.revokedGrants.isRevoked(String(payload.jti)))
      throw invalidToken('the access token is revoked: its authorization code was used again (RFC 6749 section 4.1.2)');
    return { payload, client };
  };
}

/**
 * OIDC Core §5.3, an addition beyond the interface: the UserInfo endpoint of a version. It takes the token
 * response's access_token (the ID token, D3) as a Bearer token in the Authorization header (RFC 6750 §2.1,
 * GET or POST, §5.3.1) and answers `sub` and the person's claims the token carries, as JSON, or as a JWT
 * signed with the ID-token key for a client with `userinfoSignedResponseAlg` (§5.3.2). Errors per RFC 6750
 * §3. Within the `userinfo` rate limits: per address, and per client once the token is verified.
 */
export function userinfoEndpoint(d: UserinfoDeps): (ctx: Context) => Promise<void> {
  const verify = tokenVerifier(d);
  let signer: ReturnType<typeof createIdTokenSigner> | undefined;
  return async function userinfo(ctx) {
    cors(ctx);
    noStore(ctx);
    let verified: Awaited<ReturnType<typeof verify>> | undefined;
    try {
      const token = await tokenOf(ctx);
      if (token !== undefined) verified = await verify(token);
    } catch (err) {
      await d.rateLimits?.consume('userinfo', { address: ctx.ip });
      if (err instanceof ProtocolError) return sendBearerError(ctx, err);
      throw err;
    }
    if (!verified) {
      // RFC 6750 §3.1: a request without authentication gets the challenge, and no error code
      await d.rateLimits?.consume('userinfo', { address: ctx.ip });
      ctx.status = 401;
      ctx.set('WWW-Authenticate', 'Bearer');
      ctx.body = '';
      return;
    }
    const { payload, client } = verified;
    await d.rateLimits?.consume('userinfo', { client: client.clientId, address: ctx.ip });
    const claims: Record<string, unknown> = { sub: payload.sub };
    for (const [name, value] of Object.entries(payload)) if (!TOKEN_CLAIMS.has(name)) claims[name] = value;
    if (client.userinfoSignedResponseAlg === undefined) {
      ctx.body = claims;
      return;
    }
    // §5.3.2: a signed answer carries iss and aud
    signer ??= createIdTokenSigner(d.idTokenKeys);
    const iat = Math.floor(Date.now() / 1000);
    ctx.type = 'application/jwt';
    ctx.body = await (await signer)({ iss: payload.iss, aud: client.clientId, iat, ...claims });
  };
}
