import { calculateJwkThumbprint, type JWK } from 'jose';
import { SessionTranscript, type Document, type MdocContext, type VerificationAssessment } from '@owf/mdoc';
import { issuerName, subjectName } from '../keys/x509.js';
import { msoDigest } from '../status/registry.js';
import { libraryReason, refuse, type VerificationRefusal } from './errors.js';
import { annexCDeviceSignatureValid } from './annexCAnswer.js';
import { checkDocument, decodeDocument, disclosedClaims } from './mdocDocument.js';
import { COSE_SIGNATURE_ALGORITHMS, CoseAlgorithmError, jwkOfCoseKey, mdocContext } from './mdocContext.js';

/**
 * COSE algorithm numbers (RFC 9053) announced in `vp_formats_supported.mso_mdoc` (§B.2.4): ES256 (-7, what
 * HAIP 1.0 requires), ES384 (-35), ES512 (-36) and EdDSA (-8), each on the curve ISO/IEC 18013-5 pairs it with.
 */
export const MDOC_ISSUER_AUTH_ALGS: number[] = [...COSE_SIGNATURE_ALGORITHMS];
export const MDOC_DEVICE_AUTH_ALGS: number[] = [...COSE_SIGNATURE_ALGORITHMS];
export interface MdocExpectations {
  doctype: string;
  namespace: string;
  clientId: string;
  nonce: string;
  responseUri: string;
  /** RFC 7638 thumbprint bytes of the verifier's encryption key when the response was encrypted, else undefined (null in the handover) */
  jwkThumbprint?: Uint8Array;
  /** through the Digital Credentials API: the page's origin, bound by the OpenID4VPDCAPIHandover (OpenID4VP 1.0 Appendix A.5) */
  origin?: string;
  /** ISO/IEC 18013-7 Annex C: the `dcapi` SessionTranscript the device signature covers (no OpenID4VP handover) */
  annexCTranscript?: unknown[];
  /** DER IACA roots that may vouch for this query's type (verifier.trustAnchors of format mso_mdoc) */
  trustAnchors: Uint8Array[];
}

export interface VerifiedMdoc {
  /** who issued it: the issuer DN of the document signer certificate (the IACA's subject) */
  issuer: string;
  /** the document signer certificate's subject DN: who signed the MSO */
  documentSigner: string;
  doctype: string;
  /** the disclosed elements of `namespace`, as JSON values (see mdocValueToJson) */
  claims: Record<string, unknown>;
  disclosed: string[];
  /** the MSO deviceKey as a public JWK */
  holderJwk: JWK;
  /** RFC 7638 */
  holderKeyThumbprint: string;
  /** the SHA-256 of the MSO as signed: how this service knows an mdoc it issued (src/status/registry.ts) */
  msoDigest: string;
}

/** A failed check of @owf/mdoc, thrown from its callback so that the first failure ends verification. */
class CheckFailed extends Error {
  constructor(readonly assessment: VerificationAssessment) {
    super(assessment.check);
  }
}

interface Failure {
  chainError?: Error;
  coseError?: CoseAlgorithmError;
  now: Date;
  clockTolerance: number;
  document: Document;
  /** the DC API's origin, when the handover binds one */
  origin?: string;
  /** the transcript is Annex C's */
  annexC?: boolean;
}

/** The refusal for a failed check of @owf/mdoc (ISO/IEC 18013-5 §9.3.1), by its category and check. */
function refusalFor({ category, check }: VerificationAssessment, f: Failure): VerificationRefusal {
  if (category === 'ISSUER_AUTH') {
    if (/certificate must be valid/i.test(check)) {
      return refuse(
        'mdoc_issuer_not_trusted',
        `the mdoc document signer certificate is not trusted (ISO/IEC 18013-5 §9.3.1, Annex B)${f.chainError ? `: ${f.chainError.message}` : ''}`,
      );
    }
    if (/country name/i.test(check))
      return refuse(
        'mdoc_issuer_not_trusted',
        "the mdoc document signer certificate's issuer has no countryName (ISO/IEC 18013-5 Annex B.1)",
      );
    if (/signed date/i.test(check))
      return refuse(
        'mdoc_issuer_signature_invalid',
        "the MSO was signed (validityInfo.signed) outside the document signer certificate's validity (ISO/IEC 18013-5 §9.3.1)",
      );
    if (/signature/i.test(check))
      return refuse(
        'mdoc_issuer_signature_invalid',
        `the mdoc issuer signature (issuerAuth) does not verify${f.coseError ? `: ${f.coseError.message}` : ''}`,
      );
    if (/valid at the time/i.test(check)) {
      const { validUntil } = f.document.issuerSigned.issuerAuth.mobileSecurityObject.validityInfo;
      return validUntil.getTime() < f.now.getTime() - f.clockTolerance * 1000
        ? refuse('mdoc_expired', 'the mdoc has expired (MSO validityInfo.validUntil, ISO/IEC 18013-5 §9.3.1)')
        : refuse(
            'mdoc_not_yet_valid',
            'the mdoc is not valid yet (MSO validityInfo.validFrom, ISO/IEC 18013-5 §9.3.1)',
          );
    }
    return refuse('mdoc_invalid', 'the mdoc issuer data (issuerAuth) is not valid');
  }
  if (category === 'DATA_INTEGRITY') {
    if (/issuing_country|issuing_jurisdiction/.test(check))
      return refuse(
        'mdoc_invalid',
        'the issuing_country or issuing_jurisdiction element does not match the document signer certificate (ISO/IEC 18013-5 §9.3.1)',
      );
    if (/digest/i.test(check) && !/digestAlgorithm/.test(check))
      return refuse(
        'mdoc_digest_mismatch',
        'a disclosed mdoc element does not match its digest in the MSO (ISO/IEC 18013-5 §9.3.1)',
      );
    return refuse('mdoc_invalid', 'the MSO has no supported digestAlgorithm (ISO/IEC 18013-5 §9.1.2.4)');
  }
  if (category === 'DEVICE_AUTH') {
    return refuse(
      'mdoc_device_signature_invalid',
      f.coseError
        ? `the mdoc device signature does not verify: ${f.coseError.message}`
        : f.annexC
          ? 'the mdoc device signature does not verify for this request (ISO/IEC 18013-7 Annex C dcapi SessionTranscript: the EncryptionInfo of this request and the origin) or for the MSO device key'
          : f.origin !== undefined
            ? 'the mdoc device signature does not verify for this request (OpenID4VP 1.0 Appendix A.5 OpenID4VPDCAPIHandover: origin, nonce, encryption key) or for the MSO device key'
            : 'the mdoc device signature does not verify for this request (OpenID4VP 1.0 §B.2.6.1 SessionTranscript: client_id, nonce, response_uri, encryption key) or for the MSO device key',
    );
  }
  return refuse('mdoc_invalid', 'the mdoc DeviceResponse is not well formed');
}

/**
 * Verifies one mdoc presentation (OpenID4VP 1.0 §B.2, ISO/IEC 18013-5 §9.3.1) with @owf/mdoc: the
 * DeviceResponse holds exactly one document, of the requested doctype (in the Document and in the signed
 * MSO); its issuerAuth signature and x5chain to one of the trust anchors; the MSO signed within the document
 * signer's validity and valid now; every disclosed element's digest; and the device signature, by the MSO
 * device key, over DeviceAuthentication with the OpenID4VP SessionTranscript of this request (§B.2.6.1). The
 * issuer checks run first, so an untrusted or altered document is refused as such whatever its device
 * signature. The claims are the disclosed issuer-signed elements of `namespace`; device-signed elements
 * (ISO/IEC 18013-5 §8.3.2.1.2.2 DeviceNameSpaces) are the wallet's own word and are not returned.
 */
export async function verifyMdocPresentation(
  deviceResponse: string | Document,
  expected: MdocExpectations,
  ctx: { now?: number; clockTolerance?: number } = {},
): Promise<VerifiedMdoc> {
  // a Document: one of an Annex C DeviceResponse, already matched to its request (annexCDocuments)
  const document =
    typeof deviceResponse === 'string'
      ? decodeDocument(deviceResponse, expected.doctype)
      : checkDocument(deviceResponse, expected.doctype);
  if (expected.trustAnchors.length === 0)
    throw refuse(
      'mdoc_issuer_not_trusted',
      'no trust anchor may vouch for this credential type as an mdoc (verifier.trustAnchors)',
    );

  const now = new Date((ctx.now ?? Math.floor(Date.now() / 1000)) * 1000);
  const clockTolerance = ctx.clockTolerance ?? 30;
  const failure: Failure = {
    now,
    clockTolerance,
    document,
    origin: expected.origin,
    annexC: !!expected.annexCTranscript,
  };
  const context = reportingContext(failure);
  await verifyIssuerSigned(document, expected, context, failure);
  await verifyDeviceSigned(document, expected, context, failure);

  const claims = disclosedClaims(document, expected.namespace);
  let holderJwk: JWK;
  try {
    holderJwk = jwkOfCoseKey(document.issuerSigned.issuerAuth.mobileSecurityObject.deviceKeyInfo.deviceKey);
  } catch (err) {
    throw refuse('mdoc_invalid', `the MSO device key cannot be read${libraryReason(err)}`);
  }
  return {
    issuer: issuerName(document.issuerSigned.issuerAuth.certificate),
    documentSigner: subjectName(document.issuerSigned.issuerAuth.certificate),
    doctype: document.docType,
    claims,
    disclosed: Object.keys(claims),
    holderJwk,
    holderKeyThumbprint: await calculateJwkThumbprint(holderJwk),
    // verified above, so present: an IssuerAuth without its payload does not verify
    msoDigest: msoDigest(document.issuerSigned.issuerAuth.payload ?? new Uint8Array()),
  };
}

/** The library context, keeping the reasons our own modules give (chain, COSE algorithm) for the description. */
function reportingContext(failure: Failure): MdocContext {
  return {
    ...mdocContext,
    cose: {
      ...mdocContext.cose,
      sign1: {
        ...mdocContext.cose.sign1,
        verify: async (input) => {
          try {
            return await mdocContext.cose.sign1.verify(input);
          } catch (err) {
            if (err instanceof CoseAlgorithmError) failure.coseError = err;
            throw err;
          }
        },
      },
    },
    x509: {
      ...mdocContext.x509,
      verifyCertificateChain: async (input) => {
        try {
          await mdocContext.x509.verifyCertificateChain(input);
        } catch (err) {
          failure.chainError = err as Error;
          throw err;
        }
      },
    },
  };
}

/** @owf/mdoc's callback: the first failed check ends verification. */
const onCheck = (item: VerificationAssessment) => {
  if (item.status === 'FAILED') throw new CheckFailed(item);
};

/** 1. issuer: the chain, issuerAuth signature, MSO validity, then each element's digest; the MSO's doctype and signing time. */
async function verifyIssuerSigned(
  document: Document,
  expected: MdocExpectations,
  context: MdocContext,
  failure: Failure,
): Promise<void> {
  const { now, clockTolerance } = failure;
  try {
    await document.issuerSigned.verify(
      { trustedCertificates: expected.trustAnchors, now, skewSeconds: clockTolerance, verificationCallback: onCheck },
      context,
    );
  } catch (err) {
    if (err instanceof CheckFailed) throw refusalFor(err.assessment, failure);
    if (err instanceof CoseAlgorithmError)
      throw refuse(
        'mdoc_issuer_signature_invalid',
        `the mdoc issuer signature (issuerAuth) cannot be verified: ${err.message}`,
      );
    throw refuse('mdoc_invalid', `the mdoc issuer data (issuerAuth, MSO) cannot be read${libraryReason(err)}`);
  }
  const mso = document.issuerSigned.issuerAuth.mobileSecurityObject;
  // ISO/IEC 18013-5 §9.3.1: the signed MSO is for the document's doctype
  if (mso.docType !== expected.doctype)
    throw refuse(
      'mdoc_wrong_doctype',
      `the issuer-signed MSO is not of the requested doctype ${expected.doctype} (ISO/IEC 18013-5 §9.3.1)`,
    );
  // a signing time in the future: the library checks only that it lies within the certificate's validity
  if (mso.validityInfo.signed.getTime() > now.getTime() + clockTolerance * 1000)
    throw refuse('mdoc_not_yet_valid', 'the MSO is signed in the future (validityInfo.signed, ISO/IEC 18013-5 §9.3.1)');
}

/** 2. device: the signature over DeviceAuthentication with this request's SessionTranscript (§B.2.6.1). */
async function verifyDeviceSigned(
  document: Document,
  expected: MdocExpectations,
  context: MdocContext,
  failure: Failure,
): Promise<void> {
  // ISO/IEC 18013-7 Annex C: the `dcapi` transcript, which @owf/mdoc 0.6 cannot decode (src/verification/annexCAnswer.ts)
  if (expected.annexCTranscript) {
    const valid = await annexCDeviceSignatureValid(document, expected.annexCTranscript, context).catch((err) => {
      if (err instanceof CoseAlgorithmError) failure.coseError = err;
      return false;
    });
    if (!valid) throw refusalFor({ category: 'DEVICE_AUTH', status: 'FAILED', check: 'device signature' }, failure);
    return;
  }
  try {
    const thumbprint = expected.jwkThumbprint ? { jwkThumbprint: expected.jwkThumbprint } : {};
    // Appendix A.5: through the DC API the handover binds the origin, not the client_id and response_uri
    const sessionTranscript =
      expected.origin !== undefined
        ? await SessionTranscript.forOid4VpDcApi(
            { origin: expected.origin, nonce: expected.nonce, ...thumbprint },
            context,
          )
        : await SessionTranscript.forOid4Vp(
            { clientId: expected.clientId, nonce: expected.nonce, responseUri: expected.responseUri, ...thumbprint },
            context,
          );
    await document.deviceSigned.deviceAuth.verify(
      { document, sessionTranscript, verificationCallback: onCheck },
      context,
    );
  } catch (err) {
    if (err instanceof CheckFailed) throw refusalFor(err.assessment, failure);
    throw refuse('mdoc_device_signature_invalid', `the mdoc device signature cannot be verified${libraryReason(err)}`);
  }
}
