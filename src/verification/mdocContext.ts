import { createHash, createPrivateKey, createPublicKey, randomBytes, sign, verify, type JsonWebKey } from 'node:crypto';
import { CoseKey, Curve, DateOnly, Header, KeyType, type MdocContext, type Sign1 } from '@owf/mdoc';
import type { JWK } from 'jose';
import {
  certificateOf,
  certificatePublicJwk,
  issuerName,
  subjectName,
  toPem,
  verifyCertificateChain,
} from '../keys/x509.js';

/**
 * What the verifier (src/verification/mdoc.ts) needs around @owf/mdoc (the dev wallet has its own,
 * src/wallet/mdocCrypto.ts): its pluggable cryptography (`MdocContext`) on node:crypto and our X.509 module, the COSE
 * algorithms we take, and element values as JSON. The library does the CBOR and COSE structures; this
 * gives it signatures, digests and certificate checks.
 */

/** A COSE algorithm or key this service does not take, or a key that does not fit its algorithm. */
export class CoseAlgorithmError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CoseAlgorithmError';
  }
}

/**
 * The COSE signature algorithms (RFC 9053 §2.1, §2.2) accepted for issuerAuth and DeviceSignature, each with
 * the one curve ISO/IEC 18013-5 §9.1.2.4 / §9.1.3.6 pairs it with (ES256 on P-256, ES384 on P-384, ES512 on
 * P-521, EdDSA on Ed25519). Brainpool and Ed448 are not offered by node:crypto's JWK import.
 */
const ALGORITHMS = new Map<number, { name: string; crv: string; hash: string | null }>([
  [-7, { name: 'ES256', crv: 'P-256', hash: 'sha256' }],
  [-35, { name: 'ES384', crv: 'P-384', hash: 'sha384' }],
  [-36, { name: 'ES512', crv: 'P-521', hash: 'sha512' }],
  [-8, { name: 'EdDSA', crv: 'Ed25519', hash: null }],
]);
export const COSE_SIGNATURE_ALGORITHMS = [...ALGORITHMS.keys()];

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
 * A COSE_Key (RFC 9052 §7) as a JWK (RFC 7517): EC2 P-256/384/521 or OKP Ed25519, with `d` when the key
 * has it. @owf/mdoc 0.6's own `CoseKey.jwk` / `CoseKey.fromJwk` misname P-384 and P-521 ("p-384"), so the
 * members are mapped here.
 */
export function jwkOfCoseKey(key: CoseKey, opts: { withPrivate?: boolean } = {}): JWK {
  const crv = typeof key.curve === 'number' ? CURVES.get(key.curve) : undefined;
  const d = opts.withPrivate ? { d: b64u(key.d) } : {};
  if (key.keyType === KeyType.Ec && crv?.startsWith('P-') && key.x && key.y)
    return { kty: 'EC', crv, x: b64u(key.x), y: b64u(key.y), ...d };
  if (key.keyType === KeyType.Okp && crv === 'Ed25519' && key.x) return { kty: 'OKP', crv, x: b64u(key.x), ...d };
  throw new CoseAlgorithmError(
    `the COSE key is not an EC P-256/P-384/P-521 or OKP Ed25519 key (kty ${String(key.keyType)}, crv ${String(key.curve)})`,
  );
}

/** A JWK (EC P-256/384/521 or OKP Ed25519, private or public) as a COSE_Key, optionally naming its COSE algorithm. */
export function coseKeyOfJwk(jwk: JWK, algorithm?: number): CoseKey {
  const curve = jwk.crv !== undefined ? CURVE_IDS.get(jwk.crv) : undefined;
  const kty = jwk.kty === 'EC' ? KeyType.Ec : jwk.kty === 'OKP' ? KeyType.Okp : undefined;
  if (curve === undefined || kty === undefined || (kty === KeyType.Ec) !== jwk.crv?.startsWith('P-')) {
    throw new CoseAlgorithmError(
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
  if (alg === undefined)
    throw new CoseAlgorithmError(`no COSE signature algorithm for a ${String(jwk.kty)} ${String(jwk.crv)} key`);
  return alg;
}

/** The algorithm entry for `alg` if it is accepted and fits the key's curve; throws otherwise. */
function algorithmFor(alg: unknown, jwk: JWK) {
  const entry = typeof alg === 'number' ? ALGORITHMS.get(alg) : undefined;
  if (!entry)
    throw new CoseAlgorithmError(
      `the COSE algorithm ${String(alg)} is not accepted (ES256, ES384, ES512 or EdDSA, in the protected header)`,
    );
  if (entry.crv !== jwk.crv)
    throw new CoseAlgorithmError(`the COSE algorithm ${entry.name} does not fit a ${String(jwk.crv)} key`);
  return entry;
}

/**
 * The algorithm of a COSE_Sign1, from its protected header only: ISO/IEC 18013-5 §9.1.2.4 (issuerAuth) and
 * §9.1.3.6 (DeviceSignature) put `alg` there, where the signature covers it.
 */
export const protectedAlgorithm = (sign1: Sign1): unknown => sign1.protectedHeaders.headers?.get(Header.Algorithm);

const HASHES: Record<string, string> = { 'SHA-256': 'sha256', 'SHA-384': 'sha384', 'SHA-512': 'sha512' };

const macUnsupported = () => {
  throw new Error('mdoc MAC authentication (deviceMac) is not supported: OpenID4VP here uses device signatures');
};

/**
 * @owf/mdoc's `MdocContext` on node:crypto. COSE signatures are raw r||s (RFC 9053 §2.1: IEEE P1363) or
 * Ed25519 (RFC 9053 §2.2). Device MACs (ISO/IEC 18013-5 §9.1.3.5) need an ephemeral reader key agreed in the
 * session, which an OpenID4VP redirect flow has not: the MAC functions throw, and the verifier refuses a
 * deviceMac before the library would call them.
 */
export const mdocContext: MdocContext = {
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
        if (!jwk.d) throw new CoseAlgorithmError('the signing key has no private part');
        const { hash } = algorithmFor(algorithm ?? key.algorithm, jwk);
        const privateKey = createPrivateKey({ key: jwk as JsonWebKey, format: 'jwk' });
        return new Uint8Array(
          sign(hash, toBeSigned, hash ? { key: privateKey, dsaEncoding: 'ieee-p1363' } : privateKey),
        );
      },
      verify: ({ key, sign1 }) => {
        const jwk = jwkOfCoseKey(key);
        const { hash } = algorithmFor(protectedAlgorithm(sign1), jwk);
        let publicKey;
        try {
          publicKey = createPublicKey({ key: jwk as JsonWebKey, format: 'jwk' });
        } catch {
          throw new CoseAlgorithmError(`the ${String(jwk.crv)} public key is not a valid point`);
        }
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
    // ISO/IEC 18013-5 §9.3.1: issuing_country / issuing_jurisdiction are compared with the issuer's C / ST
    getIssuerNameField: ({ certificate, field }) => certificateOf(certificate).issuerName.getField(field),
    getPublicKey: async ({ certificate }) => coseKeyOfJwk(await certificatePublicJwk(certificate)),
    // the issuerAuth x5chain (its only use in @owf/mdoc): a document signer (ISO/IEC 18013-5 Annex B.1.4)
    verifyCertificateChain: ({ trustedCertificates, x5chain, now }) =>
      verifyCertificateChain(x5chain, trustedCertificates, now, 'mdoc-document-signer'),
    getCertificateData: ({ certificate }) => {
      const cert = certificateOf(certificate);
      return {
        issuerName: issuerName(certificate),
        subjectName: subjectName(certificate),
        serialNumber: cert.serialNumber,
        thumbprint: createHash('sha256').update(certificate).digest('hex'),
        notBefore: cert.notBefore,
        notAfter: cert.notAfter,
        pem: toPem(certificate),
      };
    },
  },
};

/**
 * An mdoc element value as JSON (for claims and for listing): full-date (tag 1004) as YYYY-MM-DD, tdate
 * (tag 0) as ISO 8601 without fractions (as ISO/IEC 18013-5 §7.2.1 encodes it), byte strings as base64url,
 * maps as objects, integers beyond 2^53 as decimal strings.
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
