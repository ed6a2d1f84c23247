import type Provider from 'oidc-provider';
import type { Store } from '../store/types.js';
import { mintedCodeKey as mintedKey, ttlOf, type OfferRecord } from './offers.js';
import { REISSUE_UNTIL } from './refreshTokens.js';

/** The provider's code and grant minted for an offer, and for which client. */
interface MintedCode {
  clientId: string;
  code: string;
  grantId: string;
}

/**
 * The provider's pre-authorized code for the offer, for `clientId`, as oidc-provider documents minting one
 * (features.openid4vci.preAuthorizedCodeGrant): a Grant for the client with the type's scope on the issuer
 * resource, then a PreAuthorizedCode with the same resource and scope. Kept once it bought a token (the
 * token edge discards a fresh one that did not): later redemptions by the same client get the same code
 * (the provider refuses a used one, and revokes what it issued), by another client none. The code carries
 * no `txCode`: the provider would keep the PIN as it is, so the token edge checks the wallet's `tx_code`
 * against the offer's hash instead. The token edge lets one redemption of an offer run at a time.
 */
export async function codeFor(
  provider: Provider,
  store: Store,
  credentialIssuer: string,
  scope: string,
  offer: OfferRecord,
  clientId: string,
  reissueUntil?: number,
): Promise<{ code: string; fresh: boolean } | undefined> {
  // minted first and then claimed (`setIfAbsent`): a first redemption, the common case, reads nothing
  const grant = new provider.Grant({ accountId: offer.stepId, clientId });
  grant.addResourceScope(credentialIssuer, scope);
  // a re-issuable credential's grant lives as long as the credential: its refresh tokens name it (ttl.Grant)
  if (reissueUntil !== undefined) Object.assign(grant, { [REISSUE_UNTIL]: reissueUntil });
  // ttl.Grant: an access token's lifetime and a little. The grant's id is drawn as its save starts, so
  // the code naming it is written in the same round trip
  const savingGrant = grant.save();
  const preAuthorizedCode = new provider.PreAuthorizedCode({
    accountId: offer.stepId,
    clientId,
    grantId: grant.jti ?? (await savingGrant),
    scope,
    resource: credentialIssuer,
  });
  const [grantId, code] = await Promise.all([savingGrant, preAuthorizedCode.save()]);
  if (await store.setIfAbsent(mintedKey(offer.offerId), { clientId, code, grantId } satisfies MintedCode, ttlOf(offer)))
    return { code, fresh: true };
  // a code bought a token before (this is a replay, or another client): ours goes, that one answers
  await Promise.all([preAuthorizedCode.destroy(), grant.destroy()]);
  const minted = await store.get<MintedCode>(mintedKey(offer.offerId));
  return minted?.clientId === clientId ? { code: minted.code, fresh: false } : undefined;
}

/** A code and grant minted for the offer can no longer be redeemed (the PIN attempts are used up, or the redemption failed). */
export async function revokeOffer(provider: Provider, store: Store, offer: OfferRecord): Promise<void> {
  const minted = await store.consume<MintedCode>(mintedKey(offer.offerId));
  if (!minted) return;
  const [code, grant] = await Promise.all([
    provider.PreAuthorizedCode.find(minted.code),
    provider.Grant.find(minted.grantId),
  ]);
  await Promise.all([code?.destroy(), grant?.destroy()]);
}
