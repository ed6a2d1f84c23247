import { DeviceResponse, type Document } from '@owf/mdoc';
import { libraryReason, refuse } from './errors.js';
import { mdocValueToJson } from './mdocContext.js';

/** An mdoc presentation's document read and its disclosed elements taken (src/verification/mdoc.ts checks it). */

/** The largest DeviceResponse accepted, decoded (1 MiB). */
export const MDOC_LIMIT = 1024 * 1024;
/**
 * At most this many issuer-signed elements in the document: @owf/mdoc decodes the MSO again for every
 * element it checks, so the work grows with their square. An mDL or a PID has a few dozen.
 */
const MAX_ELEMENTS = 256;

/**
 * The one Document of a DeviceResponse (OpenID4VP 1.0 §B.2.5: base64url, at most MDOC_LIMIT bytes), of the
 * requested doctype, with at most MAX_ELEMENTS elements and a detached device signature.
 */
export function decodeDocument(deviceResponse: string, doctype: string): Document {
  if (typeof deviceResponse !== 'string' || deviceResponse.length === 0)
    throw refuse('mdoc_invalid', 'the mdoc presentation is not a string (OpenID4VP 1.0 §B.2.5)');
  // before decoding: base64url of 1 MiB is at most 1,398,102 characters
  if (deviceResponse.length > Math.ceil((MDOC_LIMIT * 4) / 3))
    throw refuse('vp_token_too_large', `the mdoc presentation exceeds ${MDOC_LIMIT} bytes`);
  if (!/^[A-Za-z0-9_-]+$/.test(deviceResponse) || deviceResponse.length % 4 === 1) {
    throw refuse('mdoc_invalid', 'the mdoc presentation is not base64url without padding (OpenID4VP 1.0 §B.2.5)');
  }
  const bytes = new Uint8Array(Buffer.from(deviceResponse, 'base64url'));
  if (bytes.length > MDOC_LIMIT)
    throw refuse('vp_token_too_large', `the mdoc presentation exceeds ${MDOC_LIMIT} bytes`);

  const documents = decodeDeviceResponse(bytes);
  if (documents.length !== 1)
    throw refuse(
      'mdoc_invalid',
      `the mdoc DeviceResponse holds ${documents.length} documents; exactly one is expected`,
    );
  return checkDocument(documents[0], doctype);
}

/** The documents of a CBOR DeviceResponse (ISO/IEC 18013-5 §8.3.2.1.2.2) of status 0. */
export function decodeDeviceResponse(bytes: Uint8Array): Document[] {
  let response: DeviceResponse;
  try {
    response = DeviceResponse.decode(bytes);
  } catch (err) {
    throw refuse(
      'mdoc_invalid',
      `the mdoc presentation is not a CBOR DeviceResponse (ISO/IEC 18013-5 §8.3.2.1.2.2)${libraryReason(err)}`,
    );
  }
  if (response.status !== 0)
    throw refuse('mdoc_invalid', `the mdoc DeviceResponse has status ${response.status}, not 0 (OK)`);
  return response.documents ?? [];
}

/**
 * One Document as this verifier takes it: of the requested doctype, with at most MAX_ELEMENTS elements and a
 * detached device signature.
 */
export function checkDocument(document: Document, doctype: string): Document {
  if (document.docType !== doctype)
    throw refuse('mdoc_wrong_doctype', `the mdoc is not of the requested doctype ${doctype}`);
  const elements = [...(document.issuerSigned.issuerNamespaces?.issuerNamespaces.values() ?? [])].reduce(
    (n, items) => n + items.length,
    0,
  );
  if (elements > MAX_ELEMENTS)
    throw refuse('mdoc_invalid', `the mdoc discloses ${elements} elements; at most ${MAX_ELEMENTS} are accepted`);
  const { deviceAuth } = document.deviceSigned;
  if (deviceAuth.deviceMac)
    throw refuse(
      'mdoc_device_mac_unsupported',
      'the mdoc is authenticated with a device MAC (deviceMac, ISO/IEC 18013-5 §9.1.3.5), which needs a reader key OpenID4VP does not exchange; this verifier takes device signatures (§9.1.3.6)',
    );
  // ISO/IEC 18013-5 §9.1.3.6: the DeviceSignature payload is detached (null). @owf/mdoc would verify an
  // attached payload instead of this request's DeviceAuthentication, letting an old signature be replayed.
  if (deviceAuth.deviceSignature?.payload !== null)
    throw refuse(
      'mdoc_device_signature_invalid',
      'the mdoc DeviceSignature carries a payload; it must be detached (null, ISO/IEC 18013-5 §9.1.3.6)',
    );
  return document;
}

/**
 * ISO/IEC 18013-7 Annex C: the documents of one DeviceResponse answering a DeviceRequest of several, each
 * matched to the request's document of its doctype: every requested document once, nothing else.
 * Returns query id -> Document, in request order.
 */
export function annexCDocuments(
  bytes: Uint8Array,
  requested: ReadonlyArray<{ queryId: string; doctype: string }>,
): Map<string, Document> {
  const documents = decodeDeviceResponse(bytes);
  const byDoctype = new Map<string, Document>();
  for (const document of documents) {
    if (!requested.some((r) => r.doctype === document.docType))
      throw refuse(
        'unrequested_credential',
        'the DeviceResponse holds a document of a doctype this request did not ask for',
      );
    if (byDoctype.has(document.docType))
      throw refuse('too_many_presentations', `the DeviceResponse holds two documents of doctype ${document.docType}`);
    byDoctype.set(document.docType, document);
  }
  const chosen = new Map<string, Document>();
  for (const { queryId, doctype } of requested) {
    const document = byDoctype.get(doctype);
    if (!document)
      throw refuse(
        'missing_credential',
        `the DeviceResponse holds no document of doctype ${doctype}; every requested document must be presented`,
      );
    chosen.set(queryId, checkDocument(document, doctype));
  }
  return chosen;
}

/** The disclosed issuer-signed elements of `namespace`, as JSON values. */
export function disclosedClaims(document: Document, namespace: string): Record<string, unknown> {
  const claims: Record<string, unknown> = {};
  for (const item of document.issuerSigned.getIssuerNamespace(namespace) ?? []) {
    // two items for one element would leave it ambiguous which value the issuer meant
    if (Object.hasOwn(claims, item.elementIdentifier))
      throw refuse('mdoc_invalid', `the mdoc discloses an element of ${namespace} twice`);
    try {
      claims[item.elementIdentifier] = mdocValueToJson(item.elementValue);
    } catch (err) {
      throw refuse('mdoc_invalid', `an mdoc element value cannot be read${libraryReason(err)}`);
    }
  }
  return claims;
}
