import { createHash, createPrivateKey, createPublicKey, randomBytes, sign, verify, X509Certificate } from 'node:crypto';
import { CoseKey, type MdocContext } from '@owf/mdoc';
import { certificatePublicJwk, issuerName, subjectName, toPem, verifyCertificateChain } from '../keys/x509.js';

const HASHES: Record<string, string> = { 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' };
/** RFC 9053 §2.1: ECDSA hashes by curve; EdDSA hashes nothing */
const CURVE_HASH: Record<string, string | null> = { 'P-256': 'sha256', 'P-384': 'sha384', 'P-521': 'sha512', Ed25519: null };

const keyOf = (key: CoseKey) => key.jwk as Record<string, unknown> & { crv?: string };

function hashFor(jwk: { crv?: string }): string | null {
  const hash = jwk.crv !== undefined ? CURVE_HASH[jwk.crv] : undefined;
  if (hash === undefined) throw new Error(`unsupported COSE key curve ${String(jwk.crv)}`);
  return hash;
}

/** RDN attribute values of a DN string such as "CN=Example IACA, C=NL". */
function nameFields(dn: string, field: string): string[] {
  return dn
    .split(/,(?=\s*[A-Za-z0-9.]+=)/)
    .map((part) => part.trim().split('='))
    .filter(([name]) => name === field)
    .map(([, ...value]) => value.join('='));
}

/**
 * @owf/mdoc's pluggable cryptography (its `MdocContext`), on node:crypto and our X.509 module: the library
 * does CBOR and COSE structures, this gives it signatures, digests and certificate checks. COSE signatures
 * are raw r||s (RFC 9053 §2.1: IEEE P1363). Device MACs need a reader key agreement this verifier never
 * offers (OpenID4VP uses device signatures), so MAC operations refuse.
 */
export const mdocContext: MdocContext = {
  crypto: {
    random: (length) => new Uint8Array(randomBytes(length)),
    digest: ({ digestAlgorithm, bytes }) => {
      const hash = HASHES[digestAlgorithm];
      if (!hash) throw new Error(`unsupported digest algorithm ${digestAlgorithm}`);
      return new Uint8Array(createHash(hash).update(bytes).digest());
    },
    calculateEphemeralMacKey: () => {
      throw new Error('device MAC authentication is not supported');
    },
  },
  cose: {
    sign1: {
      sign: ({ toBeSigned, key }) => {
        const jwk = keyOf(key);
        return new Uint8Array(sign(hashFor(jwk), toBeSigned, { key: createPrivateKey({ key: jwk as never, format: 'jwk' }), dsaEncoding: 'ieee-p1363' }));
      },
      verify: ({ key, sign1 }) => {
        const jwk = keyOf(key);
        const { d: _d, ...publicJwk } = jwk;
        return verify(hashFor(jwk), sign1.toBeSigned, { key: createPublicKey({ key: publicJwk as never, format: 'jwk' }), dsaEncoding: 'ieee-p1363' }, sign1.signature);
      },
    },
    mac0: {
      sign: () => {
        throw new Error('device MAC authentication is not supported');
      },
      verify: () => {
        throw new Error('device MAC authentication is not supported');
      },
    },
  },
  x509: {
    getIssuerNameField: ({ certificate, field }) => nameFields(issuerName(certificate), field),
    getPublicKey: async ({ certificate }) => CoseKey.fromJwk((await certificatePublicJwk(certificate)) as Record<string, unknown>),
    verifyCertificateChain: ({ trustedCertificates, x5chain, now }) => verifyCertificateChain(x5chain, trustedCertificates, now),
    getCertificateData: ({ certificate }) => {
      const cert = new X509Certificate(certificate);
      return {
        issuerName: issuerName(certificate),
        subjectName: subjectName(certificate),
        serialNumber: cert.serialNumber,
        thumbprint: cert.fingerprint256.replaceAll(':', '').toLowerCase(),
        notBefore: new Date(cert.validFrom),
        notAfter: new Date(cert.validTo),
        pem: toPem(certificate),
      };
    },
  },
};
