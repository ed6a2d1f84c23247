// @peculiar/x509 resolves its parsers through tsyringe, which needs the Reflect metadata API
import 'reflect-metadata';
import { createHash, createPrivateKey, createPublicKey, webcrypto, X509Certificate as NodeCertificate, type KeyObject } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { base64url, exportJWK, type JWK } from 'jose';

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

/** ISO/IEC 18013-5 Annex B: the extended key usage of an mdoc reader authentication certificate. */
export const MDOC_READER_AUTH_EKU = '1.0.18013.5.1.6';

export class X509ChainError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'X509ChainError';
  }
}

/** PEM certificate(s) → DER, in file order. */
export function readPemCertificates(pem: string, where: string): Uint8Array[] {
  const blocks = [...pem.matchAll(/-----BEGIN CERTIFICATE-----([\s\S]*?)-----END CERTIFICATE-----/g)];
  if (blocks.length === 0) throw new Error(`${where}: no PEM certificate (-----BEGIN CERTIFICATE-----)`);
  return blocks.map((block, i) => {
    const der = new Uint8Array(Buffer.from(block[1].replace(/\s+/g, ''), 'base64'));
    try {
      new NodeCertificate(der);
    } catch {
      throw new Error(`${where}: certificate ${i + 1} is not a readable X.509 certificate`);
    }
    return der;
  });
}

/** A PKCS#8 or SEC1 PEM private key, EC P-256 (the one curve HAIP 1.0 asks verifiers to sign with). */
export function readPemPrivateKey(pem: string, where: string): KeyObject {
  let key: KeyObject;
  try {
    key = createPrivateKey(pem);
  } catch {
    throw new Error(`${where}: not a PEM private key`);
  }
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new Error(`${where}: must be an EC P-256 private key (ES256), not ${key.asymmetricKeyType}${key.asymmetricKeyDetails?.namedCurve ? ` ${key.asymmetricKeyDetails.namedCurve}` : ''}`);
  }
  return key;
}

export function toPem(der: Uint8Array): string {
  const b64 = Buffer.from(der).toString('base64');
  return `-----BEGIN CERTIFICATE-----\n${b64.match(/.{1,64}/g)!.join('\n')}\n-----END CERTIFICATE-----\n`;
}

/** OpenID4VP 1.0 §5.9.3 `x509_hash`: base64url of the SHA-256 of the DER certificate. */
export function x509Hash(der: Uint8Array): string {
  return createHash('sha256').update(der).digest('base64url');
}

const parse = (der: Uint8Array) => new x509.X509Certificate(Uint8Array.from(der));

/** RFC 5280 §4.2.1.6: the dNSName entries of the subjectAltName. */
export function dnsNames(der: Uint8Array): string[] {
  const san = parse(der).getExtension(x509.SubjectAlternativeNameExtension);
  return san ? san.names.items.filter((n) => n.type === 'dns').map((n) => n.value) : [];
}

/** RFC 5280 §4.2.1.2, base64url: what `trusted_authorities` `aki` values name a root by (OpenID4VP 1.0 §6.1.1.1). */
export function subjectKeyIdentifier(der: Uint8Array): string | undefined {
  const ski = parse(der).getExtension(x509.SubjectKeyIdentifierExtension);
  return ski ? base64url.encode(Buffer.from(ski.keyId, 'hex')) : undefined;
}

/** RFC 5280 §4.2.1.1, base64url of the keyIdentifier. */
export function authorityKeyIdentifier(der: Uint8Array): string | undefined {
  const aki = parse(der).getExtension(x509.AuthorityKeyIdentifierExtension);
  return aki?.keyId ? base64url.encode(Buffer.from(aki.keyId, 'hex')) : undefined;
}

export async function certificatePublicJwk(der: Uint8Array): Promise<JWK> {
  const { kty, crv, x, y, n, e } = await exportJWK(new NodeCertificate(der).publicKey);
  return Object.fromEntries(Object.entries({ kty, crv, x, y, n, e }).filter(([, v]) => v !== undefined)) as JWK;
}

/** RFC 4514 distinguished names, as @peculiar/x509 prints them (e.g. "CN=Example IACA, C=NL"). */
export function subjectName(der: Uint8Array): string {
  return parse(der).subject;
}

export function issuerName(der: Uint8Array): string {
  return parse(der).issuer;
}

function basicConstraints(der: Uint8Array): { ca: boolean; pathLength?: number } {
  const bc = parse(der).getExtension(x509.BasicConstraintsExtension);
  return bc ? { ca: bc.ca, pathLength: bc.pathLength } : { ca: false };
}

const sameBytes = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));

/**
 * RFC 5280 §6.1, the parts a wallet or verifier needs: each certificate (leaf first) valid at `now` and
 * signed by the next; the last signed by (or equal to) one of `anchors`; every issuer a CA within its
 * pathLenConstraint (§4.2.1.9); the leaf not a CA.
 */
export async function verifyCertificateChain(chain: Uint8Array[], anchors: Uint8Array[], now: Date = new Date()): Promise<void> {
  if (chain.length === 0) throw new X509ChainError('the chain is empty');
  if (anchors.length === 0) throw new X509ChainError('there is no trusted root');
  let certs: NodeCertificate[];
  let roots: NodeCertificate[];
  try {
    certs = chain.map((der) => new NodeCertificate(der));
    roots = anchors.map((der) => new NodeCertificate(der));
  } catch {
    throw new X509ChainError('a certificate cannot be read');
  }
  const label = (i: number) => (i === 0 ? 'the leaf certificate' : `intermediate certificate ${i}`);
  certs.forEach((cert, i) => {
    if (new Date(cert.validFrom) > now) throw new X509ChainError(`${label(i)} is not valid yet`);
    if (new Date(cert.validTo) < now) throw new X509ChainError(`${label(i)} has expired`);
  });
  if (basicConstraints(chain[0]).ca && chain.length > 1) throw new X509ChainError('the leaf certificate is a CA certificate');
  for (let i = 1; i < certs.length; i++) {
    const issuer = basicConstraints(chain[i]);
    if (!issuer.ca) throw new X509ChainError(`${label(i)} is not a CA but signs ${label(i - 1)}`);
    if (issuer.pathLength !== undefined && issuer.pathLength < i - 1) throw new X509ChainError(`${label(i)} allows ${issuer.pathLength} intermediate certificates below it`);
    if (!certs[i - 1].checkIssued(certs[i]) || !certs[i - 1].verify(certs[i].publicKey)) throw new X509ChainError(`${label(i - 1)} is not signed by ${label(i)}`);
  }
  const last = certs.length - 1;
  // the chain may end with the anchor itself
  if (anchors.some((a) => sameBytes(a, chain[last]))) return;
  const root = roots.findIndex((r, j) => certs[last].checkIssued(r) && certs[last].verify(r.publicKey) && basicConstraints(anchors[j]).ca);
  if (root < 0) throw new X509ChainError('the chain does not end at a trusted root');
  const rootConstraints = basicConstraints(anchors[root]);
  if (rootConstraints.pathLength !== undefined && rootConstraints.pathLength < last) throw new X509ChainError(`the root allows ${rootConstraints.pathLength} intermediate certificates below it`);
  if (new Date(roots[root].validTo) < now || new Date(roots[root].validFrom) > now) throw new X509ChainError('the trusted root is not valid now');
}

/**
 * Start-up checks of the verifier's own chain and key, as a wallet will check them: the key is the leaf's,
 * P-256; the leaf is valid now and not a CA; each certificate is signed by the next; and no certificate is
 * self-signed (HAIP 1.0: `x5c` carries no trust anchor).
 */
export function checkVerifierChain(chain: Uint8Array[], key: KeyObject, where: string): void {
  if (chain.length === 0) throw new Error(`${where}: no certificate`);
  const certs = chain.map((der) => new NodeCertificate(der));
  const leaf = certs[0];
  const publicOfKey = createPublicKey(key).export({ format: 'der', type: 'spki' });
  if (!Buffer.from(leaf.publicKey.export({ format: 'der', type: 'spki' })).equals(publicOfKey)) throw new Error(`${where}: the first certificate is not the certificate of verifier.key`);
  const now = new Date();
  if (new Date(leaf.validFrom) > now) throw new Error(`${where}: the leaf certificate is not valid until ${leaf.validFrom}`);
  if (new Date(leaf.validTo) < now) throw new Error(`${where}: the leaf certificate expired on ${leaf.validTo}`);
  if (basicConstraints(chain[0]).ca) throw new Error(`${where}: the leaf certificate is a CA certificate; the first certificate must be the verifier's own`);
  certs.forEach((cert, i) => {
    if (cert.checkIssued(cert) && cert.verify(cert.publicKey)) throw new Error(`${where}: certificate ${i + 1} is self-signed (a trust anchor): leave the root out of the chain`);
    if (i > 0 && (!certs[i - 1].checkIssued(cert) || !certs[i - 1].verify(cert.publicKey))) throw new Error(`${where}: certificate ${i} is not signed by certificate ${i + 1}: the chain must be in order, leaf first`);
  });
}

export interface VerifierCertificates {
  /** PEM of the generated local CA: what a wallet must be told to trust */
  caCertificate: string;
  /** PEM, leaf first, without the CA */
  chain: string;
  /** PKCS#8 PEM of the leaf's P-256 private key */
  key: string;
}

const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const randomSerial = () => `01${Buffer.from(webcrypto.getRandomValues(new Uint8Array(15))).toString('hex')}`;
const dnEscape = (v: string) => v.replace(/[,+"\\<>;=]/g, (c) => `\\${c}`);

/**
 * A local CA and a verifier leaf for `host` (development: a wallet must be told to trust the CA). The leaf
 * has what a reader certificate needs: the host as subjectAltName (dNSName, or iPAddress for an IP
 * literal, which then cannot serve `x509_san_dns`), digitalSignature, and the mdoc reader authentication
 * extended key usage (ISO/IEC 18013-5 Annex B).
 */
export async function generateVerifierCertificates(host: string, opts: { now?: Date } = {}): Promise<VerifierCertificates> {
  const now = opts.now ?? new Date();
  const notBefore = new Date(now.getTime() - 60_000);
  const caKeys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  const leafKeys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  const ca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: `CN=${dnEscape(host)} local verifier CA (development)`,
    notBefore,
    notAfter: new Date(now.getTime() + 10 * 365 * 86_400_000),
    keys: caKeys,
    signingAlgorithm: EC,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const isIp = /^[\d.]+$/.test(host) || host.includes(':');
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: `CN=${dnEscape(host)}`,
    issuer: ca.subject,
    notBefore,
    notAfter: new Date(now.getTime() + 365 * 86_400_000),
    publicKey: leafKeys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: EC,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([MDOC_READER_AUTH_EKU]),
      new x509.SubjectAlternativeNameExtension([{ type: isIp ? 'ip' : 'dns', value: host.replace(/^\[|\]$/g, '') }]),
      await x509.SubjectKeyIdentifierExtension.create(leafKeys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const pkcs8 = Buffer.from(await webcrypto.subtle.exportKey('pkcs8', leafKeys.privateKey)).toString('base64');
  return {
    caCertificate: toPem(new Uint8Array(ca.rawData)),
    chain: toPem(new Uint8Array(leaf.rawData)),
    key: `-----BEGIN PRIVATE KEY-----\n${pkcs8.match(/.{1,64}/g)!.join('\n')}\n-----END PRIVATE KEY-----\n`,
  };
}
