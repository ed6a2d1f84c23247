// @peculiar/x509 resolves its parsers through tsyringe, which needs the Reflect metadata API
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import * as pkijs from 'pkijs';
import { exportJWK, type JWK } from 'jose';

/**
 * Certificates for path-validation and trust tests, built with @peculiar/x509 (shares no code with src/):
 * CAs, intermediates and leaves with the extensions an attack needs (name constraints, unknown critical
 * extensions, key usages, subjectAltNames).
 */

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const DAY = 86_400_000;
/** an extension no one processes */
export const UNKNOWN_EXTENSION_OID = '1.3.6.1.4.1.55555.1.1';

export interface TestCert {
  der: Uint8Array;
  pem: string;
  /** base64 DER, as an `x5c` member */
  b64: string;
  cert: x509.X509Certificate;
  keys: CryptoKeyPair;
  privateJwk: JWK;
}

export interface CertOptions {
  subject: string;
  /** self-signed when left out */
  issuer?: TestCert;
  ca?: boolean;
  pathLength?: number;
  /** KeyUsageFlags; null: no keyUsage extension; default keyCertSign|cRLSign for a CA, digitalSignature otherwise */
  keyUsage?: number | null;
  eku?: string[];
  san?: Array<{ type: 'dns' | 'url' | 'ip'; value: string }>;
  /** permitted subtrees (RFC 5280 §4.2.1.10), critical */
  permitted?: { dns?: string[]; uri?: string[] };
  extensions?: x509.Extension[];
  notBefore?: Date;
  notAfter?: Date;
}

let serial = 0x1000;

export async function makeCert(opts: CertOptions): Promise<TestCert> {
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  const signer = opts.issuer?.keys ?? keys;
  const keyUsage =
    opts.keyUsage === undefined
      ? opts.ca
        ? x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign
        : x509.KeyUsageFlags.digitalSignature
      : opts.keyUsage;
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(opts.ca ?? false, opts.pathLength, true),
    ...(keyUsage !== null ? [new x509.KeyUsagesExtension(keyUsage, true)] : []),
    ...(opts.eku ? [new x509.ExtendedKeyUsageExtension(opts.eku, true)] : []),
    ...(opts.san ? [new x509.SubjectAlternativeNameExtension(opts.san)] : []),
    ...(opts.permitted ? [nameConstraints(opts.permitted)] : []),
    await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    await x509.AuthorityKeyIdentifierExtension.create(signer.publicKey),
    ...(opts.extensions ?? []),
  ];
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: (serial++).toString(16),
    subject: opts.subject,
    issuer: opts.issuer?.cert.subject ?? opts.subject,
    notBefore: opts.notBefore ?? new Date(Date.now() - 400 * DAY),
    notAfter: opts.notAfter ?? new Date(Date.now() + 400 * DAY),
    publicKey: keys.publicKey,
    signingKey: signer.privateKey,
    signingAlgorithm: EC,
    extensions,
  });
  const der = new Uint8Array(cert.rawData);
  return {
    der,
    pem: cert.toString('pem'),
    b64: Buffer.from(der).toString('base64'),
    cert,
    keys,
    privateJwk: await exportJWK(keys.privateKey),
  };
}

/** A critical extension of an OID no one knows. */
export const unknownCriticalExtension = () =>
  new x509.Extension(UNKNOWN_EXTENSION_OID, true, new Uint8Array([0x05, 0x00]));

/** RFC 5280 §4.2.1.10 nameConstraints with permitted dNSName and URI subtrees, critical (built with pkijs's ASN.1). */
export function nameConstraints(permitted: { dns?: string[]; uri?: string[] }): x509.Extension {
  const subtree = (type: 2 | 6, value: string) =>
    new pkijs.GeneralSubtree({ base: new pkijs.GeneralName({ type, value }) });
  const value = new pkijs.NameConstraints({
    permittedSubtrees: [
      ...(permitted.dns ?? []).map((v) => subtree(2, v)),
      ...(permitted.uri ?? []).map((v) => subtree(6, v)),
    ],
  });
  return new x509.Extension('2.5.29.30', true, new Uint8Array(value.toSchema().toBER()));
}
