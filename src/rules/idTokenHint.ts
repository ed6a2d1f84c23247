import { createHash, createHmac, timingSafeEqual } from 'node:crypto';
import {
  base64url,
  createLocalJWKSet,
  createRemoteJWKSet,
  customFetch,
  decodeProtectedHeader,
  jwtVerify,
  UnsecuredJWT,
  type JSONWebKeySet,
  type JWTVerifyGetKey,
  type JWTVerifyOptions,
} from 'jose';
import { OutboundFetch, OutboundRefused } from '../http/outboundFetch.js';
import { HINT_CONTROL_CLAIMS } from './claimNames.js';
import { invalidRequest, ProtocolError } from './errors.js';
import { shown } from './text.js';

export interface HintClient {
  clientId: string;
  clientSecret: string;
  jwks?: { keys: Record<string, unknown>[] };
  jwksUri?: string;
}

export interface VerifiedHint {
  payload: Record<string, unknown>;
  attributes: Record<string, unknown>;
  pinCode: unknown;
  replayKey: string;
  exp: number;
}

/** D7: the client secret verifies these. */
const SECRET_ALGS = ['HS256', 'HS384', 'HS512'] as const;

const HMAC_HASH: Record<string, string> = { HS256: 'sha256', HS384: 'sha384', HS512: 'sha512' };
/** The header under which jose validates the claims of a payload whose MAC was checked here. */
const VERIFIED_PAYLOAD_HEADER = base64url.encode(JSON.stringify({ alg: 'none' }));

/** D7: the client's public keys (inline JWKS or jwks_uri) verify these. */
const PUBLIC_KEY_ALGS = ['RS256', 'PS256', 'ES256', 'EdDSA', 'Ed25519'] as const;

/** per outbound rules (one per service), per jwks_uri */
const remoteSets = new WeakMap<OutboundFetch, Map<string, JWTVerifyGetKey>>();
let strictOutbound: OutboundFetch | undefined;
/** A client's key set is small; a larger body (counted as read, after any Content-Encoding) is refused. */
const JWKS_MAX_BYTES = 256 * 1024;
const localSets = new WeakMap<object, JWTVerifyGetKey>();

const fail = (reason: string) => invalidRequest(`id_token_hint: ${reason}`);

/**
 * Verifies an `id_token_hint` (spec: id_token_hint rules, Authentication 4; D7). Every failure is
 * invalid_request (spec Errors: IdTokenHint "Not a valid token hint").
 */
export async function verifyIdTokenHint(
  hint: unknown,
  opts: {
    client: HintClient;
    audience: string;
    clockTolerance: number;
    maxLength: number;
    maxLifetime: number;
    now?: number;
    /** the outbound rules a jwks_uri is fetched under (src/http/outboundFetch.ts); none allowed when left out */
    outbound?: OutboundFetch;
  },
): Promise<VerifiedHint> {
  // D7: the hint is a JWT string
  if (typeof hint !== 'string' || hint === '') throw invalidRequest('id_token_hint is required');
  // Limits: bound the work done on a client-supplied token
  if (hint.length > opts.maxLength) throw fail(`longer than ${opts.maxLength} characters`);
  // RFC 7515 7.1: compact serialization is three base64url parts
  const parts = hint.split('.');
  if (parts.length !== 3 || !parts.every((p) => /^[A-Za-z0-9_-]*$/.test(p)) || parts[0] === '' || parts[1] === '') {
    throw fail('not a compact JWS (header.payload.signature)');
  }

  const header = checkedHeader(hint);
  const alg = header.alg as string;
  const options: JWTVerifyOptions = {
    issuer: opts.client.clientId, // spec id_token_hint: iss must equal client_id
    audience: opts.audience, // spec id_token_hint: aud must equal the issuer URL (D1)
    requiredClaims: ['iss', 'aud', 'exp'], // spec id_token_hint: iss, aud, exp required
    clockTolerance: opts.clockTolerance, // D7: clock tolerance, configurable
    ...(opts.now !== undefined ? { currentDate: new Date(opts.now * 1000) } : {}),
  };

  let payload: Record<string, unknown>;
  try {
    if ((SECRET_ALGS as readonly string[]).includes(alg)) {
      // D7: HS256/384/512 verify with the client secret only (RFC 7518 3.2), never with a public key
      if (!opts.client.clientSecret) throw fail(`alg ${alg} needs a client secret; the client has none`);
      verifyHmac(parts, alg, opts.client.clientSecret, header);
      ({ payload } = UnsecuredJWT.decode(`${VERIFIED_PAYLOAD_HEADER}.${parts[1]}.`, options));
    } else {
      // D7: asymmetric algs verify with the registered public keys; the key must fit the alg
      const getKey = publicKeyResolver(opts.client, alg, opts.outbound ?? (strictOutbound ??= new OutboundFetch()));
      ({ payload } = await jwtVerify(hint, getKey, { ...options, algorithms: [...PUBLIC_KEY_ALGS] }));
    }
  } catch (e) {
    throw describeJoseError(e, header);
  }

  const exp = payload.exp as number; // checked present and numeric by jose
  // D7: a hint is short-lived; what it carries is kept no longer than it lives (hint.maxLifetime)
  const now = opts.now ?? Math.floor(Date.now() / 1000);
  if (exp > now + opts.maxLifetime + opts.clockTolerance)
    throw fail(`exp is more than ${opts.maxLifetime} seconds ahead (hint.maxLifetime)`);
  return {
    payload,
    // D7: custom claims = every claim except registered JWT claims and PinCode (fromEntries keeps
    // a "__proto__" claim an own property instead of touching the prototype)
    attributes: Object.fromEntries(Object.entries(payload).filter(([k]) => !HINT_CONTROL_CLAIMS.has(k))),
    pinCode: payload.PinCode, // spec Authentication 7: PinCode claim, checked by pin.ts
    replayKey: replayKeyOf(parts[1], payload.jti), // D7: a hint backs at most one credential
    exp,
  };
}

/**
 * RFC 7518 §3.2: the HMAC of the JWS signing input under the client secret, compared in constant time.
 * node:crypto rather than jose here: jose's HMAC is WebCrypto's, which runs on the thread pool at many
 * times the cost, and this is every issuance PAR's check (measured: PAR fell under its target of 0.90 of
 * bare oidc-provider). jose validates the claims of the payload once its MAC is checked.
 */
function verifyHmac(parts: string[], alg: string, secret: string, header: Record<string, unknown>): void {
  // RFC 7515 §4.1.11: no extension is understood here
  if (header.crit !== undefined) throw fail('crit header parameters are not supported');
  const expected = createHmac(HMAC_HASH[alg], secret).update(`${parts[0]}.${parts[1]}`).digest();
  const given = Buffer.from(parts[2], 'base64url');
  if (given.length !== expected.length || !timingSafeEqual(given, expected))
    throw fail('signature verification failed');
}

/** RFC 7515 4.1.1 / D7: alg must be present, never `none`, and one of the supported algs. */
function checkedHeader(hint: string): Record<string, unknown> {
  let header: Record<string, unknown>;
  try {
    header = decodeProtectedHeader(hint) as Record<string, unknown>;
  } catch {
    throw fail('header is not valid base64url JSON');
  }
  const alg = header.alg;
  if (typeof alg !== 'string' || alg === '') throw fail('header alg is missing');
  // D7: alg none is always rejected
  if (alg.toLowerCase() === 'none') throw fail('alg none is not accepted');
  if (![...SECRET_ALGS, ...PUBLIC_KEY_ALGS].includes(alg as never)) {
    throw fail(
      `alg ${shown(alg, 16)} is not supported (use one of ${[...SECRET_ALGS, ...PUBLIC_KEY_ALGS].join(', ')})`,
    );
  }
  return header;
}

/** D7: inline JWKS first, then jwks_uri (remote key sets cached per URI). */
function publicKeyResolver(client: HintClient, alg: string, outbound: OutboundFetch): JWTVerifyGetKey {
  const local = client.jwks ? localSet(client.jwks) : undefined;
  const remote = client.jwksUri ? remoteSet(client.jwksUri, outbound) : undefined;
  if (!local && !remote) throw fail(`alg ${alg} needs a registered public key; the client has none`);
  return async (header, token) => {
    if (local) {
      try {
        return await local(header, token);
      } catch (e) {
        if (!remote || (e as { code?: string }).code !== 'ERR_JWKS_NO_MATCHING_KEY') throw e;
      }
    }
    try {
      return await remote!(header, token);
    } catch (e) {
      const code = (e as { code?: string }).code;
      if (code === 'ERR_JWKS_NO_MATCHING_KEY' || code === 'ERR_JWKS_MULTIPLE_MATCHING_KEYS') throw e;
      if (code === 'ERR_JWKS_TIMEOUT') throw fail("the client's jwks_uri did not answer in time");
      // a target the outbound rules refuse (not https, a private address): the client can act on that
      if (e instanceof OutboundRefused) throw fail(e.message);
      // network failure, non-200 answer, or a body that is not a JWKS
      throw fail("the client's jwks_uri could not be fetched as a JWKS");
    }
  };
}

function localSet(jwks: { keys: Record<string, unknown>[] }): JWTVerifyGetKey {
  let set = localSets.get(jwks);
  if (!set) {
    try {
      set = createLocalJWKSet(jwks as unknown as JSONWebKeySet);
    } catch {
      throw fail("the client's registered JWKS is malformed");
    }
    localSets.set(jwks, set);
  }
  return set;
}

/**
 * One jose remote key set per jwks_uri: fetched on first use and again after cacheMaxAge; a `kid` it does not
 * know refetches it (key rotation, OpenID Connect Core 10.1.1), at most once per cooldown. Fetched under the
 * outbound rules (no redirect, no private address unless allowed), at most JWKS_MAX_BYTES.
 */
function remoteSet(uri: string, outbound: OutboundFetch): JWTVerifyGetKey {
  let sets = remoteSets.get(outbound);
  if (!sets) remoteSets.set(outbound, (sets = new Map()));
  let set = sets.get(uri);
  if (!set) {
    set = createRemoteJWKSet(new URL(uri), {
      timeoutDuration: 5000,
      cooldownDuration: 30_000,
      cacheMaxAge: 300_000,
      [customFetch]: async (href, init) => {
        const text = await outbound.get(href, {
          what: "the client's jwks_uri",
          accept: 'application/jwk-set+json, application/json',
          maxBytes: JWKS_MAX_BYTES,
          signal: init.signal,
        });
        return new Response(text, { status: 200, headers: { 'content-type': 'application/json' } });
      },
    });
    sets.set(uri, set);
  }
  return set;
}

/**
 * D7: `jti:<jti>` when the hint has a string jti, else the SHA-256 of what the signer signed: the decoded
 * payload bytes. Never of the hint's text: base64url leaves spare bits in a segment's last character
 * and ECDSA signatures are malleable, so one signed hint has several valid spellings.
 */
function replayKeyOf(payloadSegment: string, jti: unknown): string {
  if (typeof jti === 'string' && jti !== '') return `jti:${jti}`;
  return `sha256:${createHash('sha256').update(Buffer.from(payloadSegment, 'base64url')).digest('base64url')}`;
}

/** D4: a description naming the parameter and the failed check; never token contents. */
function describeJoseError(e: unknown, header: Record<string, unknown>): ProtocolError {
  if (e instanceof ProtocolError) return e;
  const err = e as { code?: string; claim?: string; reason?: string; payload?: Record<string, unknown> };
  // RFC 7515 4.1.11: jose refuses a crit it does not understand (all but RFC 7797 b64) or a malformed one,
  // and jwtVerify an unencoded (b64: false) payload
  if (
    header.crit !== undefined &&
    ['ERR_JWS_INVALID', 'ERR_JOSE_NOT_SUPPORTED', 'ERR_JWT_INVALID'].includes(err.code ?? '')
  ) {
    return fail('crit header parameters are not supported');
  }
  switch (err.code) {
    case 'ERR_JWS_SIGNATURE_VERIFICATION_FAILED':
      return fail('signature verification failed');
    case 'ERR_JWT_EXPIRED':
      return fail('exp has passed: the token is expired');
    case 'ERR_JWT_CLAIM_VALIDATION_FAILED':
      // RFC 7519 4.1.1: iss is a string; jose reports any other iss as not equal to the expected one
      if (err.claim === 'iss' && err.reason === 'check_failed' && typeof err.payload?.iss !== 'string')
        return describeClaimFailure('iss', 'invalid');
      return describeClaimFailure(err.claim, err.reason);
    case 'ERR_JOSE_ALG_NOT_ALLOWED':
      return fail('alg is not allowed for the registered key');
    case 'ERR_JWKS_NO_MATCHING_KEY':
      return fail('no registered key of the client matches the header alg/kid');
    case 'ERR_JWKS_MULTIPLE_MATCHING_KEYS':
      return fail('signature verification failed');
    case 'ERR_JWKS_INVALID':
    case 'ERR_JWK_INVALID':
      return fail("the client's registered key set is not usable");
    case 'ERR_JWT_INVALID':
      return fail('payload is not a JSON object');
    case 'ERR_JWS_INVALID':
      return fail('not a valid JWS');
    case 'ERR_JOSE_NOT_SUPPORTED':
      return fail('alg or key type is not supported');
    default:
      // TypeError from fetch (network) or key import: do not leak internals
      return fail('could not be verified');
  }
}

function describeClaimFailure(claim: string | undefined, reason: string | undefined): ProtocolError {
  const c = claim ?? 'claim';
  if (reason === 'missing') return fail(`${c} is required`);
  if (reason === 'invalid') return fail(`${c} has the wrong type`);
  switch (c) {
    case 'iss':
      return fail('iss must equal the client_id');
    case 'aud':
      return fail('aud must equal the issuer');
    case 'nbf':
      return fail('nbf is in the future: the token is not yet valid');
    default:
      return fail(`${c} is not valid`);
  }
}
