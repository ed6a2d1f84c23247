import type { JWK } from 'jose';
import { decodeProtectedHeader } from 'jose';
import { errors, type OpenID4VCIIssueCredential } from 'oidc-provider';
import type { OfferBook, OfferRecord } from './offers.js';
import type { SdJwtVcSigner } from './sdJwtVc.js';

export interface IssueCredentialDeps {
  credentialIssuer: string;
  offers: OfferBook;
  signer: SdJwtVcSigner;
  vctOf(credentialType: string): string;
  /** after signing, before the offer shows done; when it fails, the wallet gets the error and the offer is put back */
  onIssued?: (offer: OfferRecord) => Promise<void>;
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
    // taken: of concurrent requests, one gets the offer; one that does not issue puts it back
    const offer = typeof offerId === 'string' ? await deps.offers.take(offerId) : undefined;
    if (!offer || offer.credentialType !== credentialConfigurationId) {
      if (offer) await deps.offers.putBack(offer);
      throw new errors.CredentialRequestDenied(
        offer
          ? 'the credential offer is for another credential configuration'
          : typeof offerId === 'string' && (await deps.offers.outcome(offerId))?.status === 'done'
            ? 'the credential for this offer has already been issued'
            : 'the credential offer is no longer valid',
      );
    }

    try {
      const credential = await deps.signer.sign({
        issuer: deps.credentialIssuer,
        vct: deps.vctOf(offer.credentialType),
        attributes: offer.attributes,
        holderJwk,
        expiresAt: offer.credentialExpiresAt,
      });
      // in this order: the holder's page must never see the offer done before the claims it finishes with
      await deps.onIssued?.(offer);
      await deps.offers.done(offer.offerId);
      return { credentials: [{ credential }] };
    } catch (err) {
      await deps.offers.putBack(offer).catch(() => undefined); // the error the wallet gets is the first one
      throw err;
    }
  };
}

/**
 * OpenID4VCI 1.0 §8.2.1.1: the key to bind is the proof's `jwk` header (our only binding method). The
 * provider has verified the proof with that key by now, so only its header is read here.
 */
function holderKeyOf(proof: string | undefined): JWK {
  if (!proof) throw new errors.InvalidProof('a jwt proof of possession of the holder key is required');
  let header: { jwk?: unknown };
  try {
    header = decodeProtectedHeader(proof);
  } catch {
    throw new errors.InvalidProof('jwt proof header is not valid JSON');
  }
  const jwk = header.jwk;
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) {
    throw new errors.InvalidProof('jwt proof must carry the holder key in its jwk header (cryptographic binding method jwk)');
  }
  return jwk as JWK;
}
