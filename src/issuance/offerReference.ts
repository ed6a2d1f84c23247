import type { Context, Middleware } from 'koa';
import { credentialOffer } from './offerUri.js';
import { OFFER_ID, type OfferBook } from './offers.js';

/**
 * `GET /<path>/offers/<offer id>`: the Credential Offer a `credential_offer_uri` points at (OpenID4VCI
 * 1.0 §4.1.3), as JSON, built from the offer record; 404 once the offer can no longer be redeemed.
 */
export function offerByReference(path: string, credentialIssuer: string, offers: OfferBook): Middleware {
  const prefix = `/${path}/offers/`;
  async function serve(ctx: Context): Promise<void> {
    const offerId = ctx.path.slice(prefix.length);
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.status = 405;
      ctx.set('Allow', 'GET');
      ctx.body = { error: 'invalid_request', error_description: `${ctx.method} is not allowed here; use GET` };
      return;
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Access-Control-Allow-Origin', '*');
    const offer = OFFER_ID.test(offerId) ? await offers.find(offerId) : undefined;
    if (!offer || Math.floor(Date.now() / 1000) >= offer.redeemBy) {
      ctx.status = 404;
      ctx.body = { error: 'invalid_request', error_description: 'credential_offer_uri: the offer has expired or does not exist' };
      return;
    }
    ctx.body = credentialOffer({
      credentialIssuer,
      credentialConfigurationId: offer.credentialType,
      preAuthorizedCode: offer.preAuthorizedCode,
      pinLength: offer.txCode?.length,
    });
  }
  // not async: a request for another path passes on without a promise of its own
  return function credentialOfferEndpoint(ctx, next) {
    return ctx.path.startsWith(prefix) ? serve(ctx) : next();
  };
}
