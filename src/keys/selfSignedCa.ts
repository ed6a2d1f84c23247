import 'reflect-metadata';
import { webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';

/** ECDSA P-256 with SHA-256: the algorithm of every certificate this service makes. */
export const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
export const DAY = 86_400_000;

/** A positive serial of 16 octets (RFC 5280 §4.1.2.2: positive, at most 20 octets, unpredictable). */
export const randomSerial = () => `01${Buffer.from(webcrypto.getRandomValues(new Uint8Array(15))).toString('hex')}`;

/**
 * A CA certificate under a fresh P-256 key of its own: a CA of path length 0 (it signs leaves only), keyCertSign
 * and cRLSign, its subject key identifier, and `extensions` besides; valid from a minute before `now` (a
 * wallet whose clock is a little behind accepts it) for `days`.
 */
export async function selfSignedCa(
  name: string,
  opts: { now: Date; days: number; extensions?: x509.Extension[] },
): Promise<{ certificate: x509.X509Certificate; keys: CryptoKeyPair }> {
  const keys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  const certificate = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name,
    notBefore: new Date(opts.now.getTime() - 60_000),
    notAfter: new Date(opts.now.getTime() + opts.days * DAY),
    keys,
    signingAlgorithm: EC,
    extensions: [
      new x509.BasicConstraintsExtension(true, 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      ...(opts.extensions ?? []),
    ],
  });
  return { certificate, keys };
}

/** RFC 4514 §2.4: a value with DN special characters escaped, for a name made of a host or a display name. */
export const dnEscape = (v: string) => v.replace(/[,+"\\<>;=]/g, (c) => `\\${c}`);
