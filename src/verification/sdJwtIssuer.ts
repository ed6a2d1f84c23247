import { decodeJwt, decodeProtectedHeader, importJWK, type JWTVerifyGetKey } from 'jose';
import { certificatePublicJwk, dnsNames, uriNames, verifyCertificateChain, X509ChainError } from '../keys/x509.js';
import { refuse, type VerificationRefusal } from './errors.js';
import { IssuerKeysUnavailable, type IssuerKeys } from './issuerKeys.js';
import { verifyWithKeys } from './jws.js';

/** Issuer signature algorithms: what `client_metadata.vp_formats_supported` announces. */
export const ISSUER_ALGS = ['ES256', 'EdDSA'];
/** SD-JWT VC §3.2.1: `dc+sd-jwt`; `vc+sd-jwt` is the earlier name, still accepted during the transition. */
const SD_JWT_VC_TYPES = new Set(['dc+sd-jwt', 'vc+sd-jwt']);

/** The issuer-signed JWT of an SD-JWT VC: its header and payload, signature not yet verified. */
export interface IssuerJwt {
  jwt: string;
  header: Record<string, unknown>;
  payload: Record<string, unknown>;
}

/** The header and payload of the issuer-signed JWT, and its `typ` and `alg` (SD-JWT VC §3.2.1, RFC 8725 §3.1). */
export function decodeIssuerJwt(jwt: string): IssuerJwt & { alg: string } {
  let header: Record<string, unknown>;
  let payload: Record<string, unknown>;
  try {
    header = decodeProtectedHeader(jwt) as Record<string, unknown>;
    payload = decodeJwt(jwt) as Record<string, unknown>;
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
    throw refuse(
      'unsupported_credential',
      `the credential's signature algorithm (alg) is not accepted; accepted: ${ISSUER_ALGS.join(', ')}`,
    );
  }
  return { jwt, header, payload, alg };
}

/**
 * D10: issuer trust. `iss` must be this service's credential issuer or one of the operator's trustedIssuers,
 * or (SD-JWT VC §3.5) the header's `x5c` chains to a trust anchor for this format and type. Then RFC 9901
 * §7.1 step 2: the issuer's signature, before anything else of the credential is used, with the key jose
 * selects from the issuer's keys by the header's kid and alg (RFC 7515 §4.1.1, §4.1.4). Returns the issuer
 * and its keys (for the status list).
 */
export async function verifyIssuer(
  { jwt, header, payload, alg }: IssuerJwt & { alg: string },
  trust: { issuerKeys: IssuerKeys; trustAnchors?: Uint8Array[] },
  now: number,
): Promise<{ issuer: string; issuerKey: JWTVerifyGetKey }> {
  const issuer = payload.iss;
  if (typeof issuer !== 'string') throw refuse('malformed_presentation', 'the credential has no iss');
  let issuerKey = trust.issuerKeys.resolverFor(issuer);
  if (!issuerKey && header.x5c !== undefined) {
    // only anchors for this format and type; none for this service's own types
    if (!trust.trustAnchors?.length)
      throw refuse('issuer_not_trusted', 'no trust anchor may vouch for this credential type by x5c');
    issuerKey = await x5cIssuerKey(header.x5c, issuer, alg, trust.trustAnchors, now);
  }
  if (!issuerKey) throw refuse('issuer_not_trusted', "the credential's issuer (iss) is not trusted");
  try {
    await verifyWithKeys(jwt, issuerKey, ISSUER_ALGS);
  } catch (err) {
    const kid = typeof header.kid === 'string' ? header.kid : undefined;
    throw issuerKeyRefusal(err, issuer, kid);
  }
  return { issuer, issuerKey };
}

/** SD-JWT VC §3.2.2.1.1 and OpenID4VP 1.0 §B.3.5: the type asked for (meta.vct_values). */
export function checkVct(payload: Record<string, unknown>, expected: string | readonly string[]): string {
  const accepted = typeof expected === 'string' ? [expected] : expected;
  if (typeof payload.vct !== 'string' || !accepted.includes(payload.vct)) {
    throw refuse('wrong_vct', `the credential's vct is not the type the query asked for (${accepted.join(' or ')})`);
  }
  return payload.vct;
}

/** SD-JWT VC §3.2.2.2, RFC 7519 §4.1.4-4.1.6: validity period, with the clock tolerance. */
export function checkValidity(payload: Record<string, unknown>, now: number, tolerance: number): void {
  for (const claim of ['exp', 'nbf', 'iat'] as const) {
    if (payload[claim] !== undefined && typeof payload[claim] !== 'number')
      throw refuse('malformed_presentation', `the credential ${claim} is not a number`);
  }
  if (typeof payload.exp === 'number' && payload.exp + tolerance <= now)
    throw refuse('credential_expired', 'the credential has expired (exp)');
  if (typeof payload.nbf === 'number' && payload.nbf - tolerance > now)
    throw refuse('credential_not_yet_valid', 'the credential is not valid yet (nbf)');
  if (typeof payload.iat === 'number' && payload.iat - tolerance > now)
    throw refuse('credential_not_yet_valid', 'the credential is issued in the future (iat)');
}

/**
 * SD-JWT VC §3.5 (X.509): the issuer's key is the leaf of the header's `x5c`, whose chain must be a valid
 * RFC 5280 path to one of the given trust anchors (name constraints included), whose key usages allow
 * signing credentials, and whose subjectAltName names the issuer: a uniformResourceIdentifier equal to
 * `iss`, or a dNSName equal to the host of an https `iss`. Refusals never repeat `iss`: it is the
 * presenter's text.
 */
async function x5cIssuerKey(
  x5c: unknown,
  issuer: string,
  alg: string,
  anchors: Uint8Array[],
  now: number,
): Promise<JWTVerifyGetKey> {
  if (
    !Array.isArray(x5c) ||
    x5c.length === 0 ||
    x5c.length > 10 ||
    !x5c.every((c) => typeof c === 'string' && /^[A-Za-z0-9+/]+={0,2}$/.test(c))
  ) {
    throw refuse('malformed_presentation', 'the credential x5c header is not an array of base64 certificates');
  }
  const chain = x5c.map((c: string) => new Uint8Array(Buffer.from(c, 'base64')));
  try {
    await verifyCertificateChain(chain, anchors, new Date(now * 1000), 'sd-jwt-vc-issuer');
  } catch (err) {
    if (err instanceof X509ChainError)
      throw refuse('issuer_not_trusted', `the credential's x5c chain is not trusted: ${err.message}`);
    throw refuse('malformed_presentation', 'the credential x5c header does not hold readable certificates');
  }
  checkLeafNamesIssuer(chain[0], issuer);
  let key: Awaited<ReturnType<typeof importJWK>>;
  try {
    key = await importJWK(await certificatePublicJwk(chain[0]), alg);
  } catch {
    throw refuse(
      'issuer_signature_invalid',
      `the credential is signed with ${alg}, which the x5c leaf certificate's key does not use`,
    );
  }
  return async () => key;
}

/** The leaf's subjectAltName names `iss`: a URI equal to it, or the DNS name of an https `iss`. */
function checkLeafNamesIssuer(leaf: Uint8Array, issuer: string): void {
  let names: { dns: string[]; uris: string[] };
  try {
    names = { dns: dnsNames(leaf), uris: uriNames(leaf) };
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
}

/**
 * jose's failures with the issuer's keys as refusals: keys that cannot be fetched, no key for the header's
 * kid and alg, or a signature that does not verify (or a published key that does not import).
 */
function issuerKeyRefusal(err: unknown, issuer: string, kid: string | undefined): VerificationRefusal {
  const code = (err as { code?: string }).code;
  if (err instanceof IssuerKeysUnavailable)
    return refuse('issuer_keys_unavailable', `the keys of issuer ${issuer} are unavailable: ${err.message}`);
  if (code === 'ERR_JWKS_TIMEOUT' || code === 'ERR_JWKS_INVALID') {
    return refuse('issuer_keys_unavailable', `the keys of issuer ${issuer} are unavailable: ${(err as Error).message}`);
  }
  if (code === 'ERR_JWKS_NO_MATCHING_KEY')
    return refuse(
      'unknown_issuer_key',
      `issuer ${issuer} has no key ${kid === undefined ? 'for this credential' : "with the credential's kid"}`,
    );
  return refuse('issuer_signature_invalid', "the credential signature does not verify with the issuer's keys");
}
