import { DeviceRequest, DeviceResponse, DocRequest, IssuerSigned, ItemsRequest, SessionTranscript } from '@owf/mdoc';
import type { JWK } from 'jose';
import { coseAlgorithmFor, coseKeyOfJwk, jwkOfCoseKey, mdocValueToJson, walletMdocContext } from './mdocCrypto.js';

/**
 * The dev wallet's ISO mdocs (ISO/IEC 18013-5), with @owf/mdoc: reading a held IssuerSigned and presenting
 * it over OpenID4VP 1.0 (§B.2) as a DeviceResponse with a device signature.
 */

export interface HeldMdoc {
  /** base64url CBOR IssuerSigned (OpenID4VCI 1.0 Appendix A.2.4 credential format) */
  issuerSigned: string;
  doctype: string;
  /** the private device key the MSO names (P-256, or P-384/P-521/Ed25519) */
  deviceKey: JWK;
}

function decodeIssuerSigned(issuerSigned: string): IssuerSigned {
  if (typeof issuerSigned !== 'string' || !/^[A-Za-z0-9_-]+$/.test(issuerSigned))
    throw new Error('the IssuerSigned is not base64url');
  let decoded: IssuerSigned;
  try {
    decoded = IssuerSigned.decode(new Uint8Array(Buffer.from(issuerSigned, 'base64url')));
    // the MSO (issuerAuth payload) decodes lazily: read it now, so that a broken one fails here
    void decoded.issuerAuth.mobileSecurityObject.docType;
  } catch {
    throw new Error('the IssuerSigned is not a CBOR IssuerSigned with an MSO (ISO/IEC 18013-5 §8.3.2.1.2.2)');
  }
  return decoded;
}

/**
 * The namespaces and element values an IssuerSigned holds (JSON values: full-date 'YYYY-MM-DD', tdate ISO
 * 8601, byte strings base64url, maps objects), its MSO docType and validUntil, for listing and selection. Not
 * verified: the wallet checks nothing of the issuer here (the verifier does).
 */
export function readIssuerSigned(issuerSigned: string): {
  namespaces: Record<string, Record<string, unknown>>;
  validUntil?: string;
  doctype: string;
} {
  const decoded = decodeIssuerSigned(issuerSigned);
  const namespaces: Record<string, Record<string, unknown>> = {};
  for (const [namespace, items] of decoded.issuerNamespaces?.issuerNamespaces ?? []) {
    namespaces[namespace] = Object.fromEntries(
      items.map((item) => [item.elementIdentifier, mdocValueToJson(item.elementValue)]),
    );
  }
  const mso = decoded.issuerAuth.mobileSecurityObject;
  const validUntil = mso.validityInfo.validUntil;
  return {
    namespaces,
    doctype: mso.docType,
    ...(Number.isNaN(validUntil.getTime()) ? {} : { validUntil: validUntil.toISOString() }),
  };
}

/**
 * A DeviceResponse (base64url, OpenID4VP 1.0 §B.2.5) disclosing only `elements` of `namespace` (ISO/IEC
 * 18013-5 §8.3.2.1.2.2: the other IssuerSignedItems are left out; their digests stay in the MSO), with a
 * device signature (§9.1.3.6) over DeviceAuthentication and the OpenID4VP 1.0 redirect SessionTranscript
 * (§B.2.6.1): client_id, nonce, the verifier's encryption key thumbprint when the response is encrypted,
 * response_uri.
 */
export async function presentMdoc(
  held: HeldMdoc,
  disclose: { namespace: string; elements: string[] },
  handover: { clientId: string; nonce: string; responseUri: string; jwkThumbprint?: Uint8Array },
): Promise<string> {
  const issuerSigned = decodeIssuerSigned(held.issuerSigned);
  const mso = issuerSigned.issuerAuth.mobileSecurityObject;
  if (mso.docType !== held.doctype) throw new Error(`the mdoc is of doctype ${mso.docType}, not ${held.doctype}`);
  const msoKey = jwkOfCoseKey(mso.deviceKeyInfo.deviceKey);
  const { kty, crv, x, y } = held.deviceKey;
  // a presentation signed by another key than the MSO's would only be refused by the verifier
  if (msoKey.kty !== kty || msoKey.crv !== crv || msoKey.x !== x || msoKey.y !== y)
    throw new Error('the device key is not the one the mdoc is bound to (MSO deviceKeyInfo)');

  const elements = [...new Set(disclose.elements)];
  const heldElements = new Set(
    issuerSigned.getIssuerNamespace(disclose.namespace)?.map((item) => item.elementIdentifier) ?? [],
  );
  const missing = elements.filter((element) => !heldElements.has(element));
  if (missing.length) throw new Error(`the mdoc has no ${missing.join(', ')} in ${disclose.namespace}`);

  // the selection as an ISO/IEC 18013-5 ItemsRequest: @owf/mdoc keeps exactly its elements (IntentToRetain false)
  const deviceRequest = DeviceRequest.create({
    version: '1.0',
    docRequests: [
      DocRequest.create({
        itemsRequest: ItemsRequest.create({
          docType: held.doctype,
          namespaces: elements.length
            ? new Map([[disclose.namespace, new Map(elements.map((element) => [element, false]))]])
            : new Map(),
        }),
      }),
    ],
  });
  const sessionTranscript = await SessionTranscript.forOid4Vp(
    {
      clientId: handover.clientId,
      nonce: handover.nonce,
      responseUri: handover.responseUri,
      ...(handover.jwkThumbprint ? { jwkThumbprint: handover.jwkThumbprint } : {}),
    },
    walletMdocContext,
  );
  const response = await DeviceResponse.createWithDeviceRequest(
    {
      deviceRequest,
      sessionTranscript,
      issuerSigned: [issuerSigned],
      signature: { signingKey: coseKeyOfJwk(held.deviceKey, coseAlgorithmFor(held.deviceKey)) },
    },
    walletMdocContext,
  );
  return Buffer.from(response.encode()).toString('base64url');
}
