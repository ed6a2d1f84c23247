// @peculiar/x509 resolves its parsers through tsyringe, which needs the Reflect metadata API
import 'reflect-metadata';
import { createHash, webcrypto } from 'node:crypto';
import * as x509 from '@peculiar/x509';
import { DataItem, DeviceResponse, Document, MDoc, parse, Verifier } from '@auth0/mdl';
// @auth0/mdl exports no CBOR codec; its own (cbor-x with its DataItem, tdate and full-date tags) is in lib/cbor
import { cborDecode, cborEncode } from '@auth0/mdl/lib/cbor/index.js';
import { exportJWK, type JWK } from 'jose';
import { makeCert, type TestCert } from './pki.js';

/**
 * An mdoc issuer and holder for tests that share no code with src/: @auth0/mdl builds and signs the
 * IssuerSigned and the DeviceResponse (its own CBOR and COSE, cose-kit), @peculiar/x509 makes the IACA root
 * and the document signer certificate (ISO/IEC 18013-5 Annex B profile), and the OpenID4VP 1.0 §B.2.6.1
 * SessionTranscript is computed here from the spec text with @auth0/mdl's CBOR encoder.
 */

x509.cryptoProvider.set(webcrypto as unknown as Crypto);

const EC = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const DAY = 86_400_000;
/** ISO/IEC 18013-5 Annex B.1.4: the extended key usage of a document signer (mdlDS) certificate */
const MDL_DS_EKU = '1.0.18013.5.1.2';

/** A document signer of the IACA: its chain (PEM, the signer first, without the IACA) and private key. */
export interface DocumentSigner {
  chain: string[];
  privateJwk: JWK;
  /** the chain as certificates (empty for the standard signer) */
  certs: TestCert[];
}

/** How a further document signer differs from the ISO profile (attack tests, issue 31 §2, §3). */
export interface DocumentSignerOptions {
  /** extended key usages; null: none (default: mdlDS) */
  eku?: string[] | null;
  san?: Array<{ type: 'dns' | 'url'; value: string }>;
  extensions?: x509.Extension[];
  /** a CA between the IACA and the signer (the IACA needs pathLength 1) */
  intermediate?: { extensions?: x509.Extension[]; permitted?: { dns?: string[]; uri?: string[] } };
}

export interface TestMdocIssuer {
  iacaPem: string;
  iacaDer: Uint8Array;
  /** the IACA as an issuer of further test certificates */
  iaca: TestCert;
  /** the standard document signer (mdlDS, directly under the IACA) */
  signer: DocumentSigner;
  issue(input: {
    doctype: string;
    namespace: string;
    claims: Record<string, unknown>;
    deviceKey: JWK;
    validFrom?: Date;
    validUntil?: Date;
    signer?: DocumentSigner;
  }): Promise<{ issuerSigned: string }>;
  /** another document signer under this IACA */
  documentSigner(opts: DocumentSignerOptions): Promise<DocumentSigner>;
}

const serial = () => `01${Buffer.from(webcrypto.getRandomValues(new Uint8Array(15))).toString('hex')}`;

/**
 * An IACA root (self-signed, CA, keyCertSign, countryName present as ISO 18013-5 Annex B.1.2 requires) and a
 * document signer below it (digitalSignature, mdlDS extended key usage); `issue` signs an IssuerSigned with the
 * document signer, carrying it in the x5chain, for the given device key.
 */
export async function createTestMdocIssuer(opts: { name?: string; pathLength?: number } = {}): Promise<TestMdocIssuer> {
  const name = opts.name ?? 'Test IACA';
  const now = Date.now();
  const iacaKeys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  const dsKeys = (await webcrypto.subtle.generateKey(EC, true, ['sign', 'verify'])) as CryptoKeyPair;
  const iaca = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: serial(),
    name: `C=NL, CN=${name}`,
    notBefore: new Date(now - 400 * DAY),
    notAfter: new Date(now + 3650 * DAY),
    keys: iacaKeys,
    signingAlgorithm: EC,
    extensions: [
      new x509.BasicConstraintsExtension(true, opts.pathLength ?? 0, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(iacaKeys.publicKey),
    ],
  });
  const ds = await x509.X509CertificateGenerator.create({
    serialNumber: serial(),
    subject: `C=NL, CN=${name} document signer`,
    issuer: iaca.subject,
    // long before "now", so that MSOs signed in the past (expired ones) fall inside its validity
    notBefore: new Date(now - 365 * DAY),
    notAfter: new Date(now + 365 * DAY),
    publicKey: dsKeys.publicKey,
    signingKey: iacaKeys.privateKey,
    signingAlgorithm: EC,
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension([MDL_DS_EKU], true),
      await x509.SubjectKeyIdentifierExtension.create(dsKeys.publicKey),
      await x509.AuthorityKeyIdentifierExtension.create(iacaKeys.publicKey),
    ],
  });
  const dsPrivateJwk = await exportJWK(dsKeys.privateKey);
  const iacaDer = new Uint8Array(iaca.rawData);
  const standard: DocumentSigner = { chain: [ds.toString('pem')], privateJwk: dsPrivateJwk, certs: [] };
  // the IACA as @peculiar/x509 and test/helpers/pki.ts know an issuer
  const iacaIssuer: TestCert = {
    der: iacaDer,
    pem: iaca.toString('pem'),
    b64: Buffer.from(iacaDer).toString('base64'),
    cert: iaca,
    keys: iacaKeys,
    privateJwk: await exportJWK(iacaKeys.privateKey),
  };

  return {
    iacaPem: iaca.toString('pem'),
    iacaDer,
    iaca: iacaIssuer,
    signer: standard,
    async documentSigner(o) {
      const above = o.intermediate
        ? await makeCert({
            subject: `C=NL, CN=${name} intermediate`,
            issuer: iacaIssuer,
            ca: true,
            pathLength: 0,
            extensions: o.intermediate.extensions,
            permitted: o.intermediate.permitted,
          })
        : undefined;
      const signer = await makeCert({
        subject: `C=NL, CN=${name} document signer`,
        issuer: above ?? iacaIssuer,
        ...(o.eku !== null ? { eku: o.eku ?? [MDL_DS_EKU] } : {}),
        san: o.san,
        extensions: o.extensions,
        notBefore: new Date(now - 365 * DAY),
      });
      const certs = [signer, ...(above ? [above] : [])];
      return { chain: certs.map((c) => c.pem), privateJwk: signer.privateJwk, certs };
    },
    issue: ({ signer = standard, ...input }) => issueMdoc(signer, input),
  };
}

/**
 * An IssuerSigned (base64url CBOR, OpenID4VCI 1.0 Appendix A.2.4) signed by `signer` with @auth0/mdl, for
 * `deviceKey`: what TestMdocIssuer.issue makes, for a document signer kept elsewhere (the benchmark's).
 */
export async function issueMdoc(
  signer: DocumentSigner,
  input: {
    doctype: string;
    namespace: string;
    claims: Record<string, unknown>;
    deviceKey: JWK;
    validFrom?: Date;
    validUntil?: Date;
  },
): Promise<{ issuerSigned: string }> {
  const { doctype, namespace, claims, deviceKey, validFrom, validUntil } = input;
  const signedAt = new Date(Math.min(Date.now(), validFrom?.getTime() ?? Infinity));
  const document = await new Document(doctype)
    .addIssuerNameSpace(namespace, claims)
    .useDigestAlgorithm('SHA-256')
    .addValidityInfo({
      signed: signedAt,
      validFrom: validFrom ?? signedAt,
      validUntil: validUntil ?? new Date(signedAt.getTime() + 365 * DAY),
    })
    .addDeviceKeyInfo({ deviceKey: publicOnly(deviceKey) })
    .sign({
      issuerPrivateKey: signer.privateJwk,
      issuerCertificate: signer.chain.length === 1 ? signer.chain[0] : signer.chain,
      alg: 'ES256',
    });
  // OpenID4VCI 1.0 Appendix A.2.4: the credential is the base64url CBOR IssuerSigned (the document's issuerSigned map)
  const issuerSigned = new MDoc([document]).encode();
  const decoded = cborDecode(issuerSigned) as Map<string, unknown>;
  const [doc] = decoded.get('documents') as Array<Map<string, unknown>>;
  return { issuerSigned: Buffer.from(cborEncode(doc.get('issuerSigned'))).toString('base64url') };
}

const publicOnly = ({ kty, crv, x, y }: JWK): JWK => (y === undefined ? { kty, crv, x } : { kty, crv, x, y });

/**
 * OpenID4VP 1.0 §B.2.6.1 (redirects): SessionTranscript = [null, null, ["OpenID4VPHandover",
 * sha-256(cbor([client_id, nonce, jwkThumbprint or null, response_uri]))]], as SessionTranscriptBytes
 * (#6.24(bstr .cbor SessionTranscript)), the form @auth0/mdl takes.
 */
export function oid4vpSessionTranscriptBytes(input: {
  clientId: string;
  nonce: string;
  responseUri: string;
  jwkThumbprint?: Uint8Array;
}): Uint8Array {
  const info = cborEncode([
    input.clientId,
    input.nonce,
    input.jwkThumbprint ? Buffer.from(input.jwkThumbprint) : null,
    input.responseUri,
  ]);
  const handover = ['OpenID4VPHandover', createHash('sha256').update(info).digest()];
  return new Uint8Array(cborEncode(DataItem.fromData([null, null, handover])));
}

/**
 * OpenID4VP 1.0 Appendix A.5 (the Digital Credentials API): SessionTranscript = [null, null,
 * ["OpenID4VPDCAPIHandover", sha-256(cbor([origin, nonce, jwkThumbprint or null]))]], as SessionTranscriptBytes.
 */
export function oid4vpDcApiSessionTranscriptBytes(input: {
  origin: string;
  nonce: string;
  jwkThumbprint?: Uint8Array;
}): Uint8Array {
  const info = cborEncode([input.origin, input.nonce, input.jwkThumbprint ? Buffer.from(input.jwkThumbprint) : null]);
  const handover = ['OpenID4VPDCAPIHandover', createHash('sha256').update(info).digest()];
  return new Uint8Array(cborEncode(DataItem.fromData([null, null, handover])));
}

/**
 * An independent holder: @auth0/mdl's DeviceResponse builder discloses `elements` of `namespace` from the
 * IssuerSigned and signs DeviceAuthentication (ES256) over the OpenID4VP 1.0 SessionTranscript. Returns
 * the vp_token value: base64url of the CBOR DeviceResponse (§B.2.5).
 */
export async function presentWithAuth0(input: {
  issuerSigned: string;
  doctype: string;
  namespace: string;
  elements: string[];
  deviceKey: JWK;
  clientId: string;
  nonce: string;
  responseUri: string;
  jwkThumbprint?: Uint8Array;
  /** another SessionTranscript than §B.2.6.1's (the DC API's, oid4vpDcApiSessionTranscriptBytes) */
  sessionTranscriptBytes?: Uint8Array;
}): Promise<string> {
  // @auth0/mdl reads documents from an MDoc (DeviceResponse-shaped) encoding: wrap the IssuerSigned in one
  const issuerSigned = cborDecode(Buffer.from(input.issuerSigned, 'base64url'));
  const mdoc = parse(
    cborEncode(
      new Map<string, unknown>([
        ['version', '1.0'],
        [
          'documents',
          [
            new Map<string, unknown>([
              ['docType', input.doctype],
              ['issuerSigned', issuerSigned],
            ]),
          ],
        ],
        ['status', 0],
      ]),
    ),
  );
  const presentationDefinition = {
    id: 'mdoc-test',
    input_descriptors: [
      {
        id: input.doctype,
        format: { mso_mdoc: { alg: ['ES256'] } },
        constraints: {
          limit_disclosure: 'required' as const,
          fields: input.elements.map((element) => ({
            path: [`$['${input.namespace}']['${element}']`],
            intent_to_retain: false,
          })),
        },
      },
    ],
  };
  const response = await DeviceResponse.from(mdoc)
    .usingPresentationDefinition(presentationDefinition)
    .usingSessionTranscriptBytes(Buffer.from(input.sessionTranscriptBytes ?? oid4vpSessionTranscriptBytes(input)))
    .authenticateWithSignature(input.deviceKey, 'ES256')
    .sign();
  return Buffer.from(response.encode()).toString('base64url');
}

/** @auth0/mdl's own verifier, for checking DeviceResponses made by src/wallet: returns the disclosed elements of `namespace`. */
export async function verifyWithAuth0(
  deviceResponse: string,
  input: {
    iacaPem: string;
    namespace: string;
    clientId: string;
    nonce: string;
    responseUri: string;
    jwkThumbprint?: Uint8Array;
  },
): Promise<Record<string, unknown>> {
  const mdoc = await new Verifier([input.iacaPem]).verify(Buffer.from(deviceResponse, 'base64url'), {
    encodedSessionTranscript: oid4vpSessionTranscriptBytes(input),
  });
  const [document] = mdoc.documents;
  return document.getIssuerNameSpace(input.namespace);
}
