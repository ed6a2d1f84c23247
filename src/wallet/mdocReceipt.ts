import { randomUUID } from 'node:crypto';
import { DateOnly, IssuerSigned } from '@owf/mdoc';
import { exportJWK, type JWK } from 'jose';
import { checkChain } from './certificates.js';
import { WalletError } from './errors.js';
import { walletMdocContext } from './mdocCrypto.js';
import { redeemOffer, requestCredential } from './issuance.js';
import { fetchIssuerMetadata } from './metadata.js';
import { checkPin, resolveOffer } from './offer.js';
import type { StoredMdoc } from './walletFile.js';

/**
 * The dev wallet receiving an ISO mdoc over OpenID4VCI 1.0 (Appendix A.2): the offer's first `mso_mdoc`
 * configuration, a fresh P-256 device key proven in a `jwt` proof, and the IssuerSigned the issuer returns
 * (base64url CBOR, §A.2.4), read with @owf/mdoc. The wallet checks what binds the mdoc to it (the MSO's
 * docType and device key) and the issuer's signature (`checkIssuerSigned`): with `issuerTrust` (the IACAs
 * it trusts) up to one of them.
 */
export async function receiveMdoc(
  offerUri: string,
  opts: { pin?: string; fetch?: typeof fetch; issuerTrust?: Uint8Array[] } = {},
): Promise<StoredMdoc> {
  const fetchImpl = opts.fetch ?? fetch;
  const offer = await resolveOffer(offerUri, fetchImpl);
  checkPin(offer.txCode, opts.pin);

  const issuerMetadata = await fetchIssuerMetadata(offer.credentialIssuer, fetchImpl);
  const configurationId = offer.credentialConfigurationIds.find(
    (id) => issuerMetadata.credential_configurations_supported[id]?.format === 'mso_mdoc',
  );
  if (!configurationId)
    throw new WalletError(
      `the offer names no mso_mdoc configuration (it offers ${offer.credentialConfigurationIds.join(', ')})`,
    );
  const doctype = issuerMetadata.credential_configurations_supported[configurationId].doctype;
  if (typeof doctype !== 'string' || !doctype)
    throw new WalletError(`the issuer's configuration ${configurationId} names no doctype`);

  // the proven key is the device key, signing ES256 device authentication (HAIP 1.0)
  const {
    token,
    privateKey,
    publicJwk: devicePublicJwk,
    proof,
  } = await redeemOffer(offer, issuerMetadata, opts.pin, fetchImpl);
  const { credential } = await requestCredential(
    issuerMetadata.credential_endpoint,
    { accessToken: token.accessToken, tokenType: token.tokenType, credentialConfigurationId: configurationId, proof },
    fetchImpl,
  );

  const read = readReceivedMdoc(credential, { doctype, devicePublicJwk });
  await checkIssuerSigned(credential as string, opts.issuerTrust);
  return {
    id: randomUUID(),
    format: 'mso_mdoc',
    credential,
    issuer: offer.credentialIssuer,
    doctype,
    receivedAt: new Date().toISOString(),
    holderKey: await exportJWK(privateKey),
    claims: read.namespaces,
    ...(read.validUntil !== undefined ? { validUntil: read.validUntil } : {}),
  };
}

/**
 * A received IssuerSigned: its MSO must be of `doctype` and bound to the device key the proof named
 * (ISO/IEC 18013-5 §9.1.2.4 deviceKeyInfo); returns its elements as JSON (full-date as YYYY-MM-DD, tdate
 * as ISO 8601, byte strings base64url) and validUntil.
 */
export function readReceivedMdoc(
  issuerSigned: unknown,
  expected: { doctype: string; devicePublicJwk: JWK },
): { namespaces: Record<string, Record<string, unknown>>; validUntil?: string } {
  if (typeof issuerSigned !== 'string' || !/^[A-Za-z0-9_-]+$/.test(issuerSigned))
    throw new WalletError('the issuer sent an mdoc that is not base64url (OpenID4VCI 1.0 Appendix A.2.4)');
  let decoded: IssuerSigned;
  let mso: IssuerSigned['issuerAuth']['mobileSecurityObject'];
  try {
    decoded = IssuerSigned.decode(new Uint8Array(Buffer.from(issuerSigned, 'base64url')));
    mso = decoded.issuerAuth.mobileSecurityObject;
  } catch {
    throw new WalletError(
      'the issuer sent an mdoc that is not a CBOR IssuerSigned with an MSO (ISO/IEC 18013-5 §8.3.2.1.2.2)',
    );
  }
  if (mso.docType !== expected.doctype)
    throw new WalletError(`the issuer sent an mdoc of doctype ${mso.docType}, not ${expected.doctype}`);
  const key = mso.deviceKeyInfo.deviceKey;
  const b64u = (bytes: Uint8Array | undefined) => (bytes ? Buffer.from(bytes).toString('base64url') : undefined);
  if (b64u(key.x) !== expected.devicePublicJwk.x || b64u(key.y) !== expected.devicePublicJwk.y) {
    throw new WalletError('the issuer sent an mdoc bound to another device key than the one the proof named');
  }
  const namespaces: Record<string, Record<string, unknown>> = {};
  for (const [namespace, items] of decoded.issuerNamespaces?.issuerNamespaces ?? []) {
    namespaces[namespace] = Object.fromEntries(
      items.map((item) => [item.elementIdentifier, asJson(item.elementValue)]),
    );
  }
  const validUntil = mso.validityInfo.validUntil;
  return { namespaces, ...(Number.isNaN(validUntil.getTime()) ? {} : { validUntil: validUntil.toISOString() }) };
}

/**
 * ISO/IEC 18013-5 §9.3.1 as a holder can check it: the MSO's COSE signature by the document signer in its
 * x5chain, every element's digest, the MSO's validity, and the chain (leaf first, each signed by the next,
 * all valid now), ending at one of `trust` when the wallet was given IACAs. Without them nothing anchors
 * the document signer: the mdoc is as good as its signature, and a verifier decides whom it trusts.
 */
export async function checkIssuerSigned(issuerSigned: string, trust: Uint8Array[] = []): Promise<void> {
  const decoded = IssuerSigned.decode(new Uint8Array(Buffer.from(issuerSigned, 'base64url')));
  try {
    await decoded.verify(
      { trustedCertificates: trust, disableCertificateChainValidation: trust.length === 0 },
      walletMdocContext,
    );
    if (trust.length === 0) await checkChain(decoded.issuerAuth.x5chain ?? [], {});
  } catch (err) {
    throw new WalletError(`the issuer's mdoc does not verify: ${(err as Error).message}`);
  }
}

function asJson(value: unknown, depth = 0): unknown {
  if (depth > 32) return null;
  if (value instanceof DateOnly) return value.toISOString();
  if (value instanceof Date) return Number.isNaN(value.getTime()) ? null : `${value.toISOString().split('.')[0]}Z`;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('base64url');
  if (value instanceof Map) return Object.fromEntries([...value].map(([k, v]) => [String(k), asJson(v, depth + 1)]));
  if (Array.isArray(value)) return value.map((v) => asJson(v, depth + 1));
  if (typeof value === 'bigint') return Number.isSafeInteger(Number(value)) ? Number(value) : value.toString();
  return value;
}
