import { X509Certificate } from 'node:crypto';
import { DateOnly, DeviceKey, Issuer, SignatureAlgorithm } from '@owf/mdoc';
import type { JWK } from 'jose';
import type { CredentialType } from '../config/schema.js';
import type { DocumentSigners } from '../keys/issuerIdentity.js';
import { longLivedMdocTypes } from '../rules/validity.js';
import { msoDigest } from '../status/registry.js';
import { coseKeyOfJwk, mdocContext } from '../verification/mdocContext.js';

export interface MdocInput {
  doctype: string;
  namespace: string;
  /** the offer's attributes, checked against the type's template when the offer was made */
  attributes: Record<string, unknown>;
  /** the type's attributes: how each value becomes an element */
  spec: CredentialType['attributes'];
  /** the holder's public key from the proof: the MSO's device key */
  deviceJwk: JWK;
  validFrom: Date;
  validUntil: Date;
  /** the MSO's `signed` time; default now (a batch's is its rounded issuance time: ISSU_36) */
  signedAt?: Date;
}

const DATA_URI = /^data:[^;,]+;base64,(.*)$/s;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

/**
 * An attribute's value as an mdoc element (ISO/IEC 18013-5 §7.2.1 types): a calendar date as full-date
 * (tag 1004), a date-time as tdate (tag 0), an image as a byte string (as the portrait is: the image's
 * bytes, its media type being the format's signature), and strings, numbers and booleans as they are.
 */
export function elementValue(value: unknown, type: CredentialType['attributes'][string]['type'] | undefined): unknown {
  if (typeof value === 'string' && type === 'date')
    return DATE_ONLY.test(value) ? new DateOnly(value) : new Date(value);
  if (typeof value === 'string' && type === 'image') {
    const m = DATA_URI.exec(value);
    if (m) return new Uint8Array(Buffer.from(m[1], 'base64'));
  }
  return value;
}

/**
 * Signs ISO mdocs (ISO/IEC 18013-5 §9.1.2.4) with @owf/mdoc: the attributes as the IssuerSignedItems of the
 * type's namespace, the MSO (SHA-256 digests, the holder's device key, validity) signed ES256 by the
 * document signer that `signers` gives now, its chain in the x5chain header. Returns the credential as
 * OpenID4VCI 1.0 Appendix A.2.4 carries it (base64url of the CBOR IssuerSigned), and the digest of its
 * signed MSO, by which our verifier knows it (src/status/registry.ts).
 */
export class MdocSigner {
  constructor(private readonly signers: DocumentSigners) {}

  async sign(input: MdocInput): Promise<{ credential: string; msoDigest: string }> {
    const signer = await this.signers.current();
    const elements: Record<string, unknown> = {};
    for (const [name, value] of Object.entries(input.attributes)) {
      if (value !== undefined && value !== null) elements[name] = elementValue(value, input.spec[name]?.type);
    }
    const { kty, crv, x, y } = input.deviceJwk;
    // an MSO is signed within its document signer's validity (ISO/IEC 18013-5 §9.3.3): a rounded time (ISSU_36)
    // never goes back before the signer's notBefore, which every mdoc of a new signer's first hour then shares
    let signed = input.signedAt ?? new Date();
    let validFrom = input.validFrom;
    if (input.signedAt) {
      const notBefore = new Date(new X509Certificate(signer.chain[0]).validFrom);
      if (signed < notBefore) signed = notBefore;
      if (validFrom < notBefore) validFrom = notBefore;
    }
    const issuerSigned = await new Issuer(input.doctype, mdocContext)
      .addIssuerNamespace(input.namespace, elements)
      .sign({
        signingKey: coseKeyOfJwk(signer.jwk),
        algorithm: SignatureAlgorithm.ES256,
        digestAlgorithm: 'SHA-256',
        validityInfo: { signed, validFrom, validUntil: input.validUntil },
        // the library's own JWK mapping (right for P-256, the only device key taken: issueCredential.ts)
        deviceKeyInfo: { deviceKey: DeviceKey.fromJwk({ kty, crv, x, y }) },
        certificates: signer.chain,
      });
    const mso = issuerSigned.issuerAuth.payload;
    if (!mso) throw new Error('the signed IssuerAuth has no MSO payload');
    return { credential: Buffer.from(issuerSigned.encode()).toString('base64url'), msoDigest: msoDigest(mso) };
  }
}

/** The operator chose mdocs valid longer than a day (ARF Annex 2 VCR_01): which types, and what that means. */
export function longLivedMdocWarnings(types: CredentialType[]): string[] {
  return longLivedMdocTypes(types).map(({ name, validity }) => {
    const at = types.findIndex((t) => t.name === name);
    return `credentialTypes[${at}].mdoc.irrevocableValidity: mdocs of ${name} are valid for up to ${validity} and cannot be revoked for that long (an mdoc carries no status: a revocation reaches only this service's verifier; others accept a revoked mdoc until it expires)`;
  });
}
