// @peculiar/x509 resolves its parsers through tsyringe, which needs the Reflect metadata API
import 'reflect-metadata';
import { createHash, createPublicKey, webcrypto, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import * as x509 from '@peculiar/x509';

/**
 * The dev wallet's own X.509 checks, on @peculiar/x509 (parsing, names, extensions, signatures) and
 * node:crypto (keys, hashes): the verifier's certificate of a signed request (OpenID4VP 1.0 §5.9.3) and the
 * issuer's `x5c` of a received SD-JWT VC (SD-JWT VC §3.5). The wallet shares no code with the service's
 * validator, so that a test of "wallet against our service" never has our code checking itself.
 */

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

/** A chain the wallet does not accept; the message says why, for the holder. */
export class CertificateError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CertificateError';
  }
}

/** a chain longer than this is refused before any signature is checked */
const MAX_CHAIN = 10;

/**
 * Extensions whose meaning this module applies or that constrain nothing it relies on (key identifiers,
 * policies it does not require). A certificate with another critical extension is refused (RFC 5280 §4.2).
 */
const KNOWN_EXTENSIONS = new Set([
  '2.5.29.14', // subjectKeyIdentifier
  '2.5.29.15', // keyUsage
  '2.5.29.17', // subjectAltName
  '2.5.29.19', // basicConstraints
  '2.5.29.35', // authorityKeyIdentifier
  '2.5.29.37', // extKeyUsage
]);

export function parseCertificate(der: Uint8Array, what: string): x509.X509Certificate {
  let cert: x509.X509Certificate;
  try {
    cert = new x509.X509Certificate(Uint8Array.from(der));
  } catch {
    throw new CertificateError(`${what} is not a readable X.509 certificate`);
  }
  // the parser ignores bytes after the certificate, which would still change its hash (x509_hash)
  if (cert.rawData.byteLength !== der.byteLength) throw new CertificateError(`${what} has bytes after the certificate`);
  return cert;
}

/** PEM certificate(s) → DER, in file order; `where` names the file in errors. */
export function readPemCertificates(pem: string, where: string): Uint8Array[] {
  const begins = pem.match(/-----BEGIN CERTIFICATE-----/g)?.length ?? 0;
  const blocks = [...pem.matchAll(/-----BEGIN CERTIFICATE-----([^-]*)-----END CERTIFICATE-----/g)];
  if (begins === 0) throw new CertificateError(`${where}: no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  if (blocks.length !== begins)
    throw new CertificateError(
      `${where}: malformed PEM: a -----BEGIN CERTIFICATE----- has no matching -----END CERTIFICATE-----`,
    );
  return blocks.map((block, i) => {
    const b64 = block[1].replace(/\s+/g, '');
    // RFC 7468 §3: the body is base64; Buffer would silently skip anything else
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64))
      throw new CertificateError(`${where}: certificate ${i + 1} is malformed PEM (not base64)`);
    const der = new Uint8Array(Buffer.from(b64, 'base64'));
    parseCertificate(der, `${where}: certificate ${i + 1}`);
    return der;
  });
}

/**
 * A JOSE `x5c` header (RFC 7515 §4.1.6): a non-empty array of base64 (not base64url) DER certificates.
 * Returns the DER certificates in the header's order.
 */
export function readX5c(x5c: unknown, what: string): Uint8Array[] {
  if (!Array.isArray(x5c) || x5c.length === 0 || !x5c.every((c) => typeof c === 'string'))
    throw new CertificateError(`${what} is not a non-empty array of base64 certificates`);
  if (x5c.length > MAX_CHAIN)
    throw new CertificateError(`${what} holds ${x5c.length} certificates; the wallet takes at most ${MAX_CHAIN}`);
  return x5c.map((c: string, i) => {
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(c)) throw new CertificateError(`${what}[${i}] is not base64 (RFC 7515 §4.1.6)`);
    const der = new Uint8Array(Buffer.from(c, 'base64'));
    parseCertificate(der, `${what}[${i}]`);
    return der;
  });
}

/** OpenID4VP 1.0 §5.9.3 `x509_hash`: base64url of the SHA-256 of the DER certificate. */
export function x509Hash(der: Uint8Array): string {
  return createHash('sha256').update(der).digest('base64url');
}

/** The subject DN as @peculiar/x509 prints it, e.g. "CN=verifier.example". */
export function subjectName(der: Uint8Array): string {
  return parseCertificate(der, 'the certificate').subject;
}

/** RFC 5280 §4.2.1.6: the subjectAltName entries of one type ('dns', 'url', 'ip'). */
export function altNames(der: Uint8Array, type: 'dns' | 'url' | 'ip'): string[] {
  const san = parseCertificate(der, 'the certificate').getExtension(x509.SubjectAlternativeNameExtension);
  return san ? san.names.items.filter((n) => n.type === type).map((n) => n.value) : [];
}

/** The certificate's public key, for jose (`compactVerify`) and node:crypto. */
export function certificatePublicKey(der: Uint8Array): KeyObject {
  const cert = parseCertificate(der, 'the certificate');
  return createPublicKey({ key: Buffer.from(cert.publicKey.rawData), format: 'der', type: 'spki' });
}

/**
 * SD-JWT VC §3.5: the leaf names the issuer identifier `iss` as a subjectAltName URI, or its host as a
 * dNSName (an iPAddress for an IP literal, RFC 5280 §4.2.1.6).
 */
export function leafNamesIssuer(leaf: Uint8Array, iss: string): boolean {
  let host: string;
  try {
    host = new URL(iss).hostname.replace(/^\[(.*)\]$/, '$1');
  } catch {
    return false;
  }
  if (altNames(leaf, 'url').includes(iss)) return true;
  return isIP(host) ? altNames(leaf, 'ip').includes(host) : altNames(leaf, 'dns').includes(host.toLowerCase());
}

const sameDer = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));

function basicConstraints(cert: x509.X509Certificate): { ca: boolean; pathLength?: number } {
  const bc = cert.getExtension(x509.BasicConstraintsExtension);
  return bc ? { ca: bc.ca, pathLength: bc.pathLength } : { ca: false };
}

function checkValidity(cert: x509.X509Certificate, label: string, now: Date): void {
  if (now < cert.notBefore) throw new CertificateError(`${label} is not valid until ${cert.notBefore.toISOString()}`);
  if (now > cert.notAfter) throw new CertificateError(`${label} has expired (on ${cert.notAfter.toISOString()})`);
}

function checkCriticalExtensions(cert: x509.X509Certificate, label: string): void {
  const unknown = cert.extensions.find((e) => e.critical && !KNOWN_EXTENSIONS.has(e.type));
  if (unknown)
    throw new CertificateError(`${label} has a critical extension the wallet does not process (${unknown.type})`);
}

/** RFC 5280 §4.2.1.9, §4.2.1.3: a certificate that signs another is a CA whose key may sign certificates. */
function checkIssuerMay(cert: x509.X509Certificate, label: string, below: number): void {
  const { ca, pathLength } = basicConstraints(cert);
  if (!ca) throw new CertificateError(`${label} signs a certificate but is not a CA (basicConstraints cA is not true)`);
  const ku = cert.getExtension(x509.KeyUsagesExtension);
  if (ku && (ku.usages & x509.KeyUsageFlags.keyCertSign) === 0)
    throw new CertificateError(`${label} may not sign certificates (its keyUsage lacks keyCertSign)`);
  // §4.2.1.9: pathLenConstraint counts the intermediate CAs that may follow it down to the leaf
  if (pathLength !== undefined && below > pathLength)
    throw new CertificateError(`${label} allows ${pathLength} intermediate CA(s) below it, the chain has ${below}`);
}

/** `cert` names `issuer` as its issuer and `issuer`'s key verifies its signature. */
async function signedBy(cert: x509.X509Certificate, issuer: x509.X509Certificate): Promise<boolean> {
  if (cert.issuer !== issuer.subject) return false;
  try {
    return await cert.verify({ publicKey: issuer, signatureOnly: true });
  } catch {
    return false;
  }
}

/**
 * Checks a certificate chain as it is given, leaf first (RFC 7515 §4.1.6 `x5c`), each certificate followed by
 * the one that signed it:
 *  - every certificate is valid at `now` and has no critical extension the wallet does not process;
 *  - the leaf is not a CA;
 *  - each certificate names the next as its issuer and verifies under its key; each signer is a CA that may
 *    sign certificates, within its pathLenConstraint;
 *  - with `trust`, the chain ends at one of those CAs (its last certificate is one, or is signed by one, which
 *    must be valid at `now`). Without `trust` (empty), nothing anchors it: the result says so, and the caller
 *    decides what else vouches for the leaf.
 * The trust anchor may end the chain or be left out. Not processed, as a dev wallet: revocation, policies
 * and name constraints (a chain certificate with them critical is refused; a trusted root's are not applied).
 */
export async function checkChain(
  chain: Uint8Array[],
  opts: { trust?: Uint8Array[]; now?: Date } = {},
): Promise<{ anchored: boolean }> {
  const now = opts.now ?? new Date();
  if (chain.length === 0) throw new CertificateError('the chain is empty');
  if (chain.length > MAX_CHAIN)
    throw new CertificateError(`the chain holds ${chain.length} certificates; the wallet takes at most ${MAX_CHAIN}`);
  const certs = chain.map((der, i) => parseCertificate(der, `certificate ${i + 1} of the chain`));
  const label = (i: number) => (i === 0 ? 'the leaf certificate' : `certificate ${i + 1} of the chain`);
  certs.forEach((cert, i) => {
    checkValidity(cert, label(i), now);
    checkCriticalExtensions(cert, label(i));
  });
  if (basicConstraints(certs[0]).ca)
    throw new CertificateError('the first certificate is a CA, not a leaf: the chain must list the leaf first');
  for (let i = 0; i + 1 < certs.length; i++) {
    if (!(await signedBy(certs[i], certs[i + 1]))) {
      throw new CertificateError(
        `the chain is not in order: certificate ${i + 2} did not sign ${label(i)} (leaf first, each certificate followed by its issuer)`,
      );
    }
    checkIssuerMay(certs[i + 1], `certificate ${i + 2} of the chain`, i);
  }
  const trust = opts.trust ?? [];
  if (trust.length === 0) return { anchored: false };

  const last = certs.length - 1;
  const anchors = trust.map((der, i) => ({ der, cert: parseCertificate(der, `trusted root ${i + 1}`) }));
  // the anchor itself closes the chain; it was checked above as a member of it
  if (anchors.some((a) => sameDer(a.der, chain[last]))) return { anchored: true };
  for (const anchor of anchors) {
    if (!(await signedBy(certs[last], anchor.cert))) continue;
    checkValidity(anchor.cert, `the trusted root ${anchor.cert.subject}`, now);
    checkIssuerMay(anchor.cert, `the trusted root ${anchor.cert.subject}`, last);
    return { anchored: true };
  }
  throw new CertificateError('the chain does not end at a trusted root');
}
