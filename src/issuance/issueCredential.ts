import type { JWK } from 'jose';
import { errors, type OpenID4VCIIssueCredential } from 'oidc-provider';
import { offerOfAccount, type OfferBook, type OfferRecord } from './offers.js';
import type { Store } from '../store/types.js';
import type { SdJwtVcSigner } from './sdJwtVc.js';
import { StoreScope } from '../store/requestScope.js';

export interface IssueCredentialDeps {
  credentialIssuer: string;
  offers: OfferBook;
  signer: SdJwtVcSigner;
  vctOf(credentialType: string): string;
  /** after signing, before the offer shows done; when it fails, the wallet gets the error and the offer is put back */
  onIssued?: (offer: OfferRecord) => Promise<void>;
  store: Store;
  /** the store key of the record `onIssued` reads first for a step: read in the round trip that takes the offer */
  stepRecordKey?: (stepId: string) => string | undefined;
}

/**
 * oidc-provider's `features.openid4vci.issueCredential`: by the time it runs, the provider has checked the
 * access token (audience, scope for the configuration), the proof's signature, `typ`, `aud`, `iat` and
 * `c_nonce` (OpenID4VCI 1.0 §8.2). What is left is ours: the offer behind the token, one credential per
 * offer, and the SD-JWT VC itself.
 */
export function issueCredentialFor(deps: IssueCredentialDeps): OpenID4VCIIssueCredential {
  return async (ctx, { credentialConfigurationId, proofs, accessToken }) => {
    const { offerId, stepId } = offerOfAccount(accessToken.accountId);
    const holderJwk = holderKeyOf(proofs?.jwt?.[0]);
    const scope = StoreScope.of(ctx.state);
    // the step's record, which `onIssued` reads, comes in the round trip that takes the offer
    const stepKey = stepId ? deps.stepRecordKey?.(stepId) : undefined;
    if (stepKey) scope.read(deps.store, stepKey);
    // taken: of concurrent requests, one gets the offer; one that does not issue puts it back
    const offer = await deps.offers.take(offerId);
    if (!offer || offer.credentialType !== credentialConfigurationId) {
      if (offer) await deps.offers.putBack(offer);
      throw new errors.CredentialRequestDenied(
        offer
          ? 'the credential offer is for another credential configuration'
          : (await deps.offers.outcome(offerId))?.status === 'done'
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
      // in this order: the holder's page and continue step must never see the offer done before the
      // authorisation it finishes (its status reads the interaction's result first). The outcome goes
      // out right after the interaction that `onIssued` saves, in its round trip (Redis applies
      // commands in the order they are sent), or by itself when `onIssued` saved none.
      scope.alongside('Interaction', () => deps.offers.done(offerId));
      let unsent: (() => Promise<unknown>) | undefined;
      try {
        await deps.onIssued?.(offer);
      } finally {
        unsent = scope.takeAlongside('Interaction');
      }
      await unsent?.();
      return { credentials: [{ credential }] };
    } catch (err) {
      await deps.offers.putBack(offer).catch(() => undefined); // the error the wallet gets is the first one
      throw err;
    }
  };
}

/**
 * OpenID4VCI 1.0 §8.2.1.1: the key to bind is the proof's `jwk` header (our only binding method). The
 * provider has verified the proof with that key by now, so only its header is read here, with Node's
 * own base64url decoder (jose's decodes through `atob`, several times the CPU on Node 20).
 */
function holderKeyOf(proof: string | undefined): JWK {
  if (!proof) throw new errors.InvalidProof('a jwt proof of possession of the holder key is required');
  let header: unknown;
  try {
    header = JSON.parse(Buffer.from(proof.split('.', 1)[0], 'base64url').toString('utf8'));
  } catch {
    throw new errors.InvalidProof('jwt proof header is not valid JSON');
  }
  const jwk = (header as { jwk?: unknown } | null)?.jwk;
  if (typeof jwk !== 'object' || jwk === null || Array.isArray(jwk)) {
    throw new errors.InvalidProof('jwt proof must carry the holder key in its jwk header (cryptographic binding method jwk)');
  }
  return jwk as JWK;
}
