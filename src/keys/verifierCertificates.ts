// @peculiar/x509 resolves its parsers through tsyringe, which needs the Reflect metadata API
import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import { isIP } from 'node:net';
import * as x509 from '@peculiar/x509';
// x509.ts sets @peculiar/x509's crypto provider (and loads reflect-metadata) on import
import { pemBody, toPem } from './x509.js';
import { DAY, EC, dnEscape, randomSerial, selfSignedCa } from './selfSignedCa.js';

/** ISO/IEC 18013-5 Annex B: the extended key usage of an mdoc reader authentication certificate. */
const MDOC_READER_AUTH_EKU = '1.0.18013.5.1.6';

export interface VerifierCertificates {
  /** PEM of the generated local CA (self-signed): what a wallet must be told to trust */
  caCertificate: string;
  /** PEM, leaf first, without the CA */
  chain: string;
  /** PKCS#8 PEM of the leaf's P-256 private key */
  key: string;
}

/**
 * A local CA and a verifier leaf for `host` (development: a wallet must be told to trust the CA). The leaf
 * carries what an ISO/IEC 18013-5 Annex B reader certificate needs: the host as subjectAltName,
 * digitalSignature, and the mdoc reader authentication extended key usage.
 *
 * For an IP literal (e.g. "127.0.0.1", "::1" or "[::1]") the subjectAltName is an iPAddress, as
 * RFC 5280 §4.2.1.6 wants, and there is no dNSName: such a leaf serves `x509_hash` but not `x509_san_dns`.
 */
export async function generateVerifierCertificates(
  host: string,
  opts: { now?: Date } = {},
): Promise<VerifierCertificates> {
  const name = host.replace(/^\[(.*)\]$/, '$1');
  const now = opts.now ?? new Date();
  // a minute in the past, so a wallet whose clock is a little behind accepts it
  const notBefore = new Date(now.getTime() - 60_000);
  const { certificate: ca, keys: caKeys } = await selfSignedCa(`CN=${dnEscape(name)} local verifier CA (development)`, {
    now,
    days: 10 * 365,
  });
  const leafKeys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  const leaf = await x509.X509CertificateGenerator.create({
    serialNumber: randomSerial(),
    subject: `CN=${dnEscape(name)}`,
    issuer: ca.subject,
    notBefore,
    notAfter: new Date(now.getTime() + 365 * DAY),
    publicKey: leafKeys.publicKey,
    signingKey: caKeys.privateKey,
    signingAlgorithm: EC,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      // critical, as ISO/IEC 18013-5 Annex B has it for reader authentication certificates
      new x509.ExtendedKeyUsageExtension([MDOC_READER_AUTH_EKU], true),
      new x509.SubjectAlternativeNameExtension([{ type: isIP(name) ? 'ip' : 'dns', value: name }]),
      await x509.SubjectKeyIdentifierExtension.create(leafKeys.publicKey),
      // the same SHA-1 key identifier as the CA's SKI (RFC 5280 §4.2.1.1)
      await x509.AuthorityKeyIdentifierExtension.create(caKeys.publicKey),
    ],
  });
  const pkcs8 = new Uint8Array(await webcrypto.subtle.exportKey('pkcs8', leafKeys.privateKey));
  return {
    caCertificate: toPem(new Uint8Array(ca.rawData)),
    chain: toPem(new Uint8Array(leaf.rawData)),
    key: `-----BEGIN PRIVATE KEY-----\n${pemBody(pkcs8)}\n-----END PRIVATE KEY-----\n`,
  };
}
