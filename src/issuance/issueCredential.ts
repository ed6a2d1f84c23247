import { decodeProtectedHeader, type JWK } from 'jose';
import { errors, type OpenID4VCIIssueCredential } from 'oidc-provider';
import type { OfferBook } from './offers.js';
import type { SdJwtVcSigner } from './sdJwtVc.js';

export interface IssueCredentialDeps {
  credentialIssuer: string;
  offers: OfferBook;
  signer: SdJwtVcSigner;
  vctOf(credentialType: string): string;
  accessTokenLifetime: number;
  /** after signing, before the offer shows done */
  onIssued?: (offerId: string) => Promise<void>;
}

/**
 * oidc-provider's `features.openid4vci.issueCredential`: by the time it runs, the provider has checked the
 * access token (audience, scope for the configuration), the proof's signature, `typ`, `aud`, `iat` and
 * `c_nonce` (OpenID4VCI 1.0 §8.2). What is left is ours: the offer behind the token, one credential per
 * offer, and the SD-JWT VC itself.
 */
export function issueCredentialFor(deps: IssueCredentialDeps): OpenID4VCIIssueCredential {
  return async (_ctx, { credentialConfigurationId, proofs, accessToken }) => {
    const offerId = accessToken.accountId;
    const holderJwk = holderKeyOf(proofs?.jwt?.[0]);
    // read and claimed in one round trip; a claim that turns out not to issue is released
    const [offer, claimed] = await Promise.all([deps.offers.find(offerId), deps.offers.claimIssuance(offerId, deps.accessTokenLifetime)]);
    if (!offer || offer.credentialType !== credentialConfigurationId || !claimed) {
      if (claimed) await deps.offers.releaseIssuance(offerId);
      throw new errors.CredentialRequestDenied(
        !offer
          ? 'the credential offer is no longer valid'
          : offer.credentialType !== credentialConfigurationId
            ? 'the credential offer is for another credential configuration'
            : 'the credential for this offer has already been issued',
      );
    }

    let credential: string;
    try {
      credential = await deps.signer.sign({
        issuer: deps.credentialIssuer,
        vct: deps.vctOf(offer.credentialType),
        attributes: offer.attributes,
        holderJwk,
        expiresAt: offer.credentialExpiresAt,
      });
    } catch (err) {
      await deps.offers.releaseIssuance(offerId);
      throw err;
    }
    await deps.onIssued?.(offerId);
    await deps.offers.done(offerId);
    return { credentials: [{ credential }] };
  };
}

/** OpenID4VCI 1.0 §8.2.1.1: the key to bind is the proof's `jwk` header (our only binding method). */
function holderKeyOf(proof: string | undefined): JWK {
  if (!proof) throw new errors.InvalidProof('a jwt proof of possession of the holder key is required');
  const { jwk } = decodeProtectedHeader(proof);
  if (!jwk) throw new errors.InvalidProof('jwt proof must carry the holder key in its jwk header (cryptographic binding method jwk)');
  return jwk;
}
