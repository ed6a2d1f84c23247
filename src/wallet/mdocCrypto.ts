import { createHash, createPrivateKey, createPublicKey, randomBytes, sign, verify, type JsonWebKey } from 'node:crypto';
import { CoseKey, Curve, DateOnly, Header, KeyType, type MdocContext } from '@owf/mdoc';
import type { JWK } from 'jose';
import { certificatePublicKey, checkChain, parseCertificate } from './certificates.js';

/**
 * The dev wallet's cryptography for @owf/mdoc (its pluggable `MdocContext`), on node:crypto and the
 * wallet's own certificate checks (./certificates.ts): the library does the CBOR and COSE structures, this
 * gives it random bytes, digests, COSE signatures and X.509. Kept apart from the service's verifier, which
 * has its own.
 */

/**
 * COSE signature algorithms (RFC 9053 §2.1, §2.2) with the curve ISO/IEC 18013-5 §9.1.3.6 pairs each with:
 * ES256 on P-256, ES384 on P-384, ES512 on P-521, EdDSA on Ed25519.
 */
const ALGORITHMS = new Map<number, { crv: string; hash: string | null }>([
  [-7, { crv: 'P-256', hash: 'sha256' }],
  [-35, { crv: 'P-384', hash: 'sha384' }],
  [-36, { crv: 'P-521', hash: 'sha512' }],
  [-8, { crv: 'Ed25519', hash: null }],
]);

/** RFC 9053 §7.1 curve identifiers */
const CURVES = new Map<number, string>([
  [Curve['P-256'], 'P-256'],
  [Curve['P-384'], 'P-384'],
  [Curve['P-521'], 'P-521'],
  [Curve.Ed25519, 'Ed25519'],
]);
const CURVE_IDS = new Map([...CURVES].map(([id, name]) => [name, id]));

const b64u = (bytes: Uint8Array | undefined) => (bytes ? Buffer.from(bytes).toString('base64url') : undefined);
const bytes = (value: unknown) =>
  typeof value === 'string' ? new Uint8Array(Buffer.from(value, 'base64url')) : undefined;

/**
 * A COSE_Key (RFC 9052 §7) as a JWK: EC2 P-256/384/521 or OKP Ed25519, with `d` when asked and present.
 * Mapped member by member: @owf/mdoc 0.6's `CoseKey.jwk` misnames P-384 and P-521.
 */
export function jwkOfCoseKey(key: CoseKey, opts: { withPrivate?: boolean } = {}): JWK {
  const crv = typeof key.curve === 'number' ? CURVES.get(key.curve) : undefined;
  const d = opts.withPrivate && key.d ? { d: b64u(key.d) } : {};
  if (key.keyType === KeyType.Ec && crv?.startsWith('P-') && key.x && key.y)
    return { kty: 'EC', crv, x: b64u(key.x), y: b64u(key.y), ...d };
  if (key.keyType === KeyType.Okp && crv === 'Ed25519' && key.x) return { kty: 'OKP', crv, x: b64u(key.x), ...d };
  throw new Error(
    `the COSE key is not an EC P-256/P-384/P-521 or OKP Ed25519 key (kty ${String(key.keyType)}, crv ${String(key.curve)})`,
  );
}

/** A JWK (EC P-256/384/521 or OKP Ed25519, private or public) as a COSE_Key, optionally naming its COSE algorithm. */
export function coseKeyOfJwk(jwk: JWK, algorithm?: number): CoseKey {
  const curve = jwk.crv !== undefined ? CURVE_IDS.get(jwk.crv) : undefined;
  const kty = jwk.kty === 'EC' ? KeyType.Ec : jwk.kty === 'OKP' ? KeyType.Okp : undefined;
  if (curve === undefined || kty === undefined || (kty === KeyType.Ec) !== jwk.crv?.startsWith('P-')) {
    throw new Error(
      `the key is not an EC P-256/P-384/P-521 or OKP Ed25519 key (kty ${String(jwk.kty)}, crv ${String(jwk.crv)})`,
    );
  }
  const d = bytes(jwk.d);
  return CoseKey.create({
    keyType: kty,
    curve,
    x: bytes(jwk.x),
    ...(kty === KeyType.Ec ? { y: bytes(jwk.y) } : {}),
    ...(d ? { d } : {}),
    ...(algorithm !== undefined ? { algorithm } : {}),
  });
}

/** The COSE algorithm for a key's curve (the ISO/IEC 18013-5 pairing). */
export function coseAlgorithmFor(jwk: JWK): number {
  const alg = [...ALGORITHMS].find(([, a]) => a.crv === jwk.crv)?.[0];
  if (alg === undefined) throw new Error(`no COSE signature algorithm for a ${String(jwk.kty)} ${String(jwk.crv)} key`);
  return alg;
}

function algorithmFor(alg: unknown, jwk: JWK) {
  const entry = typeof alg === 'number' ? ALGORITHMS.get(alg) : undefined;
  if (!entry)
    throw new Error(`the COSE algorithm ${String(alg)} is not one the wallet takes (ES256, ES384, ES512, EdDSA)`);
  if (entry.crv !== jwk.crv) throw new Error(`the COSE algorithm ${String(alg)} does not fit a ${String(jwk.crv)} key`);
  return entry;
}

const HASHES: Record<string, string> = { 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' };

const macUnsupported = () => {
  throw new Error('mdoc MAC authentication (deviceMac) is not supported: over OpenID4VP the dev wallet signs');
};

/**
 * COSE signatures are raw r||s (RFC 9053 §2.1, IEEE P1363) or Ed25519 (§2.2), the algorithm from the
 * protected header. Device MACs need a reader key agreed in a session an OpenID4VP redirect flow has not.
 */
export const walletMdocContext: MdocContext = {
  crypto: {
    random: (length) => new Uint8Array(randomBytes(length)),
    digest: ({ digestAlgorithm, bytes: data }) => {
      const hash = HASHES[digestAlgorithm];
      if (!hash) throw new Error(`unsupported digest algorithm ${String(digestAlgorithm)}`);
      return new Uint8Array(createHash(hash).update(data).digest());
    },
    calculateEphemeralMacKey: macUnsupported,
  },
  cose: {
    sign1: {
      sign: ({ toBeSigned, key, algorithm }) => {
        const jwk = jwkOfCoseKey(key, { withPrivate: true });
        if (!jwk.d) throw new Error('the signing key has no private part');
        const { hash } = algorithmFor(algorithm ?? key.algorithm, jwk);
        const privateKey = createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' });
        return new Uint8Array(
          sign(hash, toBeSigned, hash ? { key: privateKey, dsaEncoding: 'ieee-p1363' } : privateKey),
        );
      },
      verify: ({ key, sign1 }) => {
        const jwk = jwkOfCoseKey(key);
        const { hash } = algorithmFor(sign1.protectedHeaders.headers?.get(Header.Algorithm), jwk);
        const publicKey = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
        return verify(
          hash,
          sign1.toBeSigned,
          hash ? { key: publicKey, dsaEncoding: 'ieee-p1363' } : publicKey,
          sign1.signature,
        );
      },
    },
    mac0: { sign: macUnsupported, verify: macUnsupported },
  },
  x509: {
    getIssuerNameField: ({ certificate, field }) =>
      parseCertificate(certificate, 'the certificate').issuerName.getField(field),
    getPublicKey: ({ certificate }) => {
      const { kty, crv, x, y } = certificatePublicKey(certificate).export({ format: 'jwk' });
      return coseKeyOfJwk({ kty, crv, x, y } as JWK);
    },
    verifyCertificateChain: async ({ trustedCertificates, x5chain, now }) => {
      await checkChain(x5chain, { trust: trustedCertificates, now });
    },
    getCertificateData: ({ certificate }) => {
      const cert = parseCertificate(certificate, 'the certificate');
      return {
        issuerName: cert.issuer,
        subjectName: cert.subject,
        serialNumber: cert.serialNumber,
        thumbprint: createHash('sha256').update(certificate).digest('hex'),
        notBefore: cert.notBefore,
        notAfter: cert.notAfter,
        pem: cert.toString('pem'),
      };
    },
  },
};

/**
 * An mdoc element value as JSON (for listing and for matching a query's `values`): full-date (tag 1004) as
 * YYYY-MM-DD, tdate (tag 0) as ISO 8601 without fractions, byte strings as base64url, maps as objects,
 * integers beyond 2^53 as decimal strings.
 */
export function mdocValueToJson(value: unknown, depth = 0): unknown {
  if (depth > 32) throw new Error('an mdoc element nests deeper than 32 levels');
  if (value instanceof DateOnly) return value.toISOString();
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : `${value.toISOString().split('.')[0]}Z`;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64url');
  if (value instanceof Map)
    return Object.fromEntries([...value].map(([k, v]) => [String(k), mdocValueToJson(v, depth + 1)]));
  if (Array.isArray(value)) return value.map((v) => mdocValueToJson(v, depth + 1));
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  if (typeof value === 'number' && !Number.isFinite(value)) return null;
  if (value === undefined) return null;
  if (value !== null && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, mdocValueToJson(v, depth + 1)]));
  return value;
}
