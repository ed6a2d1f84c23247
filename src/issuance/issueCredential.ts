import type { JWK } from 'jose';
import { errors, type OpenID4VCIIssueCredential } from 'oidc-provider';
import type { CredentialType } from '../config/schema.js';
import { mdocValidUntil } from '../rules/validity.js';
import type { CredentialFormat, StatusEntry } from '../status/registry.js';
import { batchTimestamps, reissueRefusal, wholeHour } from '../rules/batch.js';
import type { ReissueBook, ReissueRecord } from './reissues.js';
import { deviceKeyOf, holderKeysOf, type VerifiedProofs } from './proofKeys.js';
import { configurationOf, MDOC_FORMAT } from './credentialConfigurations.js';
import type { MdocSigner } from './mdoc.js';
import type { OfferBook, OfferRecord } from './offers.js';
import type { SdJwtVcSigner } from './sdJwtVc.js';
import type { NotificationBook } from './notification.js';

export { C_NONCE_LIFETIME, PROOF_CLOCK_TOLERANCE } from './proofKeys.js';

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
  /** re-issuance (a type's `reissue`): the credentials a refreshed access token may have again */
  reissues?: ReissueBook;
  /** the SerialNumber's status (D18), for re-issuance; undefined when unknown */
  statusOf?(serialNumber: string): Promise<'valid' | 'revoked' | 'suspended' | undefined>;
  /** a batch was re-issued (the audit line; no relying party hears of it) */
  onReissued?: (record: ReissueRecord, issued: IssuedCredential) => void;
  /** why a key attestation with a `status` is refused (src/issuance/attestationStatus.ts), or undefined */
  attestationRefusal?(payload: Record<string, unknown>, what: string): Promise<string | undefined>;
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
    await checkAttestationStatus(deps, proofs as VerifiedProofs);
    const token = accessToken as { jti: string; exp?: number; grantId?: string };
    // an access token of a refresh names no offer: its grant names the credential it re-issues
    if (typeof offerId !== 'string' && deps.reissues && token.grantId)
      return reissue(deps, deps.reissues, credentialConfigurationId, holderKeys, token);
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
    const reissuable = deps.typeOf(offer.credentialType)?.reissue === true && deps.reissues && token.grantId;
    try {
      // written while the credential is made (the same round trip as its status entry); a notification id
      // of a credential that was never issued is never handed out, and expires
      const notifying = deps.notifications?.create(offer, token.jti, token.exp ?? Math.floor(Date.now() / 1000));
      notifying?.catch(() => undefined); // awaited below, once the credential is signed
      signed =
        configuration.format === MDOC_FORMAT
          ? await signMdocs(deps, { ...offer, first: true }, holderKeys)
          : await signSdJwtVcs(deps, { ...offer, first: true }, holderKeys);
      credentials = signed.credentials;
      // kept for re-issuance before the flow ends: a credential its wallet could not refresh is not issued
      if (reissuable)
        await deps.reissues!.remember(token.grantId!, {
          serialNumber: offer.serialNumber,
          credentialType: offer.credentialType,
          configurationId: credentialConfigurationId,
          attributes: offer.attributes,
          credentialExpiresAt: offer.credentialExpiresAt,
          ...(offer.clientId !== undefined ? { clientId: offer.clientId } : {}),
        });
      notificationId = await notifying;
      // in this order: the holder's page must never see the offer done before the claims it finishes with,
      // and the claims only once everything the wallet is sent is ready
      await deps.onIssued?.(offer, { format: signed.format, expiresAt: signed.expiresAt, count: credentials.length });
    } catch (err) {
      // all or nothing: no credential left the service, so none of their entries stays
      if (signed) await signed.release().catch(() => undefined);
      if (reissuable) await deps.reissues!.forget(token.grantId!).catch(() => undefined);
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

/**
 * A fresh batch of a credential issued before (HAIP 1.0 §4, ARF ISSU_42): the access token of a refresh names
 * the grant, whose record holds the credential; the same attributes, SerialNumber, expiry and configuration,
 * each new credential with its own key and status entry (taking on the SerialNumber's status). Refused once the
 * credential has expired or its SerialNumber is revoked or suspended (the token edge refused the refresh then
 * too, but the operator may act in between); one batch per access token, all or nothing.
 */
async function reissue(
  deps: IssueCredentialDeps,
  book: ReissueBook,
  configurationId: string,
  holderKeys: JWK[],
  token: { jti: string; exp?: number; grantId?: string },
): Promise<{ credentials: { credential: string }[] }> {
  const grantId = token.grantId!;
  const record = await book.find(grantId);
  if (!record) throw new errors.CredentialRequestDenied('the credential offer is no longer valid');
  if (record.configurationId !== configurationId)
    throw new errors.CredentialRequestDenied(
      `credential_configuration_id: this grant re-issues ${record.configurationId} only`,
    );
  const refusal = reissueRefusal(record.credentialExpiresAt, await deps.statusOf?.(record.serialNumber));
  if (refusal) throw new errors.CredentialRequestDenied(refusal.replace(/^refresh_token: /, ''));
  const now = Math.floor(Date.now() / 1000);
  if (!(await book.claimToken(grantId, token.jti, (token.exp ?? now) - now)))
    throw new errors.CredentialRequestDenied('this access token has bought its batch: refresh for another');
  let signed: Signed;
  try {
    signed =
      configurationOf(configurationId).format === MDOC_FORMAT
        ? await signMdocs(deps, record, holderKeys)
        : await signSdJwtVcs(deps, record, holderKeys);
  } catch (err) {
    await book.releaseToken(grantId, token.jti).catch(() => undefined);
    throw err;
  }
  deps.onReissued?.(record, { format: signed.format, expiresAt: signed.expiresAt, count: signed.credentials.length });
  return { credentials: signed.credentials.map((credential) => ({ credential })) };
}

/**
 * What a batch is made of: the credential's data, from its offer (`first`: the SerialNumber's first issuance)
 * or, re-issued, from its record.
 */
type Issuance = Pick<OfferRecord, 'serialNumber' | 'credentialType' | 'attributes' | 'credentialExpiresAt'> & {
  first?: boolean;
};

interface Signed {
  format: CredentialFormat;
  expiresAt: number;
  credentials: string[];
  /** takes back their status entries (the issuance did not complete) */
  release(): Promise<void>;
}

/** When the credentials of one issuance are issued and expire: whole hours for a batch type (ISSU_36), else exact. */
function timestampsOf(deps: IssueCredentialDeps, offer: Issuance): { iat: number; exp: number; coarse: boolean } {
  const now = Math.floor(Date.now() / 1000);
  return (deps.batchSizeOf?.(offer.credentialType) ?? 1) > 1
    ? { ...batchTimestamps(now, offer.credentialExpiresAt), coarse: true }
    : { iat: now, exp: offer.credentialExpiresAt, coarse: false };
}

/**
 * The SD-JWT VCs, one per holder key, valid for the type's validity (the offer's ExpiresAt), each naming its
 * own status list entry; their salts are drawn for each (src/issuance/sdJwtVc.ts).
 */
async function signSdJwtVcs(deps: IssueCredentialDeps, offer: Issuance, holderKeys: JWK[]): Promise<Signed> {
  const { iat, exp } = timestampsOf(deps, offer);
  const entries = await deps.statusEntries(offer.serialNumber, exp, holderKeys.length, undefined, offer.first);
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
async function signMdocs(deps: IssueCredentialDeps, offer: Issuance, holderKeys: JWK[]): Promise<Signed> {
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
  const entries = await deps.statusEntries(offer.serialNumber, expiresAt, made.length, digests, offer.first);
  return {
    credentials: made.map((m) => m.credential),
    format: 'mso_mdoc',
    expiresAt,
    release: () => deps.releaseEntries(offer.serialNumber, entries, digests),
  };
}

/**
 * ARF ISSU_21, ISSU_30: a key attestation that names a status list entry (a `jwt` proof's `key_attestation`, or
 * the `attestation` proof) must be valid there; checked once oidc-provider has verified the attestation, before
 * anything is taken or allocated.
 */
async function checkAttestationStatus(deps: IssueCredentialDeps, proofs: VerifiedProofs): Promise<void> {
  const attestation = proofs?.attestation ?? proofs?.key_attestation;
  if (!attestation?.payload || !deps.attestationRefusal) return;
  const what = proofs?.attestation ? 'attestation proof' : 'jwt proof key_attestation';
  const refusal = await deps.attestationRefusal(attestation.payload, what);
  if (refusal) throw new errors.InvalidProof(refusal);
}
