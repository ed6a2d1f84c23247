import type { Context, Middleware } from 'koa';
import { credentialOffer } from './offerUri.js';
import { OFFER_ID, type OfferBook } from './offers.js';
import { router } from '../http/router.js';

/**
 * `GET /<path>/offers/<offer id>`: the Credential Offer a `credential_offer_uri` points at (OpenID4VCI
 * 1.0 §4.1.3), as JSON, built from the offer record; 404 once the offer can no longer be redeemed. It
 * names every configuration of the offer's type (SD-JWT VC, and mso_mdoc where there is one): the wallet
 * picks the one it requests, and gets one credential for the offer.
 */
export function offerByReference(
  path: string,
  credentialIssuer: string,
  offers: OfferBook,
  configurationIds: (credentialType: string) => string[] = (t) => [t],
): Middleware {
  async function serve(ctx: Context, offerId: string): Promise<void> {
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Access-Control-Allow-Origin', '*');
    const offer = OFFER_ID.test(offerId) ? await offers.find(offerId) : undefined;
    if (!offer || Math.floor(Date.now() / 1000) >= offer.redeemBy) {
      ctx.status = 404;
      ctx.body = {
        error: 'invalid_request',
        error_description: 'credential_offer_uri: the offer has expired or does not exist',
      };
      return;
    }
    ctx.body = credentialOffer({
      credentialIssuer,
      credentialConfigurationIds: configurationIds(offer.credentialType),
      preAuthorizedCode: offer.preAuthorizedCode,
      pinLength: offer.pin?.length,
    });
  }
  return router([
    { method: 'GET', path: new RegExp(`^/${path}/offers/(.*)$`), handle: (ctx, [offerId]) => serve(ctx, offerId) },
  ]);
}
