import { createHash } from 'node:crypto';
import { SDJwtInstance } from '@sd-jwt/core';
import { base64url, calculateJwkThumbprint, compactVerify, decodeJwt, decodeProtectedHeader, importJWK, type JWK, type JWTVerifyGetKey } from 'jose';
import { RESERVED_CLAIM_NAMES } from '../rules/claimNames.js';
import { certificatePublicJwk, dnsNames, uriNames, verifyCertificateChain, X509ChainError } from '../keys/x509.js';
import { VerificationRefusal } from './errors.js';
import { IssuerKeysUnavailable, type IssuerKeys } from './issuerKeys.js';
import { StatusChecks, StatusListInvalid, StatusListUnavailable } from './statusCheck.js';
import { verifyWithKeys } from './jws.js';

/** Issuer and key binding signature algorithms: what `client_metadata.vp_formats_supported` announces. */
export const ISSUER_ALGS = ['ES256', 'EdDSA'];
export const KB_ALGS = ['ES256', 'EdDSA'];
/** A key binding JWT older than this (seconds) is refused, whatever the clock tolerance. */
export const KB_MAX_AGE = 300;

/** SD-JWT VC §3.2.1: `dc+sd-jwt`; `vc+sd-jwt` is the earlier name, still accepted during the transition. */
const SD_JWT_VC_TYPES = new Set(['dc+sd-jwt', 'vc+sd-jwt']);
/** RFC 9901 (SD-JWT) §4.1.1: the hash algorithms of the IANA registry we support for `_sd_alg`. */
const HASHES: Record<string, string> = { 'sha-256': 'sha256', 'sha-384': 'sha384', 'sha-512': 'sha512' };
/** Claims nested deeper than this are refused (RFC 9901 sets no limit; real credentials stay far below). */
const MAX_DEPTH = 32;

export interface PresentationExpectations {
  /** the verifier's client identifier: the KB-JWT `aud` must equal it */
  clientId: string;
  /** the request's nonce: the KB-JWT `nonce` must equal it */
  nonce: string;
  /** the requested type's vct, or the accepted ones (the Credential Query's `meta.vct_values`) */
  vct: string | readonly string[];
}

export interface PresentationContext {
  issuerKeys: IssuerKeys;
  /** seconds of clock skew accepted on exp, nbf, iat (default 30) */
  clockTolerance?: number;
  /** epoch seconds; defaults to now */
  now?: number;
  /** for status lists, when no `statusChecks` is given */
  fetch?: typeof fetch;
  /** D18: the status lists of presented credentials (cached across presentations) */
  statusChecks?: StatusChecks;
  /** D18 `statusList.onUnavailable`: a credential whose status list cannot be fetched is refused (default) or accepted */
  onStatusUnavailable?: 'refuse' | 'accept';
  /**
   * DER roots that may vouch for this query's credential type (src/keys/trustAnchors.ts): a credential of an
   * issuer not otherwise trusted is accepted when its `x5c` chains to one (SD-JWT VC §3.5)
   */
  trustAnchors?: Uint8Array[];
}

export interface VerifiedPresentation {
  issuer: string;
  vct: string;
  /** every claim of the credential as presented (plain and disclosed), except the registered ones */
  claims: Record<string, unknown>;
  /** names of the top-level claims the holder disclosed */
  disclosed: string[];
  holderJwk: JWK;
  /** RFC 7638 thumbprint of `cnf.jwk` */
  holderKeyThumbprint: string;
}

const refuse = (reason: ConstructorParameters<typeof VerificationRefusal>[0], description: string) => new VerificationRefusal(reason, description);

/**
 * Verifies one SD-JWT VC presentation with key binding (OpenID4VP 1.0 §B.3.6, RFC 9901 §7, SD-JWT VC §3.5)
 * for one Credential Query of one request. Each check names its rule and, when it fails, its reason.
 *
 * The issuer signature is verified here first, with jose and the issuer's keys (IssuerKeys): the library
 * verifies against whatever key it is given, so trust in the issuer is ours, as is the `vct`.
 * @sd-jwt/sd-jwt-vc 0.19's `verify()` then does the key binding signature, `nonce`, `sd_hash` and the
 * credential's time claims, but leaves gaps that are closed here, before it runs:
 *  - it accepts a presentation without a KB-JWT unless a nonce is passed (we always require one);
 *  - it checks that the KB-JWT has an `aud`, not that it is ours;
 *  - it does not check how old the KB-JWT's `iat` is;
 *  - it ignores a disclosure whose digest the credential does not contain (a tampered disclosure, or one
 *    taken from another credential, silently disappears instead of failing);
 *  - it lets a disclosure overwrite a claim of the same name.
 */
export async function verifyPresentation(presentation: string, expected: PresentationExpectations, ctx: PresentationContext): Promise<VerifiedPresentation> {
  const tolerance = ctx.clockTolerance ?? 30;
  const now = ctx.now ?? Math.floor(Date.now() / 1000);

  // RFC 9901 §4: <issuer-jwt>~<disclosure>~...~<kb-jwt>
  const parts = presentation.split('~');
  if (parts.length < 2) throw refuse('malformed_presentation', 'the presentation is not an SD-JWT (no ~ separator)');
  const kbJwt = parts[parts.length - 1];
  // Gap 1 (RFC 9901 §4.3, OpenID4VP 1.0 §6.1 require_cryptographic_holder_binding defaults to true): a
  // presentation ending in `~` has no key binding JWT. The library would accept it when no nonce is passed.
  if (!kbJwt) throw refuse('key_binding_missing', 'the presentation has no key binding JWT');
  const issuerJwt = parts[0];
  const encodedDisclosures = parts.slice(1, -1);
  if (encodedDisclosures.some((d) => d === '')) throw refuse('malformed_presentation', 'the presentation has an empty disclosure');
  const sdJwtWithoutKb = presentation.slice(0, presentation.length - kbJwt.length);

  let header: Record<string, unknown>;
  let payload: Record<string, unknown>;
  try {
    header = decodeProtectedHeader(issuerJwt) as Record<string, unknown>;
    payload = decodeJwt(issuerJwt) as Record<string, unknown>;
  } catch {
    throw refuse('malformed_presentation', 'the issuer-signed JWT of the presentation is not a JWT');
  }

  // SD-JWT VC §3.2.1: typ
  if (typeof header.typ !== 'string' || !SD_JWT_VC_TYPES.has(header.typ)) {
    throw refuse('unsupported_credential', 'the credential typ is not dc+sd-jwt');
  }
  // RFC 8725 §3.1: only the asymmetric algorithms we announced; never `none` or a MAC
  const alg = header.alg;
  if (typeof alg !== 'string' || !ISSUER_ALGS.includes(alg)) {
    throw refuse('unsupported_credential', `the credential's signature algorithm (alg) is not accepted; accepted: ${ISSUER_ALGS.join(', ')}`);
  }

  // D10: issuer trust. `iss` must be this service's credential issuer or one of the operator's trustedIssuers.
  const issuer = payload.iss;
  if (typeof issuer !== 'string') throw refuse('malformed_presentation', 'the credential has no iss');
  let issuerKey = ctx.issuerKeys.resolverFor(issuer);
  if (!issuerKey && header.x5c !== undefined) {
    // only anchors for this format and type; none for this service's own types
    if (!ctx.trustAnchors?.length) throw refuse('issuer_not_trusted', 'no trust anchor may vouch for this credential type by x5c');
    issuerKey = await x5cIssuerKey(header.x5c, issuer, alg, ctx.trustAnchors, now);
  }
  if (!issuerKey) throw refuse('issuer_not_trusted', "the credential's issuer (iss) is not trusted");
  // RFC 9901 §7.1 step 2: the issuer's signature, before anything else of the credential is used, with the key
  // jose selects from the issuer's keys by the header's kid and alg (RFC 7515 §4.1.1, §4.1.4)
  try {
    await verifyWithKeys(issuerJwt, issuerKey, ISSUER_ALGS);
  } catch (err) {
    const kid = typeof header.kid === 'string' ? header.kid : undefined;
    throw issuerKeyRefusal(err, issuer, kid);
  }

  // SD-JWT VC §3.2.2.1.1 and OpenID4VP 1.0 §B.3.5: the type asked for (meta.vct_values)
  const accepted = typeof expected.vct === 'string' ? [expected.vct] : expected.vct;
  if (typeof payload.vct !== 'string' || !accepted.includes(payload.vct)) {
    throw refuse('wrong_vct', `the credential's vct is not the type the query asked for (${accepted.join(' or ')})`);
  }
  const vct = payload.vct;

  // SD-JWT VC §3.2.2.2, RFC 7519 §4.1.4-4.1.6: validity period, with the clock tolerance
  for (const claim of ['exp', 'nbf', 'iat'] as const) {
    if (payload[claim] !== undefined && typeof payload[claim] !== 'number') throw refuse('malformed_presentation', `the credential ${claim} is not a number`);
  }
  if (typeof payload.exp === 'number' && payload.exp + tolerance <= now) throw refuse('credential_expired', 'the credential has expired (exp)');
  if (typeof payload.nbf === 'number' && payload.nbf - tolerance > now) throw refuse('credential_not_yet_valid', 'the credential is not valid yet (nbf)');
  if (typeof payload.iat === 'number' && payload.iat - tolerance > now) throw refuse('credential_not_yet_valid', 'the credential is issued in the future (iat)');

  // SD-JWT VC §3.2.2.2 / RFC 7800: the holder key the key binding JWT must be signed with
  const holderJwk = (payload.cnf as { jwk?: unknown } | undefined)?.jwk;
  if (!isPublicJwk(holderJwk)) throw refuse('holder_key_missing', 'the credential has no cnf.jwk public key to bind it to its holder');

  // RFC 9901 §7.1 step 3-4: every disclosure's digest must occur exactly once in the credential
  const sdAlg = payload._sd_alg ?? 'sha-256';
  if (typeof sdAlg !== 'string' || !HASHES[sdAlg]) throw refuse('unsupported_credential', `the credential's _sd_alg is not supported; supported: ${Object.keys(HASHES).join(', ')}`);
  const disclosed = checkDisclosures(payload, encodedDisclosures, sdAlg);

  // RFC 9901 §4.3: the key binding JWT
  let kbHeader: Record<string, unknown>;
  let kbPayload: Record<string, unknown>;
  try {
    kbHeader = decodeProtectedHeader(kbJwt) as Record<string, unknown>;
    kbPayload = decodeJwt(kbJwt) as Record<string, unknown>;
  } catch {
    throw refuse('key_binding_invalid', 'the key binding JWT is not a JWT');
  }
  // RFC 9901 §4.3: typ kb+jwt
  if (kbHeader.typ !== 'kb+jwt') throw refuse('key_binding_invalid', 'the key binding JWT typ is not kb+jwt');
  if (typeof kbHeader.alg !== 'string' || !KB_ALGS.includes(kbHeader.alg)) {
    throw refuse('key_binding_invalid', `the key binding JWT's signature algorithm (alg) is not accepted; accepted: ${KB_ALGS.join(', ')}`);
  }
  // Gap 2 (OpenID4VP 1.0 §B.3.6, RFC 9901 §7.3 step 5): `aud` is our client identifier, exactly
  if (kbPayload.aud !== expected.clientId) throw refuse('wrong_audience', 'the key binding JWT aud is not this verifier\'s client_id');
  // OpenID4VP 1.0 §B.3.6: `nonce` is the request's (the library checks it again)
  if (kbPayload.nonce !== expected.nonce) throw refuse('wrong_nonce', 'the key binding JWT nonce is not the nonce of this request');
  // Gap 3 (RFC 9901 §7.3 step 5): `iat` within an acceptable window: not older than KB_MAX_AGE, not in the future
  if (typeof kbPayload.iat !== 'number') throw refuse('key_binding_invalid', 'the key binding JWT has no iat');
  if (kbPayload.iat - tolerance > now) throw refuse('stale_key_binding', 'the key binding JWT iat is in the future');
  if (now - kbPayload.iat > KB_MAX_AGE + tolerance) throw refuse('stale_key_binding', `the key binding JWT is older than ${KB_MAX_AGE} seconds`);
  // RFC 9901 §4.3.1: sd_hash over the presentation up to and including the last `~` (the library checks it again)
  if (kbPayload.sd_hash !== hashB64(sdJwtWithoutKb, sdAlg)) throw refuse('wrong_sd_hash', 'the key binding JWT sd_hash does not match the presentation');

  // The library (@sd-jwt/core): time claims, KB-JWT signature by cnf.jwk, nonce, sd_hash. The issuer signature
  // was verified above: its callback only checks that the library looks at that same JWT. Its errors do not
  // tell which signature failed, so the callbacks record it.
  let issuerSignatureFailed = false;
  let kbSignatureFailed = false;
  const sdJwt = new SDJwtInstance({
    hasher: (data, algorithm) => hashBytes(typeof data === 'string' ? data : Buffer.from(data), algorithm),
    verifier: async (data, signature) => {
      const ok = `${data}.${signature}` === issuerJwt;
      if (!ok) issuerSignatureFailed = true;
      return ok;
    },
    kbVerifier: async (data, signature) => {
      const ok = await verifyWithHolderKey(`${data}.${signature}`, holderJwk, kbHeader.alg as string);
      if (!ok) kbSignatureFailed = true;
      return ok;
    },
  });
  let verified: Awaited<ReturnType<SDJwtInstance<Record<string, unknown>>['verify']>>;
  try {
    verified = await sdJwt.verify(presentation, { keyBindingNonce: expected.nonce, currentDate: now, skewSeconds: tolerance });
  } catch (err) {
    if (issuerSignatureFailed) throw refuse('issuer_signature_invalid', 'the credential signature does not verify with the issuer\'s keys');
    if (kbSignatureFailed) throw refuse('key_binding_signature_invalid', 'the key binding JWT is not signed by the credential\'s cnf.jwk');
    throw refuse('presentation_invalid', `the presentation does not verify${libraryReason(err)}`);
  }
  if (!verified.kb) throw refuse('key_binding_missing', 'the key binding JWT was not verified'); // defence in depth for gap 1
  // D18, draft-ietf-oauth-status-list §8: last, once everything local holds, the credential's status when it
  // references a status list. Checked here rather than by @sd-jwt/sd-jwt-vc, which has no cache, no size or
  // redirect limits and does not check the list's `sub`.
  await checkStatus(payload.status, issuer, issuerKey, ctx);

  const claims = Object.fromEntries(Object.entries(verified.payload as Record<string, unknown>).filter(([name]) => !RESERVED_CLAIM_NAMES.has(name)));
  return {
    issuer,
    vct,
    claims,
    disclosed,
    holderJwk,
    holderKeyThumbprint: await calculateJwkThumbprint(holderJwk),
  };
}

/**
 * SD-JWT VC §3.5 (X.509): the issuer's key is the leaf of the header's `x5c`, whose chain must be a valid
 * RFC 5280 path to one of the given trust anchors (name constraints included), whose key usages allow
 * signing credentials, and whose subjectAltName names the issuer: a uniformResourceIdentifier equal to
 * `iss`, or a dNSName equal to the host of an https `iss`. Refusals never repeat `iss`: it is the
 * presenter's text.
 */
async function x5cIssuerKey(x5c: unknown, issuer: string, alg: string, anchors: Uint8Array[], now: number): Promise<JWTVerifyGetKey> {
  if (!Array.isArray(x5c) || x5c.length === 0 || x5c.length > 10 || !x5c.every((c) => typeof c === 'string' && /^[A-Za-z0-9+/]+={0,2}$/.test(c))) {
    throw refuse('malformed_presentation', 'the credential x5c header is not an array of base64 certificates');
  }
  const chain = x5c.map((c: string) => new Uint8Array(Buffer.from(c, 'base64')));
  try {
    await verifyCertificateChain(chain, anchors, new Date(now * 1000), 'sd-jwt-vc-issuer');
  } catch (err) {
    if (err instanceof X509ChainError) throw refuse('issuer_not_trusted', `the credential's x5c chain is not trusted: ${err.message}`);
    throw refuse('malformed_presentation', 'the credential x5c header does not hold readable certificates');
  }
  let names: { dns: string[]; uris: string[] };
  try {
    names = { dns: dnsNames(chain[0]), uris: uriNames(chain[0]) };
  } catch {
    throw refuse('malformed_presentation', 'the credential x5c leaf certificate cannot be read');
  }
  let host: string | undefined;
  try {
    const url = new URL(issuer);
    if (url.protocol === 'https:') host = url.hostname;
  } catch {
    // not a URL: only a URI SAN can name it
  }
  if (!names.uris.includes(issuer) && !(host !== undefined && names.dns.includes(host))) {
    throw refuse('issuer_not_trusted', "the x5c leaf certificate does not name the credential's iss (subjectAltName)");
  }
  let key: Awaited<ReturnType<typeof importJWK>>;
  try {
    key = await importJWK(await certificatePublicJwk(chain[0]), alg);
  } catch {
    throw refuse('issuer_signature_invalid', `the credential is signed with ${alg}, which the x5c leaf certificate's key does not use`);
  }
  return async () => key;
}

/**
 * RFC 9901 §7.1: walks the signed payload, and each disclosed value in turn, for digests (`_sd` arrays of
 * objects, `{"...": digest}` elements of arrays). Refuses a disclosure that no digest references (§7.1
 * step 5), a digest referenced twice (step 3.3), a disclosure of the wrong shape for where it is used, a
 * claim name `_sd` or `...`, or one that already exists in the object (step 3.2.2.4). Returns the names of
 * the disclosed top-level claims.
 */
export function checkDisclosures(payload: Record<string, unknown>, encoded: string[], sdAlg: string): string[] {
  const byDigest = new Map<string, unknown[]>();
  for (const disclosure of encoded) {
    let decoded: unknown;
    try {
      decoded = JSON.parse(Buffer.from(disclosure, 'base64url').toString('utf8'));
    } catch {
      throw refuse('malformed_presentation', 'a disclosure is not base64url-encoded JSON');
    }
    if (!Array.isArray(decoded) || (decoded.length !== 2 && decoded.length !== 3) || typeof decoded[0] !== 'string') {
      throw refuse('malformed_presentation', 'a disclosure is not an array of salt, (name,) value');
    }
    const digest = hashB64(disclosure, sdAlg);
    if (byDigest.has(digest)) throw refuse('disclosure_not_in_credential', 'the same disclosure is presented twice');
    byDigest.set(digest, decoded);
  }

  const referenced = new Set<string>();
  const topLevel: string[] = [];
  const take = (digest: unknown): unknown[] | undefined => {
    if (typeof digest !== 'string') throw refuse('malformed_presentation', 'the credential has a digest that is not a string');
    if (referenced.has(digest)) throw refuse('malformed_presentation', 'the credential references a digest twice');
    referenced.add(digest);
    return byDigest.get(digest); // a digest without a disclosure: not disclosed, or a decoy
  };
  const walk = (value: unknown, path: string[]): void => {
    // bound the recursion: checkDisclosures is also usable on a payload whose signature is not checked
    if (path.length > MAX_DEPTH) throw refuse('malformed_presentation', `the credential nests claims deeper than ${MAX_DEPTH} levels`);
    if (Array.isArray(value)) {
      for (const element of value) {
        if (isObject(element) && Object.keys(element).length === 1 && '...' in element) {
          const disclosure = take(element['...']);
          if (!disclosure) continue;
          if (disclosure.length !== 2) throw refuse('malformed_presentation', 'an array element disclosure has a claim name');
          walk(disclosure[1], [...path, '[]']);
        } else {
          walk(element, [...path, '[]']);
        }
      }
      return;
    }
    if (!isObject(value)) return;
    for (const [name, child] of Object.entries(value)) if (name !== '_sd' && name !== '_sd_alg') walk(child, [...path, name]);
    const digests = value._sd;
    if (digests === undefined) return;
    if (!Array.isArray(digests)) throw refuse('malformed_presentation', 'the credential has an _sd that is not an array');
    const names = new Set(Object.keys(value));
    for (const digest of digests) {
      const disclosure = take(digest);
      if (!disclosure) continue;
      if (disclosure.length !== 3 || typeof disclosure[1] !== 'string') throw refuse('malformed_presentation', 'an object property disclosure has no claim name');
      const name = disclosure[1];
      if (name === '_sd' || name === '...' || names.has(name)) throw refuse('malformed_presentation', 'a disclosure would overwrite a claim of the credential');
      names.add(name);
      if (path.length === 0) topLevel.push(name);
      walk(disclosure[2], [...path, name]);
    }
  };
  walk(payload, []);

  for (const digest of byDigest.keys()) {
    if (!referenced.has(digest)) throw refuse('disclosure_not_in_credential', 'a disclosure does not belong to this credential (its digest is not in the credential)');
  }
  return topLevel;
}

/**
 * The library's reason, when it is a short sentence: some of its messages embed the JWT they failed on,
 * which may carry claim values, and those never leave this module (D17).
 */
function libraryReason(err: unknown): string {
  const message = err instanceof Error ? err.message : '';
  return /^[A-Za-z0-9 _:'-]{1,120}$/.test(message) ? `: ${message}` : '';
}

/**
 * jose's failures with the issuer's keys as refusals: keys that cannot be fetched, no key for the header's
 * kid and alg, or a signature that does not verify (or a published key that does not import).
 */
function issuerKeyRefusal(err: unknown, issuer: string, kid: string | undefined): VerificationRefusal {
  const code = (err as { code?: string }).code;
  if (err instanceof IssuerKeysUnavailable) return refuse('issuer_keys_unavailable', `the keys of issuer ${issuer} are unavailable: ${err.message}`);
  if (code === 'ERR_JWKS_TIMEOUT' || code === 'ERR_JWKS_INVALID') {
    return refuse('issuer_keys_unavailable', `the keys of issuer ${issuer} are unavailable: ${(err as Error).message}`);
  }
  if (code === 'ERR_JWKS_NO_MATCHING_KEY') return refuse('unknown_issuer_key', `issuer ${issuer} has no key ${kid === undefined ? 'for this credential' : "with the credential's kid"}`);
  return refuse('issuer_signature_invalid', 'the credential signature does not verify with the issuer\'s keys');
}

/** The key binding JWT (RFC 9901 §4.3) verified with the credential's cnf.jwk, public members only. */
async function verifyWithHolderKey(jws: string, jwk: JWK, alg: string): Promise<boolean> {
  try {
    await compactVerify(jws, await importJWK(publicMembers(jwk), alg), { algorithms: [alg] });
    return true;
  } catch {
    return false;
  }
}

function publicMembers(jwk: JWK): JWK {
  const { kty, crv, x, y, n, e } = jwk;
  return Object.fromEntries(Object.entries({ kty, crv, x, y, n, e }).filter(([, v]) => v !== undefined)) as JWK;
}

function isPublicJwk(value: unknown): value is JWK {
  if (!isObject(value) || typeof value.kty !== 'string') return false;
  return !('d' in value) && !('p' in value) && !('k' in value);
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function hashBytes(data: string | Buffer, algorithm: string): Uint8Array {
  const nodeAlg = HASHES[algorithm.toLowerCase()];
  if (!nodeAlg) throw new Error(`unsupported hash algorithm ${algorithm}`);
  return new Uint8Array(createHash(nodeAlg).update(data).digest());
}

function hashB64(data: string, algorithm: string): string {
  return base64url.encode(hashBytes(data, algorithm));
}

/**
 * D18: a `status.status_list` reference (draft-ietf-oauth-status-list §6.2) is looked up; other status
 * mechanisms are not known here and are left alone. Revoked (1) and suspended (2) are refused by name, any
 * other value but valid (0) as an invalid status. A list that cannot be fetched is refused or accepted as
 * `onStatusUnavailable` says; a list that is not to be trusted is always refused.
 */
async function checkStatus(status: unknown, issuer: string, issuerKey: JWTVerifyGetKey, ctx: PresentationContext): Promise<void> {
  if (status === undefined) return;
  if (!isObject(status)) throw refuse('malformed_presentation', 'the credential status is not an object');
  const reference = status.status_list;
  if (reference === undefined) return;
  if (!isObject(reference) || typeof reference.uri !== 'string' || typeof reference.idx !== 'number' || !Number.isSafeInteger(reference.idx) || reference.idx < 0) {
    throw refuse('malformed_presentation', 'the credential status.status_list needs a uri and a non-negative integer idx');
  }
  let value: number;
  try {
    value = await (ctx.statusChecks ?? new StatusChecks(ctx.fetch)).status(issuer, reference.uri, reference.idx, issuerKey);
  } catch (err) {
    if (err instanceof StatusListUnavailable || err instanceof IssuerKeysUnavailable) {
      if (ctx.onStatusUnavailable === 'accept') return;
      throw refuse('credential_status_unavailable', `credential status unavailable: ${err.message}`);
    }
    if (err instanceof StatusListInvalid) throw refuse('credential_status_invalid', `credential status invalid: ${err.message}`);
    throw err;
  }
  if (value === 1) throw refuse('credential_revoked', 'credential revoked');
  if (value === 2) throw refuse('credential_suspended', 'credential suspended');
  if (value !== 0) throw refuse('credential_status_invalid', `credential status invalid: the status list gives it the value ${value}`);
}
