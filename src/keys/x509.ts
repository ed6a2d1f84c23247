// @peculiar/x509 resolves its parsers through tsyringe, which needs the Reflect metadata API
import 'reflect-metadata';
import {
  createHash,
  createPrivateKey,
  createPublicKey,
  webcrypto,
  X509Certificate as NodeCertificate,
  type KeyObject,
} from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { base64url, exportJWK, type JWK } from 'jose';
import { checkCertificateExtensions, validateCertificatePath, X509ChainError } from './certPath.js';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

export { X509ChainError };

/** One certificate, read by both libraries: node:crypto checks signatures, @peculiar/x509 reads extensions. */
interface Certificate {
  der: Uint8Array;
  node: NodeCertificate;
  cert: x509.X509Certificate;
}

/** Certificates read, by DER: an mdoc's signer and root recur within and across presentations. 256 at most; no failure. */
const alreadyRead = new Map<string, Certificate>();

function readCertificate(der: Uint8Array, what: string): Certificate {
  const key = Buffer.from(der).toString('base64');
  const known = alreadyRead.get(key);
  if (known) return known;
  let node: NodeCertificate;
  let cert: x509.X509Certificate;
  try {
    node = new NodeCertificate(der);
    cert = new x509.X509Certificate(Uint8Array.from(der));
  } catch {
    throw new Error(`${what} is not a readable X.509 certificate`);
  }
  // both parsers ignore bytes after the certificate, which would still change its x509_hash
  if (!node.raw.equals(Buffer.from(der))) throw new Error(`${what} has bytes after the certificate`);
  if (alreadyRead.size >= 256) alreadyRead.delete(alreadyRead.keys().next().value!);
  alreadyRead.set(key, { der: Uint8Array.from(der), node, cert });
  return alreadyRead.get(key)!;
}

/** A certificate as @peculiar/x509 reads it (names, extensions), read once (above). */
export const certificateOf = (der: Uint8Array): x509.X509Certificate => readCertificate(der, 'the certificate').cert;

/** PEM certificate(s) → DER, in file order. */
export function readPemCertificates(pem: string, where: string): Uint8Array[] {
  const begins = pem.match(/-----BEGIN CERTIFICATE-----/g)?.length ?? 0;
  const blocks = [...pem.matchAll(/-----BEGIN CERTIFICATE-----([^-]*)-----END CERTIFICATE-----/g)];
  if (begins === 0) throw new Error(`${where}: no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  if (blocks.length !== begins)
    throw new Error(`${where}: malformed PEM: a -----BEGIN CERTIFICATE----- has no matching -----END CERTIFICATE-----`);
  return blocks.map((block, i) => {
    const b64 = block[1].replace(/\s+/g, '');
    // RFC 7468 §3: the body is base64; Buffer would silently skip anything else
    if (!/^[A-Za-z0-9+/]+={0,2}$/.test(b64))
      throw new Error(`${where}: certificate ${i + 1} is malformed PEM (not base64)`);
    const der = new Uint8Array(Buffer.from(b64, 'base64'));
    try {
      readCertificate(der, `certificate ${i + 1}`);
    } catch (err) {
      throw new Error(`${where}: ${(err as Error).message}`, { cause: err });
    }
    return der;
  });
}

/** A PKCS#8 or SEC1 PEM private key, EC P-256 (HAIP 1.0 asks verifiers to sign with ES256). */
export function readPemPrivateKey(pem: string, where: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new Error(`${where}: not a readable, unencrypted PEM private key`);
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new Error(`${where}: must be an EC P-256 private key (ES256), not ${describeKey(key)}`);
  }
  return key;
}

const describeKey = (key: KeyObject) =>
  [key.asymmetricKeyType, key.asymmetricKeyDetails?.namedCurve].filter(Boolean).join(' ');

export const pemBody = (der: Uint8Array) =>
  Buffer.from(der)
    .toString('base64')
    .match(/.{1,64}/g)
    ?.join('\n') ?? '';

export function toPem(der: Uint8Array): string {
  return `-----BEGIN CERTIFICATE-----\n${pemBody(der)}\n-----END CERTIFICATE-----\n`;
}

/** OpenID4VP 1.0 §5.9.3 `x509_hash`: base64url of the SHA-256 of the DER certificate. */
export function x509Hash(der: Uint8Array): string {
  return createHash('sha256').update(der).digest('base64url');
}

/** RFC 5280 §4.2.1.6: the dNSName entries of the subjectAltName. */
export function dnsNames(der: Uint8Array): string[] {
  return altNames(der, 'dns');
}

/** RFC 5280 §4.2.1.6: the uniformResourceIdentifier entries of the subjectAltName. */
export function uriNames(der: Uint8Array): string[] {
  return altNames(der, 'url');
}

function altNames(der: Uint8Array, type: 'dns' | 'url'): string[] {
  const san = certificateOf(der).getExtension(x509.SubjectAlternativeNameExtension);
  return san ? san.names.items.filter((n) => n.type === type).map((n) => n.value) : [];
}

/** RFC 5280 §4.2.1.2, base64url: how `trusted_authorities` `aki` values name a trust anchor (OpenID4VP 1.0 §6.1.1.1). */
export function subjectKeyIdentifier(der: Uint8Array): string | undefined {
  const ski = certificateOf(der).getExtension(x509.SubjectKeyIdentifierExtension);
  return ski ? base64url.encode(Buffer.from(ski.keyId, 'hex')) : undefined;
}

/** RFC 5280 §4.2.1.1, base64url of the keyIdentifier (OpenID4VP 1.0 §6.1.1.1 `aki`). */
export function authorityKeyIdentifier(der: Uint8Array): string | undefined {
  const aki = certificateOf(der).getExtension(x509.AuthorityKeyIdentifierExtension);
  return aki?.keyId ? base64url.encode(Buffer.from(aki.keyId, 'hex')) : undefined;
}

export async function certificatePublicJwk(der: Uint8Array): Promise<JWK> {
  const { kty, crv, x, y, n, e } = await exportJWK(readCertificate(der, 'the certificate').node.publicKey);
  return Object.fromEntries(Object.entries({ kty, crv, x, y, n, e }).filter(([, v]) => v !== undefined)) as JWK;
}

/**
 * The distinguished name in RFC 4514 syntax as @peculiar/x509 prints it: attributes in the order the
 * certificate encodes them (not reversed as RFC 4514 §2.1 would), e.g. "CN=Example IACA, C=NL".
 */
export function subjectName(der: Uint8Array): string {
  return certificateOf(der).subject;
}

export function issuerName(der: Uint8Array): string {
  return certificateOf(der).issuer;
}

function basicConstraints(c: Certificate): { ca: boolean; pathLength?: number } {
  const bc = c.cert.getExtension(x509.BasicConstraintsExtension);
  return bc ? { ca: bc.ca, pathLength: bc.pathLength } : { ca: false };
}

/** The issuer name matches (RFC 5280 §6.1.3 (a)(4)) and the signature verifies under the issuer's key. */
const signedBy = (subject: Certificate, issuer: Certificate) =>
  subject.node.checkIssued(issuer.node) && subject.node.verify(issuer.node.publicKey);

const selfSigned = (c: Certificate) => signedBy(c, c);

/** What the leaf of a chain is used for: each use has its key usages (src/keys/certPath.ts checks the path). */
export type LeafPurpose = 'mdoc-document-signer' | 'sd-jwt-vc-issuer';

/** ISO/IEC 18013-5 Annex B.1.4: the extended key usage of an mdoc document signer (mdlDS) certificate. */
export const MDOC_DOCUMENT_SIGNER_EKU = '1.0.18013.5.1.2';
/** the arc of ISO/IEC 18013-5's own extended key usages (document signer, reader authentication, ...) */
const ISO_18013_5_ARC = '1.0.18013.5.1.';

/**
 * RFC 5280 §4.2.1.3, §4.2.1.12: the leaf may be used for `purpose`.
 *  - an mdoc document signer needs keyUsage digitalSignature and the mdlDS extended key usage, both
 *    present (ISO/IEC 18013-5 Annex B.1.4 makes them mandatory);
 *  - an SD-JWT VC issuer certificate needs digitalSignature when it has a keyUsage (no profile makes the
 *    extension mandatory for it), and an extendedKeyUsage, when present, may not limit it to ISO/IEC
 *    18013-5 purposes: a document signer signs MSOs, not SD-JWT VCs.
 */
export function checkLeafPurpose(der: Uint8Array, purpose: LeafPurpose): void {
  const { cert } = readCertificate(der, 'the leaf certificate');
  const ku = cert.getExtension(x509.KeyUsagesExtension);
  const eku = cert.getExtension(x509.ExtendedKeyUsageExtension);
  const usages = (eku?.usages ?? []).map(String);
  if (purpose === 'mdoc-document-signer') {
    if (!usages.includes(MDOC_DOCUMENT_SIGNER_EKU))
      throw new X509ChainError(
        'the document signer certificate lacks the mdlDS extended key usage (1.0.18013.5.1.2, ISO/IEC 18013-5 Annex B.1.4)',
      );
    if (!ku || (ku.usages & x509.KeyUsageFlags.digitalSignature) === 0)
      throw new X509ChainError(
        'the document signer certificate lacks keyUsage digitalSignature (ISO/IEC 18013-5 Annex B.1.4)',
      );
    return;
  }
  if (ku && (ku.usages & x509.KeyUsageFlags.digitalSignature) === 0)
    throw new X509ChainError("the issuer certificate's keyUsage lacks digitalSignature (RFC 5280 §4.2.1.3)");
  if (eku && usages.length > 0 && usages.every((u) => u.startsWith(ISO_18013_5_ARC))) {
    throw new X509ChainError("the issuer certificate's extendedKeyUsage limits it to ISO/IEC 18013-5 (mdoc) purposes");
  }
}

/**
 * RFC 5280 §6.1 path validation (src/keys/certPath.ts: pkijs and the rules it leaves open) of `chain`
 * (leaf first; the trust anchor may end it) up to one of `anchors` at `now`, and, given a `purpose`, the
 * leaf's key usages for it. A certificate that cannot be read throws a plain Error, so that callers can
 * tell malformed input from an untrusted chain (X509ChainError).
 */
export async function verifyCertificateChain(
  chain: Uint8Array[],
  anchors: Uint8Array[],
  now: Date = new Date(),
  purpose?: LeafPurpose,
): Promise<void> {
  if (chain.length === 0) throw new X509ChainError('the chain is empty');
  if (anchors.length === 0) throw new X509ChainError('there is no trusted root to verify the chain against');
  chain.forEach((der, i) => readCertificate(der, `certificate ${i + 1} of the chain`));
  anchors.forEach((der, i) => readCertificate(der, `trusted root ${i + 1}`));
  await validateCertificatePath(chain, anchors, now);
  if (purpose) checkLeafPurpose(chain[0], purpose);
}

/**
 * Start-up checks of trust anchors (`verifier.trustAnchors`): each a CA certificate that may sign
 * certificates, with no critical extension this service does not process. Returns warnings for anchors
 * outside their validity (every chain to them fails until they are replaced).
 */
export function checkTrustAnchors(anchors: Uint8Array[], where: string, now: Date = new Date()): string[] {
  const warnings: string[] = [];
  anchors.forEach((der, i) => {
    const label = `${where}: certificate ${i + 1}`;
    const c = readCertificate(der, label);
    if (!basicConstraints(c).ca)
      throw new Error(
        `${label} is not a CA certificate (basicConstraints cA is not true): a trust anchor issues the certificates it vouches for`,
      );
    const ku = c.cert.getExtension(x509.KeyUsagesExtension);
    if (ku && (ku.usages & x509.KeyUsageFlags.keyCertSign) === 0)
      throw new Error(`${label} may not sign certificates (its keyUsage lacks keyCertSign)`);
    checkCertificateExtensions(der, label);
    if (now < c.cert.notBefore || now > c.cert.notAfter)
      warnings.push(
        `${label} (${c.cert.subject}) is outside its validity (${c.cert.notBefore.toISOString()} to ${c.cert.notAfter.toISOString()}): no chain to it is accepted`,
      );
  });
  return warnings;
}

/**
 * Start-up checks of the verifier's own chain and key, as a wallet will check them: the key is the leaf's,
 * P-256; the leaf is valid now and not a CA; no certificate is self-signed (HAIP 1.0: `x5c` carries no
 * trust anchor); and the chain as far as it goes is a valid RFC 5280 path (src/keys/certPath.ts, with its
 * last certificate in the place of the trust anchor it does not carry).
 */
export async function checkVerifierChain(chain: Uint8Array[], key: KeyObject, where: string): Promise<void> {
  if (chain.length === 0) throw new Error(`${where}: no certificate`);
  const certs = chain.map((der, i) => {
    try {
      return readCertificate(der, `certificate ${i + 1}`);
    } catch (err) {
      throw new Error(`${where}: ${(err as Error).message}`, { cause: err });
    }
  });
  const leaf = certs[0];
  const spki = (k: KeyObject) => (k.type === 'public' ? k : createPublicKey(k)).export({ format: 'der', type: 'spki' });
  if (!spki(leaf.node.publicKey).equals(spki(key)))
    throw new Error(`${where}: the first certificate (the leaf) is not the certificate of the configured private key`);
  if (
    leaf.node.publicKey.asymmetricKeyType !== 'ec' ||
    leaf.node.publicKey.asymmetricKeyDetails?.namedCurve !== 'prime256v1'
  ) {
    throw new Error(
      `${where}: the leaf certificate's key must be EC P-256 (ES256), not ${describeKey(leaf.node.publicKey)}`,
    );
  }
  const now = new Date();
  if (now < leaf.cert.notBefore)
    throw new Error(`${where}: the leaf certificate is not valid until ${leaf.cert.notBefore.toISOString()}`);
  if (now > leaf.cert.notAfter)
    throw new Error(`${where}: the leaf certificate has expired (on ${leaf.cert.notAfter.toISOString()})`);
  if (basicConstraints(leaf).ca)
    throw new Error(
      `${where}: the leaf certificate is a CA certificate; the first certificate must be the verifier's own`,
    );
  certs.forEach((c, i) => {
    if (selfSigned(c))
      throw new Error(
        `${where}: certificate ${i + 1} is self-signed (a trust anchor): leave the root out of the chain`,
      );
  });
  try {
    if (chain.length === 1) checkCertificateExtensions(chain[0], 'the leaf certificate');
    else await validateCertificatePath(chain.slice(0, -1), chain.slice(-1), now);
  } catch (err) {
    if (!(err instanceof X509ChainError)) throw err;
    throw new Error(
      `${where}: ${err.message.replace('the trust anchor', `certificate ${chain.length}`)}${/not in order/.test(err.message) ? ' (the chain must be in order, leaf first)' : ''}`,
      { cause: err },
    );
  }
}

export { generateVerifierCertificates, type VerifierCertificates } from './verifierCertificates.js';
