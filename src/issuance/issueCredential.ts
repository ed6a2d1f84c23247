import type { JWK } from 'jose';
import { calculateJwkThumbprint, decodeJwt, decodeProtectedHeader } from 'jose';
import { errors, type OpenID4VCIIssueCredential } from 'oidc-provider';
import type { CredentialType } from '../config/schema.js';
import { mdocValidUntil } from '../rules/validity.js';
import type { CredentialFormat, StatusEntry } from '../status/registry.js';
import { batchTimestamps, duplicateKey, wholeHour } from '../rules/batch.js';
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
  /** the most credentials one request for the type may buy (src/rules/batch.ts); 1 when absent */
  batchSizeOf?(credentialType: string): number;
  /**
   * The status list entries of one issuance's credentials, one each, all under its SerialNumber (D18). mdocs
   * cannot carry theirs: `mdocDigests` (one per entry) are their MSO digests, by which this service's verifier
   * finds them (src/status/registry.ts `allocateMany`).
   */
  statusEntries(
    serialNumber: string,
    exp: number,
    count: number,
    mdocDigests?: string[],
    first?: boolean,
  ): Promise<{ listId: string; idx: number; uri: string }[]>;
  /** takes back the entries of an issuance that did not complete (all or nothing) */
  releaseEntries(serialNumber: string, entries: StatusEntry[], mdocDigests?: string[]): Promise<void>;
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
  /** how many credentials (one per key the wallet proved: a batch) */
  count: number;
}

/** The access token's claim that names the offer it was issued for (src/issuance/walletProvider.ts, `extraTokenClaims`). */
export const OFFER_CLAIM = 'offer';

/** The proofs oidc-provider verified: `jwt` proofs, or one key attestation (`attestation`) whose attested keys are the batch's. */
type VerifiedProofs = { jwt?: string[]; attestation?: { attestedKeys?: unknown[] } } | undefined;

/**
 * oidc-provider's `features.openid4vci.issueCredential`: by the time it runs, the provider has checked the
 * access token (audience, scope for the configuration), each proof's signature, `typ`, `aud`, `iat` and
 * `c_nonce` (OpenID4VCI 1.0 §8.2), and that there are no more than the issuer's `batch_size`. What is left is
 * ours: the type's own batch size, one key per credential, the offer behind the token, one issuance per
 * offer, and the credentials themselves: one per key, each with its own status entry, salts and signature,
 * all or nothing.
 */
export function issueCredentialFor(deps: IssueCredentialDeps): OpenID4VCIIssueCredential {
  return async (_ctx, { credentialConfigurationId, proofs, accessToken }) => {
    const offerId = (accessToken as { extra?: Record<string, unknown> }).extra?.[OFFER_CLAIM];
    // an offer names each configuration of its type (src/issuance/offerUri.ts); the wallet picks one
    const configuration = configurationOf(credentialConfigurationId);
    const holderKeys = await holderKeysOf(
      proofs as VerifiedProofs,
      deps.batchSizeOf?.(configuration.typeName) ?? 1,
      credentialConfigurationId,
    );
    if (configuration.format === MDOC_FORMAT) holderKeys.forEach((jwk, i) => deviceKeyOf(jwk, i, holderKeys));
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

    let credentials: string[];
    let notificationId: string | undefined;
    let signed: Signed | undefined;
    try {
      const token = accessToken as { jti: string; exp?: number };
      // written while the credential is made (the same round trip as its status entry); a notification id
      // of a credential that was never issued is never handed out, and expires
      const notifying = deps.notifications?.create(offer, token.jti, token.exp ?? Math.floor(Date.now() / 1000));
      notifying?.catch(() => undefined); // awaited below, once the credential is signed
      signed =
        configuration.format === MDOC_FORMAT
          ? await signMdocs(deps, offer, holderKeys)
          : await signSdJwtVcs(deps, offer, holderKeys);
      credentials = signed.credentials;
      notificationId = await notifying;
      // in this order: the holder's page must never see the offer done before the claims it finishes with,
      // and the claims only once everything the wallet is sent is ready
      await deps.onIssued?.(offer, { format: signed.format, expiresAt: signed.expiresAt, count: credentials.length });
    } catch (err) {
      // all or nothing: no credential left the service, so none of their entries stays
      if (signed) await signed.release().catch(() => undefined);
      await deps.offers.putBack(offer).catch(() => undefined); // the error the wallet gets is the first one
      throw err;
    }
    // The flow has its outcome (the holder's browser finishes with it): the credentials go to the wallet.
    // What follows only tidies up and shows the offer done; its failure does not take them back
    // (the offer is taken: no other request issues it), and what it removes expires on its own.
    deps.offers.forgetRedemption(offer.offerId).catch(() => undefined);
    await deps.offers.done(offer.offerId).catch(() => undefined);
    return {
      credentials: credentials.map((credential) => ({ credential })),
      ...(notificationId ? { notification_id: notificationId } : {}),
    };
  };
}

interface Signed {
  format: CredentialFormat;
  expiresAt: number;
  credentials: string[];
  /** takes back their status entries (the issuance did not complete) */
  release(): Promise<void>;
}

/** When the credentials of one issuance are issued and expire: whole hours for a batch type (ISSU_36), else exact. */
function timestampsOf(deps: IssueCredentialDeps, offer: OfferRecord): { iat: number; exp: number; coarse: boolean } {
  const now = Math.floor(Date.now() / 1000);
  return (deps.batchSizeOf?.(offer.credentialType) ?? 1) > 1
    ? { ...batchTimestamps(now, offer.credentialExpiresAt), coarse: true }
    : { iat: now, exp: offer.credentialExpiresAt, coarse: false };
}

/**
 * The SD-JWT VCs, one per holder key, valid for the type's validity (the offer's ExpiresAt), each naming its
 * own status list entry; their salts are drawn for each (src/issuance/sdJwtVc.ts).
 */
async function signSdJwtVcs(deps: IssueCredentialDeps, offer: OfferRecord, holderKeys: JWK[]): Promise<Signed> {
  const { iat, exp } = timestampsOf(deps, offer);
  const entries = await deps.statusEntries(offer.serialNumber, exp, holderKeys.length, undefined, true);
  const release = () => deps.releaseEntries(offer.serialNumber, entries);
  try {
    const credentials = await Promise.all(
      holderKeys.map((holderJwk, i) =>
        deps.signer.sign({
          issuer: deps.credentialIssuer,
          vct: deps.vctOf(offer.credentialType),
          attributes: offer.attributes,
          holderJwk,
          issuedAt: iat,
          expiresAt: exp,
          status: { idx: entries[i].idx, uri: entries[i].uri },
        }),
      ),
    );
    return { credentials, format: 'dc+sd-jwt', expiresAt: exp, release };
  } catch (err) {
    await release().catch(() => undefined);
    throw err;
  }
}

/**
 * The mdocs carry no status: neither @owf/mdoc nor @auth0/mdl writes or reads one in the MSO (ISO/IEC
 * 18013-5 second edition). So they are short-lived (ARF Annex 2 VCR_01): valid a day at most, unless the
 * operator chose longer for the type (`mdoc.irrevocableValidity`), never beyond the type's validity. One MSO
 * per device key; each one's status entry is recorded by its MSO's digest, for this service's verifier.
 */
async function signMdocs(deps: IssueCredentialDeps, offer: OfferRecord, holderKeys: JWK[]): Promise<Signed> {
  const type = deps.typeOf(offer.credentialType);
  if (!deps.mdoc || !type?.mdoc)
    throw new errors.UnknownCredentialConfiguration('this credential type is not issued as mso_mdoc');
  const mdoc = type.mdoc;
  const signer = deps.mdoc;
  // whole seconds: the MSO's tdates and the ID token's ExpiresAt say the same instant; whole hours for a batch
  const { iat, exp, coarse } = timestampsOf(deps, offer);
  const issuedAt = new Date(iat * 1000);
  let validUntil = mdocValidUntil(mdoc.irrevocableValidity, issuedAt, new Date(exp * 1000));
  if (coarse) validUntil = new Date(wholeHour(validUntil.getTime() / 1000) * 1000);
  const made = await Promise.all(
    holderKeys.map((deviceJwk) =>
      signer.sign({
        doctype: mdoc.doctype,
        namespace: mdoc.namespace,
        attributes: offer.attributes,
        spec: type.attributes,
        deviceJwk,
        signedAt: issuedAt,
        validFrom: issuedAt,
        validUntil,
      }),
    ),
  );
  const expiresAt = Math.floor(validUntil.getTime() / 1000);
  const digests = made.map((m) => m.msoDigest);
  const entries = await deps.statusEntries(offer.serialNumber, expiresAt, made.length, digests, true);
  return {
    credentials: made.map((m) => m.credential),
    format: 'mso_mdoc',
    expiresAt,
    release: () => deps.releaseEntries(offer.serialNumber, entries, digests),
  };
}

/**
 * An mdoc's device key (ISO/IEC 18013-5 §9.1.3.6): a P-256 key, which HAIP 1.0 requires wallets to sign
 * device authentication with (ES256); the mdoc configuration takes ES256 proofs only.
 */
function deviceKeyOf(jwk: JWK, at: number, keys: JWK[]): JWK {
  if (jwk.kty !== 'EC' || jwk.crv !== 'P-256' || typeof jwk.x !== 'string' || typeof jwk.y !== 'string') {
    throw new errors.InvalidProof(
      `${keys.length > 1 ? `key ${at} of the request: ` : ''}jwt proof jwk must be an EC P-256 key for mso_mdoc (the mdoc's device key), not ${String(jwk.kty)} ${String(jwk.crv)}`,
    );
  }
  return jwk;
}

/**
 * The keys to bind, one credential each (§8.2, Appendix F.3): each `jwt` proof's key, or the `attested_keys` of a
 * key attestation sent alone as the proof (`attestation`). All or nothing: more keys than the type's batch size,
 * or two proofs of one key (each credential needs its own key: ISSU_35), refuse the whole request.
 */
async function holderKeysOf(proofs: VerifiedProofs, batchSize: number, configurationId: string): Promise<JWK[]> {
  const attested = proofs?.attestation?.attestedKeys;
  const keys = attested
    ? (attested as JWK[])
    : (proofs?.jwt ?? []).map((proof, i, all) => holderKeyOf(proof, all.length > 1 ? `proofs.jwt[${i}]: ` : ''));
  if (keys.length === 0) throw new errors.InvalidProof('a jwt proof of possession of the holder key is required');
  const where = attested ? 'attestation proof attested_keys' : 'proofs.jwt';
  if (keys.length > batchSize)
    throw new errors.InvalidProof(
      batchSize > 1
        ? `${where} names ${keys.length} keys: at most ${batchSize} for ${configurationId} (its batch_size)`
        : `${where} names ${keys.length} keys: ${configurationId} is issued one credential per request`,
    );
  const twice = duplicateKey(await Promise.all(keys.map((k) => calculateJwkThumbprint(k))));
  if (twice)
    throw new errors.InvalidProof(
      `${where}[${twice.at}] is the key of ${where}[${twice.first}]: each credential needs its own key`,
    );
  return keys;
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
function holderKeyOf(proof: string | undefined, at = '', now = Math.floor(Date.now() / 1000)): JWK {
  if (!proof) throw new errors.InvalidProof('a jwt proof of possession of the holder key is required');
  let header: { jwk?: unknown };
  let iat: unknown;
  try {
    header = decodeProtectedHeader(proof);
    iat = decodeJwt(proof).iat;
  } catch {
    throw new errors.InvalidProof(`${at}jwt proof is not a valid JWT`);
  }
  if (typeof iat !== 'number' || !Number.isFinite(iat))
    throw new errors.InvalidProof(`${at}jwt proof iat must be a number`);
  if (iat < now - C_NONCE_LIFETIME - PROOF_CLOCK_TOLERANCE)
    throw new errors.InvalidProof(`${at}jwt proof iat is too old: sign a new proof with a fresh c_nonce`);
  if (iat > now + PROOF_CLOCK_TOLERANCE) throw new errors.InvalidProof(`${at}jwt proof iat is in the future`);
  const jwk = header.jwk;
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) {
    throw new errors.InvalidProof(
      `${at}jwt proof must carry the holder key in its jwk header (cryptographic binding method jwk)`,
    );
  }
  return jwk as JWK;
}
