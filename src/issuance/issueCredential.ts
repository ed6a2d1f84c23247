import type { JWK } from 'jose';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { errors, type OpenID4VCIIssueCredential } from 'oidc-provider';
import type { CredentialType } from '../config/schema.js';
import { mdocValidUntil } from '../rules/validity.js';
import type { CredentialFormat } from '../status/registry.js';
import { configurationOf, MDOC_FORMAT } from './credentialConfigurations.js';
import type { MdocSigner } from './mdoc.js';
import type { OfferBook, OfferRecord } from './offers.js';
import type { SdJwtVcSigner } from './sdJwtVc.js';
import type { NotificationBook } from './notification.js';

export interface IssueCredentialDeps {
  credentialIssuer: string;
  offers: OfferBook;
  signer: SdJwtVcSigner;
  vctOf(credentialType: string): string;
  /** the mdoc signer, when there is a document signer (the mso_mdoc configurations are published only then) */
  mdoc?: MdocSigner;
  typeOf(credentialType: string): CredentialType | undefined;
  /** the credential's status list entry, allocated under its SerialNumber (D18) */
  statusEntry(serialNumber: string, exp: number): Promise<{ idx: number; uri: string }>;
  /** an mdoc's entry, which it cannot carry: found by its MSO's digest (src/status/registry.ts `allocate`) */
  mdocEntry(serialNumber: string, exp: number, msoDigest: string): Promise<unknown>;
  /**
   * after signing, before the offer shows done: the flow's outcome. When it fails, the wallet gets the error
   * and the offer is put back (and it takes back what it may have written); once it succeeded, the
   * credential is sent.
   */
  onIssued?: (offer: OfferRecord, issued: IssuedCredential) => Promise<void>;
  /** OpenID4VCI 1.0 §11: a notification_id for the credential, for the access token that fetched it */
  notifications?: NotificationBook;
}

/** What the wallet took: the format it picked, and when that credential expires (epoch seconds; the ID token's ExpiresAt). */
export interface IssuedCredential {
  format: CredentialFormat;
  expiresAt: number;
}

/** The access token's claim that names the offer it was issued for (src/issuance/walletProvider.ts, `extraTokenClaims`). */
export const OFFER_CLAIM = 'offer';

/**
 * oidc-provider's `features.openid4vci.issueCredential`: by the time it runs, the provider has checked the
 * access token (audience, scope for the configuration), the proof's signature, `typ`, `aud`, `iat` and
 * `c_nonce` (OpenID4VCI 1.0 §8.2). What is left is ours: the offer behind the token, one credential per
 * offer, and the SD-JWT VC itself.
 */
export function issueCredentialFor(deps: IssueCredentialDeps): OpenID4VCIIssueCredential {
  return async (_ctx, { credentialConfigurationId, proofs, accessToken }) => {
    const offerId = (accessToken as { extra?: Record<string, unknown> }).extra?.[OFFER_CLAIM];
    const holderJwk = holderKeyOf(proofs?.jwt?.[0]);
    // an offer names each configuration of its type (src/issuance/offerUri.ts); the wallet picks one
    const configuration = configurationOf(credentialConfigurationId);
    if (configuration.format === MDOC_FORMAT) deviceKeyOf(holderJwk);
    // taken: of concurrent requests, one gets the offer; one that does not issue puts it back
    const offer = typeof offerId === 'string' ? await deps.offers.take(offerId) : undefined;
    if (!offer || offer.credentialType !== configuration.typeName) {
      if (offer) await deps.offers.putBack(offer);
      throw new errors.CredentialRequestDenied(
        offer
          ? 'the credential offer is for another credential configuration'
          : typeof offerId === 'string' && (await deps.offers.outcome(offerId))?.status === 'done'
            ? 'the credential for this offer has already been issued'
            : 'the credential offer is no longer valid',
      );
    }

    let credential: string;
    let notificationId: string | undefined;
    try {
      const token = accessToken as { jti: string; exp?: number };
      // written while the credential is made (the same round trip as its status entry); a notification id
      // of a credential that was never issued is never handed out, and expires
      const notifying = deps.notifications?.create(offer, token.jti, token.exp ?? Math.floor(Date.now() / 1000));
      notifying?.catch(() => undefined); // awaited below, once the credential is signed
      const signed =
        configuration.format === MDOC_FORMAT
          ? await signMdoc(deps, offer, holderJwk)
          : await signSdJwtVc(deps, offer, holderJwk);
      const { credential: signedCredential, ...issued } = signed;
      credential = signedCredential;
      notificationId = await notifying;
      // in this order: the holder's page must never see the offer done before the claims it finishes with,
      // and the claims only once everything the wallet is sent is ready
      await deps.onIssued?.(offer, issued);
    } catch (err) {
      await deps.offers.putBack(offer).catch(() => undefined); // the error the wallet gets is the first one
      throw err;
    }
    // The flow has its outcome (the holder's browser finishes with it): the credential goes to the wallet.
    // What follows only tidies up and shows the offer done; its failure does not take the credential back
    // (the offer is taken: no other request issues it), and what it removes expires on its own.
    deps.offers.forgetRedemption(offer.offerId).catch(() => undefined);
    await deps.offers.done(offer.offerId).catch(() => undefined);
    return { credentials: [{ credential }], ...(notificationId ? { notification_id: notificationId } : {}) };
  };
}

type Signed = IssuedCredential & { credential: string };

/** The SD-JWT VC, valid for the type's validity (the offer's ExpiresAt), naming its status list entry. */
async function signSdJwtVc(deps: IssueCredentialDeps, offer: OfferRecord, holderJwk: JWK): Promise<Signed> {
  const status = await deps.statusEntry(offer.serialNumber, offer.credentialExpiresAt);
  const credential = await deps.signer.sign({
    issuer: deps.credentialIssuer,
    vct: deps.vctOf(offer.credentialType),
    attributes: offer.attributes,
    holderJwk,
    expiresAt: offer.credentialExpiresAt,
    status,
  });
  return { credential, format: 'dc+sd-jwt', expiresAt: offer.credentialExpiresAt };
}

/**
 * The mdoc carries no status: neither @owf/mdoc nor @auth0/mdl writes or reads one in the MSO (ISO/IEC
 * 18013-5 second edition). So it is short-lived (ARF Annex 2 VCR_01): valid a day at most, unless the
 * operator chose longer for the type (`mdoc.irrevocableValidity`), never beyond the type's validity. Its
 * status entry is recorded by its MSO's digest, for this service's verifier.
 */
async function signMdoc(deps: IssueCredentialDeps, offer: OfferRecord, holderJwk: JWK): Promise<Signed> {
  const type = deps.typeOf(offer.credentialType);
  if (!deps.mdoc || !type?.mdoc)
    throw new errors.UnknownCredentialConfiguration('this credential type is not issued as mso_mdoc');
  // whole seconds: the MSO's tdates and the ID token's ExpiresAt say the same instant
  const issuedAt = new Date(Math.floor(Date.now() / 1000) * 1000);
  const validUntil = mdocValidUntil(
    type.mdoc.irrevocableValidity,
    issuedAt,
    new Date(offer.credentialExpiresAt * 1000),
  );
  const { credential, msoDigest } = await deps.mdoc.sign({
    doctype: type.mdoc.doctype,
    namespace: type.mdoc.namespace,
    attributes: offer.attributes,
    spec: type.attributes,
    deviceJwk: holderJwk,
    validFrom: issuedAt,
    validUntil,
  });
  const expiresAt = Math.floor(validUntil.getTime() / 1000);
  await deps.mdocEntry(offer.serialNumber, expiresAt, msoDigest);
  return { credential, format: 'mso_mdoc', expiresAt };
}

/**
 * An mdoc's device key (ISO/IEC 18013-5 §9.1.3.6): a P-256 key, which HAIP 1.0 requires wallets to sign
 * device authentication with (ES256); the mdoc configuration takes ES256 proofs only.
 */
function deviceKeyOf(jwk: JWK): JWK {
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || typeof jwk.x !== 'string' || typeof jwk.y !== 'string') {
    throw new errors.InvalidProof(
      `jwt proof jwk must be an EC P-256 key for mso_mdoc (the mdoc's device key), not ${String(jwk.kty)} ${String(jwk.crv)}`,
    );
  }
  return jwk;
}

/**
 * How long a c_nonce is accepted: oidc-provider 9's ServerChallenge (lib/helpers/challenge.js) derives
 * c_nonces per 60 s step, hands out the next step's and accepts a window of five steps around the current
 * one (its `CHALLENGE_OK_WINDOW`, 300 s, not exported), so a c_nonce is good for at most 300 s.
 */
export const C_NONCE_LIFETIME = 300;
/** oidc-provider's default `clockTolerance` (15 s), which the wallet-facing provider keeps. */
export const PROOF_CLOCK_TOLERANCE = 15;

/**
 * OpenID4VCI 1.0 §8.2.1.1: the key to bind is the proof's `jwk` header (our only binding method). The
 * provider has verified the proof with that key by now (signature, `typ`, `aud`, c_nonce, that `iat` is
 * there), so only its header and `iat` are read here. oidc-provider does not bound `iat`: a proof is
 * refused here when it was made before its c_nonce could have been issued (older than the c_nonce's
 * lifetime plus the clock tolerance), or more than the tolerance in the future.
 */
function holderKeyOf(proof: string | undefined, now = Math.floor(Date.now() / 1000)): JWK {
  if (!proof) throw new errors.InvalidProof('a jwt proof of possession of the holder key is required');
  let header: { jwk?: unknown };
  let iat: unknown;
  try {
    header = decodeProtectedHeader(proof);
    iat = decodeJwt(proof).iat;
  } catch {
    throw new errors.InvalidProof('jwt proof is not a valid JWT');
  }
  if (typeof iat !== 'number' || !Number.isFinite(iat)) throw new errors.InvalidProof('jwt proof iat must be a number');
  if (iat < now - C_NONCE_LIFETIME - PROOF_CLOCK_TOLERANCE)
    throw new errors.InvalidProof('jwt proof iat is too old: sign a new proof with a fresh c_nonce');
  if (iat > now + PROOF_CLOCK_TOLERANCE) throw new errors.InvalidProof('jwt proof iat is in the future');
  const jwk = header.jwk;
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) {
    throw new errors.InvalidProof(
      'jwt proof must carry the holder key in its jwk header (cryptographic binding method jwk)',
    );
  }
  return jwk as JWK;
}
