import { X509Certificate as NodeCertificate } from 'node:crypto';
import * as pkijs from 'pkijs';

/**
 * RFC 5280 §6.1 certification path validation: pkijs's CertificateChainValidationEngine builds the path from
 * the given certificates to a trust anchor and validates it (validity, name chaining, CA basicConstraints
 * and keyCertSign, certificate policies, name constraints). Signatures are checked with node:crypto, which
 * unlike pkijs's WebCrypto engine knows Ed25519, through the engine's own `findIssuer` hook.
 *
 * pkijs 3.4 leaves some of §6.1 open; these are rules of our own beside it, each over the path it returns:
 *  - every critical extension must be one this module (or pkijs) processes (§6.1.4 (o), §6.1.5 (f));
 *  - pathLenConstraint (§6.1.4 (l), (m)): pkijs parses it but never applies it;
 *  - the leaf is not a CA certificate;
 *  - the trust anchor's own name constraints bind the path (pkijs applies those of intermediates only);
 *  - at most one certificate of the path permits subtrees: pkijs joins the permitted subtrees of several
 *    CAs (any one may match) where §6.1.4 (g) wants their intersection, so such a path is refused;
 *  - signature algorithms: SHA-2 with ECDSA (P-256/384/521), RSA or RSA-PSS, or Ed25519;
 *  - the given chain is the path, in order (leaf first, each certificate followed by its issuer; RFC 7515
 *    §4.1.6 `x5c`): nothing extra, nothing skipped.
 */

export class X509ChainError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'X509ChainError';
  }
}

/** Extensions whose meaning is processed, by pkijs's path validation or by this service's own checks. */
const PROCESSED_EXTENSIONS = new Map([
  ['2.5.29.14', 'subjectKeyIdentifier'],
  ['2.5.29.15', 'keyUsage'],
  ['2.5.29.17', 'subjectAltName'],
  ['2.5.29.19', 'basicConstraints'],
  ['2.5.29.30', 'nameConstraints'],
  ['2.5.29.32', 'certificatePolicies'],
  ['2.5.29.33', 'policyMappings'],
  ['2.5.29.35', 'authorityKeyIdentifier'],
  ['2.5.29.36', 'policyConstraints'],
  ['2.5.29.37', 'extKeyUsage'],
  ['2.5.29.54', 'inhibitAnyPolicy'],
]);

/** RFC 5758 §2: SHA-256, SHA-384, SHA-512 */
const SHA2_OIDS = new Set(['2.16.840.1.101.3.4.2.1', '2.16.840.1.101.3.4.2.2', '2.16.840.1.101.3.4.2.3']);
const GOOD_CURVES = ['prime256v1', 'secp384r1', 'secp521r1'];
/** accepted signatureAlgorithm OIDs (RFC 5758 ECDSA and RFC 4055 RSA with SHA-2, RSA-PSS, RFC 8410 Ed25519) → issuer key types */
const SIGNATURE_ALGORITHMS = new Map<string, string[]>([
  ['1.2.840.10045.4.3.2', ['ec']],
  ['1.2.840.10045.4.3.3', ['ec']],
  ['1.2.840.10045.4.3.4', ['ec']],
  ['1.2.840.113549.1.1.11', ['rsa']],
  ['1.2.840.113549.1.1.12', ['rsa']],
  ['1.2.840.113549.1.1.13', ['rsa']],
  ['1.2.840.113549.1.1.10', ['rsa', 'rsa-pss']],
  ['1.3.101.112', ['ed25519']],
]);
const OID_NAMES: Record<string, string> = {
  '1.2.840.113549.1.1.5': 'RSA with SHA-1',
  '1.2.840.10045.4.1': 'ECDSA with SHA-1',
};

interface Cert {
  der: Uint8Array;
  node: NodeCertificate;
  pki: pkijs.Certificate;
}

function read(der: Uint8Array): Cert {
  const node = new NodeCertificate(der);
  const pki = pkijs.Certificate.fromBER(Uint8Array.from(der));
  return { der, node, pki };
}

const sameDer = (a: Uint8Array, b: Uint8Array) => Buffer.from(a).equals(Buffer.from(b));

const extension = (c: pkijs.Certificate, oid: string) => c.extensions?.find((e) => e.extnID === oid);

/** One certificate's own rules: every critical extension processed, and every known extension well formed. */
export function checkCertificateExtensions(der: Uint8Array, label: string): void {
  checkExtensions(read(der).pki, label);
}

function checkExtensions(c: pkijs.Certificate, label: string): void {
  for (const ext of c.extensions ?? []) {
    if (ext.critical && !PROCESSED_EXTENSIONS.has(ext.extnID)) {
      throw new X509ChainError(
        `${label} has a critical extension this service does not process (${ext.extnID}; RFC 5280 §4.2)`,
      );
    }
    // pkijs keeps a malformed known extension as an empty value with `parsingError`: a malformed name
    // constraint would then constrain nothing
    if ((ext.parsedValue as { parsingError?: string } | undefined)?.parsingError) {
      throw new X509ChainError(
        `${label} has a malformed ${PROCESSED_EXTENSIONS.get(ext.extnID) ?? ext.extnID} extension`,
      );
    }
  }
}

function basicConstraints(c: pkijs.Certificate): { ca: boolean; pathLength?: number } {
  const bc = extension(c, pkijs.id_BasicConstraints)?.parsedValue as pkijs.BasicConstraints | undefined;
  return {
    ca: bc?.cA === true,
    ...(typeof bc?.pathLenConstraint === 'number' ? { pathLength: bc.pathLenConstraint } : {}),
  };
}

/** RFC 4055, RFC 5758, RFC 8410: the issuer's key fits the signature algorithm, whose hash is SHA-2. */
function acceptedSignatureAlgorithm(subject: Cert, issuer: Cert): string | undefined {
  const oid = subject.pki.signatureAlgorithm.algorithmId;
  const keyTypes = SIGNATURE_ALGORITHMS.get(oid);
  const key = issuer.node.publicKey;
  const type = key.asymmetricKeyType ?? '';
  if (keyTypes?.includes(type)) {
    if (type === 'ec' && !GOOD_CURVES.includes(key.asymmetricKeyDetails?.namedCurve ?? ''))
      return `ECDSA on ${key.asymmetricKeyDetails?.namedCurve ?? 'an unknown curve'}`;
    if (oid !== '1.2.840.113549.1.1.10') return undefined;
    const params = subject.pki.signatureAlgorithm.algorithmParams;
    const pss = params ? new pkijs.RSASSAPSSParams({ schema: params }) : undefined;
    // RFC 4055 §3.1: without parameters the hash is SHA-1
    return pss && SHA2_OIDS.has(pss.hashAlgorithm.algorithmId) ? undefined : 'RSA-PSS without SHA-2';
  }
  return OID_NAMES[oid] ?? `signature algorithm ${oid} with a ${type} key`;
}

/**
 * Issuers of `cert` among the engine's certificates, for pkijs's path building: the subject name matches
 * the issuer name (RFC 5280 §6.1.3 (a)(4)) and the signature verifies with node:crypto.
 */
function issuerFinder(nodes: Map<pkijs.Certificate, NodeCertificate>) {
  return async (
    cert: pkijs.Certificate,
    engine: pkijs.CertificateChainValidationEngine,
  ): Promise<pkijs.Certificate[]> => {
    const node = nodes.get(cert);
    if (!node) return [];
    if (cert.subject.isEqual(cert.issuer) && node.verify(node.publicKey)) return [cert];
    return [...engine.trustedCerts, ...engine.certs].filter((candidate) => {
      const issuer = nodes.get(candidate);
      return (
        candidate !== cert &&
        issuer !== undefined &&
        cert.issuer.isEqual(candidate.subject) &&
        node.verify(issuer.publicKey)
      );
    });
  };
}

type Label = (i: number) => string;

/** Why pkijs refused, in words naming the certificate where the given chain tells which. */
function describeFailure(code: number | undefined, message: string, chain: Cert[], now: Date, label: Label): string {
  if (code === 8) {
    const out = chain.findIndex((c) => now < c.pki.notBefore.value || now > c.pki.notAfter.value);
    const which = out === -1 ? undefined : chain[out];
    if (!which) return 'the trust anchor has expired or is not valid yet';
    return now < which.pki.notBefore.value
      ? `${label(out)} is not valid until ${which.pki.notBefore.value.toISOString()}`
      : `${label(out)} has expired (on ${which.pki.notAfter.value.toISOString()})`;
  }
  if (code === 14) {
    for (let i = 1; i < chain.length; i++) {
      if (!basicConstraints(chain[i].pki).ca)
        return `${label(i)} is not a CA certificate (basicConstraints cA is not true) but signs ${label(i - 1)}`;
      if (!maySignCertificates(chain[i].pki))
        return `${label(i)} may not sign certificates (its keyUsage lacks keyCertSign)`;
    }
    return 'the trust anchor is not a CA certificate allowed to sign certificates (basicConstraints, keyUsage keyCertSign)';
  }
  if (code === 41 || code === 42)
    return 'a certificate of the chain is outside the name constraints of a CA above it (RFC 5280 §4.2.1.10)';
  if (code === 98 || code === 99 || /policies/i.test(message))
    return 'the certificate policies of the chain are not valid (RFC 5280 §6.1.4)';
  if (code === 10) return 'the certificates of the chain do not chain by name (RFC 5280 §6.1.3)';
  return 'the chain does not end at a trusted root';
}

function maySignCertificates(c: pkijs.Certificate): boolean {
  const ku = extension(c, pkijs.id_KeyUsage)?.parsedValue as { valueBlock?: { valueHexView?: Uint8Array } } | undefined;
  const bits = ku?.valueBlock?.valueHexView;
  return !ku || (bits !== undefined && bits.length > 0 && (bits[0] & 0x04) !== 0);
}

function nameConstraints(c: pkijs.Certificate): pkijs.NameConstraints | undefined {
  return extension(c, pkijs.id_NameConstraints)?.parsedValue as pkijs.NameConstraints | undefined;
}

/**
 * Validates `chain` (DER, leaf first; the trust anchor may end it) up to one of `anchors` at `now`. Throws
 * X509ChainError with a reason when the path is not valid; certificates must already be readable.
 */
export async function validateCertificatePath(
  chainDer: Uint8Array[],
  anchorDer: Uint8Array[],
  now: Date,
): Promise<void> {
  if (chainDer.length === 0) throw new X509ChainError('the chain is empty');
  if (anchorDer.length === 0) throw new X509ChainError('there is no trusted root to verify the chain against');
  const anchors = anchorDer.map(read);
  // an anchor at the end of the chain is the anchor, not part of the path to validate
  const given =
    chainDer.length > 1 && anchorDer.some((a) => sameDer(a, chainDer[chainDer.length - 1]))
      ? chainDer.slice(0, -1)
      : chainDer;
  const chain = given.map(read);
  const label: Label = (i) =>
    i === 0 ? 'the leaf certificate' : i < chain.length ? `intermediate certificate ${i}` : 'the trust anchor';

  // the certificates' own rules first, so that their reasons are named
  chain.forEach((c, i) => checkExtensions(c.pki, label(i)));
  if (basicConstraints(chain[0].pki).ca)
    throw new X509ChainError('the leaf certificate is a CA certificate (basicConstraints cA=true)');

  const nodes = new Map<pkijs.Certificate, NodeCertificate>([...chain, ...anchors].map((c) => [c.pki, c.node]));
  const validate = async (constraints?: pkijs.NameConstraints) => {
    // pkijs takes the leaf as the last of `certs`
    const engine = new pkijs.CertificateChainValidationEngine({
      trustedCerts: anchors.map((a) => a.pki),
      certs: chain.map((c) => c.pki).reverse(),
      checkDate: now,
      findIssuer: issuerFinder(nodes),
    });
    return engine.verify({
      ...(constraints?.permittedSubtrees ? { initialPermittedSubtreesSet: constraints.permittedSubtrees } : {}),
      ...(constraints?.excludedSubtrees ? { initialExcludedSubtreesSet: constraints.excludedSubtrees } : {}),
    });
  };
  let result = await validate();
  const anchorOf = (r: typeof result) => r.certificatePath?.[r.certificatePath.length - 1];
  // §6.1.1 (d): the anchor's own name constraints, when it has them, bind everything below it
  const anchorConstraints = result.result && anchorOf(result) ? nameConstraints(anchorOf(result)!) : undefined;
  if (anchorConstraints) result = await validate(anchorConstraints);
  if (!result.result || !result.certificatePath)
    throw new X509ChainError(describeFailure(result.resultCode, result.resultMessage ?? '', chain, now, label));

  const path = result.certificatePath;
  const anchor = anchors.find((a) => a.pki === path[path.length - 1]);
  // pkijs found a path; it must be the chain as given, in order, ending at the anchor
  if (!anchor || path.length !== chain.length + 1 || chain.some((c, i) => path[i] !== c.pki)) {
    throw new X509ChainError(
      'the chain is not in order: each certificate must be followed by the one that issued it, leaf first',
    );
  }
  const certs = [...chain, anchor];
  for (let i = 1; i < certs.length; i++) {
    // the issuer at index i has i - 1 intermediates below it
    const { pathLength } = basicConstraints(certs[i].pki);
    if (pathLength !== undefined && i - 1 > pathLength) {
      throw new X509ChainError(
        `${label(i)} allows ${pathLength} intermediate certificate(s) below it (pathLenConstraint); the chain has ${i - 1}`,
      );
    }
    const bad = acceptedSignatureAlgorithm(certs[i - 1], certs[i]);
    if (bad) throw new X509ChainError(`${label(i - 1)} is signed with an algorithm that is not accepted (${bad})`);
  }
  if (certs.filter((c) => nameConstraints(c.pki)?.permittedSubtrees?.length).length > 1) {
    throw new X509ChainError(
      'more than one certificate of the chain permits name subtrees; such nested name constraints are not accepted (RFC 5280 §4.2.1.10)',
    );
  }
}
