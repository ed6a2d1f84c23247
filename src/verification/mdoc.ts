import { calculateJwkThumbprint, type JWK } from 'jose';
import { DateOnly, DeviceResponse, SessionTranscript, Verifier, type VerificationAssessment } from '@owf/mdoc';
import { issuerName, X509ChainError } from '../keys/x509.js';
import type { DcqlCredentialQuery } from './dcql.js';
import { VerificationRefusal, type RefusalReason } from './errors.js';
import { mdocContext } from './mdocContext.js';

/** OpenID4VP 1.0 §B.2: the Credential Format Identifier of ISO mdocs. */
export const MDOC_FORMAT = 'mso_mdoc';
/** COSE algorithm numbers (RFC 9053) announced in `vp_formats_supported.mso_mdoc` (§B.2.4): ES256 (HAIP 1.0). */
export const MDOC_ISSUER_AUTH_ALGS = [-7];
export const MDOC_DEVICE_AUTH_ALGS = [-7];
/** The largest DeviceResponse accepted, decoded. */
const MDOC_LIMIT = 1024 * 1024;

/**
 * One `mso_mdoc` Credential Query (OpenID4VP 1.0 §6.1, §B.2.3): the doctype, one Claims Query per element
 * (`[namespace, element]`, not to be retained), the preference of `claim_sets` as for SD-JWT VC queries
 * (every claim, then the required ones), and the trust anchors by key identifier (§6.1.1.1).
 */
export function mdocCredentialQuery(id: string, mdoc: { doctype: string; namespace: string }, claims: Array<{ name: string; required: boolean }>, aki: string[] = []): DcqlCredentialQuery {
  const names = claims.map((c) => c.name);
  const required = claims.filter((c) => c.required).map((c) => c.name);
  const query: DcqlCredentialQuery = {
    id,
    format: MDOC_FORMAT,
    meta: { doctype_value: mdoc.doctype },
    ...(aki.length ? { trusted_authorities: [{ type: 'aki', values: [...aki] }] } : {}),
    claims: names.map((name) => ({ id: name, path: [mdoc.namespace, name], intent_to_retain: false })),
  };
  if (required.length === names.length) return query;
  query.claim_sets = required.length > 0 ? [names, required] : [names, ...names.map((name) => [name])];
  return query;
}

export interface MdocExpectations {
  doctype: string;
  namespace: string;
  clientId: string;
  nonce: string;
  responseUri: string;
  /** RFC 7638 thumbprint of the verifier's encryption key when the response was encrypted */
  jwkThumbprint?: Uint8Array;
  /** DER IACA roots */
  trustAnchors: Uint8Array[];
}

export interface VerifiedMdoc {
  /** the issuer DN of the document signer certificate (the IACA's subject) */
  issuer: string;
  doctype: string;
  /** the disclosed elements of the namespace, as JSON values */
  claims: Record<string, unknown>;
  disclosed: string[];
  holderJwk: JWK;
  holderKeyThumbprint: string;
}

const refuse = (reason: RefusalReason, description: string) => new VerificationRefusal(reason, description);

/** A refusal for the first failed check of the library, by its category (ISO 18013-5 §9.3). */
function refusalFor(failed: VerificationAssessment, chainError?: X509ChainError): VerificationRefusal {
  const check = failed.check;
  switch (failed.category) {
    case 'ISSUER_AUTH':
      if (/certificate must be valid/i.test(check)) return refuse('mdoc_issuer_not_trusted', `the mdoc issuer certificate is not trusted${chainError ? `: ${chainError.message}` : ''}`);
      if (/signature/i.test(check)) return refuse('mdoc_issuer_signature_invalid', 'the mdoc issuer signature (issuerAuth) does not verify');
      if (/valid at the time/i.test(check)) return refuse('mdoc_not_valid_now', 'the mdoc is not valid now (MSO validityInfo)');
      return refuse('mdoc_invalid', `the mdoc issuer data is not valid: ${check}`);
    case 'DEVICE_AUTH':
      return refuse('mdoc_device_signature_invalid', 'the mdoc device signature does not verify for this request (SessionTranscript: client_id, nonce, response_uri, encryption key)');
    case 'DATA_INTEGRITY':
      return refuse('mdoc_digest_mismatch', 'a disclosed mdoc element does not match its digest in the MSO');
    default:
      return refuse('mdoc_invalid', 'the mdoc DeviceResponse is not well formed');
  }
}

/** An element value as JSON: full-date as YYYY-MM-DD, tdate as ISO 8601, byte strings as base64url, maps as objects. */
function toJson(value: unknown, depth = 0): unknown {
  if (depth > 32) throw refuse('mdoc_invalid', 'an mdoc element nests deeper than 32 levels');
  if (value instanceof DateOnly) return value.toISOString();
  if (value instanceof Date) return value.toISOString().replace(/\.000Z$/, 'Z');
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64url');
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [String(k), toJson(v, depth + 1)]));
  if (Array.isArray(value)) return value.map((v) => toJson(v, depth + 1));
  if (typeof value === 'bigint') return Number(value);
  if (value !== null && typeof value === 'object') return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, toJson(v, depth + 1)]));
  return value;
}

/**
 * Verifies one mdoc presentation (OpenID4VP 1.0 §B.2, ISO/IEC 18013-5 §9.3) with @owf/mdoc: the
 * DeviceResponse holds exactly one document of the requested doctype; its issuerAuth signature and x5chain
 * to a trust anchor, the MSO's validity, every disclosed element's digest, and the device signature over
 * the OpenID4VP SessionTranscript of this request (§B.2.6.1) are checked by the library; its first failed
 * check becomes the refusal. The claims are the disclosed elements of the configured namespace.
 */
export async function verifyMdocPresentation(deviceResponse: string, expected: MdocExpectations, ctx: { now?: number; clockTolerance?: number } = {}): Promise<VerifiedMdoc> {
  if (!/^[A-Za-z0-9_-]+$/.test(deviceResponse)) throw refuse('mdoc_invalid', 'the mdoc presentation is not base64url');
  const bytes = Buffer.from(deviceResponse, 'base64url');
  if (bytes.length > MDOC_LIMIT) throw refuse('vp_token_too_large', `the mdoc presentation exceeds ${MDOC_LIMIT} bytes`);
  let response: DeviceResponse;
  try {
    response = DeviceResponse.decode(new Uint8Array(bytes));
  } catch {
    throw refuse('mdoc_invalid', 'the mdoc presentation is not a CBOR DeviceResponse');
  }
  const documents = response.documents ?? [];
  if (response.status !== 0) throw refuse('mdoc_invalid', `the mdoc DeviceResponse has status ${response.status}`);
  if (documents.length !== 1) throw refuse('mdoc_invalid', `the mdoc DeviceResponse holds ${documents.length} documents; exactly one is expected`);
  const [document] = documents;
  if (document.docType !== expected.doctype) throw refuse('mdoc_wrong_doctype', `the mdoc is of doctype ${JSON.stringify(document.docType)}, the query asked for ${expected.doctype}`);
  if (expected.trustAnchors.length === 0) throw refuse('mdoc_issuer_not_trusted', 'no trust anchors are configured for mdoc issuers (verifier.trustAnchors)');

  let failed: VerificationAssessment | undefined;
  let chainError: X509ChainError | undefined;
  const context = {
    ...mdocContext,
    x509: {
      ...mdocContext.x509,
      // keep the chain's own reason for the description
      verifyCertificateChain: async (input: Parameters<typeof mdocContext.x509.verifyCertificateChain>[0]) => {
        try {
          await mdocContext.x509.verifyCertificateChain(input);
        } catch (err) {
          if (err instanceof X509ChainError) chainError = err;
          throw err;
        }
      },
    },
  };
  try {
    const sessionTranscript = await SessionTranscript.forOid4Vp(
      { clientId: expected.clientId, nonce: expected.nonce, responseUri: expected.responseUri, ...(expected.jwkThumbprint ? { jwkThumbprint: expected.jwkThumbprint } : {}) },
      context,
    );
    await Verifier.verifyDeviceResponse(
      {
        deviceResponse: response,
        sessionTranscript,
        trustedCertificates: expected.trustAnchors,
        now: new Date((ctx.now ?? Math.floor(Date.now() / 1000)) * 1000),
        skewSeconds: ctx.clockTolerance ?? 30,
        onCheck: (item) => {
          if (item.status === 'FAILED') {
            failed ??= item;
            throw new Error(item.check);
          }
        },
      },
      context,
    );
  } catch (err) {
    if (err instanceof VerificationRefusal) throw err;
    if (failed) throw refusalFor(failed, chainError);
    if (document.deviceSigned?.deviceAuth?.deviceMac) throw refuse('mdoc_device_mac_unsupported', 'the mdoc is authenticated with a device MAC; this verifier takes device signatures');
    throw refuse('mdoc_invalid', 'the mdoc presentation could not be verified');
  }

  const issuerSigned = document.issuerSigned;
  const claims = (toJson(issuerSigned.getPrettyClaims(expected.namespace) ?? {}) ?? {}) as Record<string, unknown>;
  const holderJwk = issuerSigned.issuerAuth.mobileSecurityObject.deviceKeyInfo.deviceKey.jwk as JWK;
  const { d: _d, ...publicJwk } = holderJwk;
  return {
    issuer: issuerName(issuerSigned.issuerAuth.certificate),
    doctype: document.docType,
    claims,
    disclosed: Object.keys(claims),
    holderJwk: publicJwk,
    holderKeyThumbprint: await calculateJwkThumbprint(publicJwk),
  };
}
