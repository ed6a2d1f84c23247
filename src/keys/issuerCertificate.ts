// @peculiar/x509 resolves its parsers through tsyringe, which needs the Reflect metadata API
import 'reflect-metadata';
import { createPublicKey, webcrypto, X509Certificate as NodeCertificate, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import * as x509 from '@peculiar/x509';
import { calculateJwkThumbprint, exportJWK, type JWK } from 'jose';
// x509.ts sets @peculiar/x509's crypto provider (and loads reflect-metadata) on import
import {
  checkVerifierChain,
  dnsNames,
  MDOC_DOCUMENT_SIGNER_EKU,
  readPemCertificates,
  readPemPrivateKey,
  toPem,
  uriNames,
} from './x509.js';
import { hostNameConstraints } from './nameConstraints.js';
import { DAY, EC, dnEscape, randomSerial, selfSignedCa } from './selfSignedCa.js';

/**
 * The credential issuer's X.509 certificate (OpenID4VC HAIP 1.0 §6.1.1, SD-JWT VC §3.5): the chain goes
 * into the `x5c` header of every SD-JWT VC and Status List Token, leaf first, without the trust anchor.
 * The leaf certifies the key that signs: an operator's `issuer.key`, or with generated keys each key of
 * the credential key set, certified by a local issuer CA and kept in the set as the JWK's `x5c` member
 * (RFC 7517 §4.7), so that a rotated key carries its own leaf.
 */

/** A generated local issuer CA: PEM certificate and PKCS#8 PEM private key. */
export interface IssuerCa {
  certificate: string;
  key: string;
}

/** a generated leaf lasts this long, and is remade at start-up when it would end before a credential signed now */
const LEAF_DAYS = 3 * 365;
const pemBody = (der: Uint8Array) =>
  Buffer.from(der)
    .toString('base64')
    .match(/.{1,64}/g)
    ?.join('\n') ?? '';
const hostOf = (iss: string) => new URL(iss).hostname.replace(/^\[(.*)\]$/, '$1');

export function isIssuerCa(v: unknown): v is IssuerCa {
  const c = v as Partial<IssuerCa> | undefined;
  return typeof c?.certificate === 'string' && typeof c.key === 'string';
}

/**
 * The country of a generated local CA and its document signers: ISO/IEC 18013-5 Annex B.1.2 requires a
 * countryName in an IACA (and the document signer's must equal it); a development CA has no country, so it
 * takes ZZ, an ISO 3166-1 user-assigned code.
 */
const LOCAL_COUNTRY = 'ZZ';

/**
 * A local issuer CA for development (a wallet must be told to trust its certificate). It is also the IACA of
 * our mdocs (ISO/IEC 18013-5 Annex B.1.2: CA, keyCertSign, countryName). Developers install it on phones, so
 * its name constraints hold it to `host`, the base URL's (src/keys/nameConstraints.ts).
 */
export async function generateIssuerCa(host: string, now = new Date()): Promise<IssuerCa> {
  const { certificate: ca, keys } = await selfSignedCa(
    `C=${LOCAL_COUNTRY}, CN=${dnEscape(host)} local credential issuer CA (development)`,
    { now, days: 10 * 365, extensions: [hostNameConstraints(host)] },
  );
  const pkcs8 = new Uint8Array(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return {
    certificate: toPem(new Uint8Array(ca.rawData)),
    key: `-----BEGIN PRIVATE KEY-----\n${pemBody(pkcs8)}\n-----END PRIVATE KEY-----\n`,
  };
}

/**
 * A leaf for a credential key, signed by the local CA: each issuer identifier as a subjectAltName URI and
 * their host as dNSName (an iPAddress for an IP literal, RFC 5280 §4.2.1.6), so that a wallet matches
 * `iss` either way (SD-JWT VC §3.5). Returns `x5c`: base64 DER, leaf first, without the CA.
 */
export async function certifyCredentialKey(
  ca: IssuerCa,
  jwk: JWK,
  issuers: string[],
  now = new Date(),
): Promise<string[]> {
  const caCert = new x509.X509Certificate(ca.certificate);
  const caKey = await webcrypto.subtle.importKey(
    'pkcs8',
    Buffer.from(ca.key.replace(/-----[^-]+-----|\s+/g, ''), 'base64'),
    EC,
    false,
    ['sign'],
  );
  const publicKey = await webcrypto.subtle.importKey(
    'jwk',
    { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y },
    EC,
    true,
    ['verify'],
  );
  const hosts = [...new Set(issuers.map(hostOf))];
  const notAfter = new Date(Math.min(now.getTime() + LEAF_DAYS * DAY, caCert.notAfter.getTime()));
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: `CN=${dnEscape(hosts[0])} credential issuer`,
    issuer: caCert.subject,
    notBefore: new Date(now.getTime() - 60_000),
    notAfter,
    publicKey,
    signingKey: caKey,
    signingAlgorithm: EC,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.SubjectAlternativeNameExtension([
        ...issuers.map((value) => ({ type: 'url' as const, value })),
        ...hosts.map((value) => ({ type: isIP(value) ? ('ip' as const) : ('dns' as const), value })),
      ]),
      await x509.SubjectKeyIdentifierExtension.create(publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  });
  return [Buffer.from(leaf.rawData).toString('base64')];
}

/**
 * A document signer under the local CA (ISO/IEC 18013-5 Annex B.1.4): its own P-256 key, keyUsage
 * digitalSignature and the mdlDS extended key usage (both critical), the CA's countryName; it lasts as the
 * credential leaves do, or longer when an mdoc signed now lasts longer (`lastsMs`), within the CA's validity. PEM certificate and PKCS#8 PEM key, as the CA is kept.
 */
export async function generateDocumentSigner(
  ca: IssuerCa,
  host: string,
  now = new Date(),
  lastsMs = 0,
): Promise<IssuerCa> {
  const caCert = new x509.X509Certificate(ca.certificate);
  const caKey = await webcrypto.subtle.importKey(
    'pkcs8',
    Buffer.from(ca.key.replace(/-----[^-]+-----|\s+/g, ''), 'base64'),
    EC,
    false,
    ['sign'],
  );
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  const country = caCert.subjectName.getField('C')[0] ?? LOCAL_COUNTRY;
  const signer = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: `C=${dnEscape(country)}, CN=${dnEscape(host)} mdoc document signer`,
    issuer: caCert.subject,
    notBefore: new Date(now.getTime() - 60_000),
    // verifiers check the signer's certificate when the mdoc is presented: it lasts as long as an mdoc signed now
    notAfter: new Date(Math.min(now.getTime() + Math.max(LEAF_DAYS * DAY, lastsMs + DAY), caCert.notAfter.getTime())),
    publicKey: keys.publicKey,
    signingKey: caKey,
    signingAlgorithm: EC,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([MDOC_DOCUMENT_SIGNER_EKU], true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(caCert),
    ],
  });
  const pkcs8 = new Uint8Array(await webcrypto.subtle.exportKey('pkcs8', keys.privateKey));
  return {
    certificate: toPem(new Uint8Array(signer.rawData)),
    key: `-----BEGIN PRIVATE KEY-----\n${pemBody(pkcs8)}\n-----END PRIVATE KEY-----\n`,
  };
}

/** SD-JWT VC §3.5: the leaf names `iss` as a subjectAltName URI, or its host as a dNSName (iPAddress for an IP literal). */
export function leafNamesIssuer(leaf: Uint8Array, iss: string): boolean {
  const host = hostOf(iss);
  if (uriNames(leaf).includes(iss) || dnsNames(leaf).includes(host)) return true;
  if (!isIP(host)) return false;
  const san = new x509.X509Certificate(Uint8Array.from(leaf)).getExtension(x509.SubjectAlternativeNameExtension);
  return !!san?.names.items.some((n) => n.type === 'ip' && n.value === host);
}

/**
 * Whether a generated leaf still serves: it certifies `jwk`, the local CA signed it, it names every issuer
 * identifier as a URI, and it lasts past `until` (the end of a credential signed now).
 */
export function generatedLeafFits(x5c: unknown, jwk: JWK, ca: IssuerCa, issuers: string[], until: Date): boolean {
  if (!Array.isArray(x5c) || x5c.length !== 1 || typeof x5c[0] !== 'string') return false;
  try {
    const der = new Uint8Array(Buffer.from(x5c[0], 'base64'));
    const leaf = new NodeCertificate(der);
    const caCert = new NodeCertificate(ca.certificate);
    const spki = (k: KeyObject) => k.export({ format: 'der', type: 'spki' });
    const jwkKey = createPublicKey({ key: { kty: jwk.kty, crv: jwk.crv, x: jwk.x, y: jwk.y } as never, format: 'jwk' });
    if (!spki(leaf.publicKey).equals(spki(jwkKey))) return false;
    if (!leaf.checkIssued(caCert) || !leaf.verify(caCert.publicKey)) return false;
    if (new Date(leaf.validTo) < until) return false;
    const uris = uriNames(der);
    return issuers.every((iss) => uris.includes(iss));
  } catch {
    return false;
  }
}

/** An operator's certified signing key: the private JWK (with its RFC 7638 thumbprint as kid, and `x5c`). */
export interface OperatorIssuerKey {
  jwk: JWK;
  /** the leaf's notAfter */
  expires: Date;
}

/**
 * Start-up checks of the operator's `issuer.certificateChain` and `issuer.key`, as a wallet will check the
 * `x5c` it receives: the key is the leaf's and P-256; the leaf is valid now, not a CA, and names every
 * issuer identifier we sign as (SD-JWT VC §3.5); the chain is in order and holds no trust anchor (HAIP 1.0).
 */
export async function checkIssuerFiles(
  files: { chain: string; key: string },
  text: { chain: string; key: string },
  issuers: string[],
): Promise<OperatorIssuerKey> {
  const where = `issuer.certificateChain (${files.chain})`;
  const chain = readPemCertificates(text.chain, where);
  const key = readPemPrivateKey(text.key, `issuer.key (${files.key})`);
  const leaf = new NodeCertificate(chain[0]);
  const spki = (k: KeyObject) => (k.type === 'public' ? k : createPublicKey(k)).export({ format: 'der', type: 'spki' });
  if (!spki(leaf.publicKey).equals(spki(key))) {
    throw new Error(
      `issuer.key (${files.key}) is not the key of the first certificate (the leaf) of ${where}: give the leaf's private key, and the leaf first`,
    );
  }
  if (leaf.ca)
    throw new Error(
      `${where}: the leaf certificate is a CA certificate; the first certificate must be the credential issuer's own`,
    );
  // order, validity, P-256 and no self-signed certificate: the checks the verifier's own chain gets
  await checkVerifierChain(chain, key, where);
  for (const iss of issuers) {
    if (!leafNamesIssuer(chain[0], iss)) {
      const names = [...uriNames(chain[0]).map((u) => `URI ${u}`), ...dnsNames(chain[0]).map((d) => `DNS ${d}`)];
      throw new Error(
        `${where}: the leaf certificate must name the credential issuer ${iss} as a subjectAltName URI, or its host ${hostOf(iss)} as a dNSName (SD-JWT VC §3.5); it names ${names.length ? names.join(', ') : 'neither'}`,
      );
    }
  }
  const { kty, crv, x, y, d } = await exportJWK(key);
  const pub = { kty, crv, x, y } as JWK;
  const jwk: JWK = {
    ...pub,
    d,
    kid: await calculateJwkThumbprint(pub),
    alg: 'ES256',
    x5c: chain.map((der) => Buffer.from(der).toString('base64')),
  };
  return { jwk, expires: new Date(leaf.validTo) };
}

/** The public JWK of an earlier leaf (`issuer.previousCertificates`), kept published for what it signed. */
export async function previousCertificateKey(pem: string, where: string): Promise<JWK> {
  const [leaf] = readPemCertificates(pem, where);
  const { kty, crv, x, y } = await exportJWK(new NodeCertificate(leaf).publicKey);
  if (kty !== 'EC' || crv !== 'P-256') throw new Error(`${where}: the certificate's key must be EC P-256 (ES256)`);
  const pub = { kty, crv, x, y } as JWK;
  return { ...pub, kid: await calculateJwkThumbprint(pub), alg: 'ES256' };
}

export { documentSignerFits, documentSignerKey, type DocumentSignerKey } from './documentSignerKey.js';
