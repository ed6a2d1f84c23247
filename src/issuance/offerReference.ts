import { randomBytes } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import type { Store } from '../store/types.js';
import type { CredentialOffer } from './offerUri.js';

const referenceKey = (reference: string) => `wallet:offer-ref:${reference}`;

/** Keeps an offer under an unguessable reference for as long as the offer lives. */
export async function storeOfferReference(store: Store, offer: CredentialOffer, lifetime: number): Promise<string> {
  const reference = randomBytes(24).toString('base64url');
  await store.set(referenceKey(reference), offer, lifetime);
  return reference;
}

/**
 * `GET /<path>/offers/<reference>`: the Credential Offer a `credential_offer_uri` points at (OpenID4VCI
 * 1.0 §4.1.3), as JSON; 404 once the offer has expired.
 */
export function offerByReference(path: string, store: Store): Middleware {
  const prefix = `/${path}/offers/`;
  async function serve(ctx: Context): Promise<void> {
    const reference = ctx.path.slice(prefix.length);
    if (ctx.method !== 'GET' && ctx.method !== 'HEAD') {
      ctx.status = 405;
      ctx.set('Allow', 'GET');
      ctx.body = { error: 'invalid_request', error_description: `${ctx.method} is not allowed here; use GET` };
      return;
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.set('Access-Control-Allow-Origin', '*');
    const offer = /^[A-Za-z0-9_-]{32}$/.test(reference) ? await store.get<CredentialOffer>(referenceKey(reference)) : undefined;
    if (!offer) {
      ctx.status = 404;
      ctx.body = { error: 'invalid_request', error_description: 'credential_offer_uri: the offer has expired or does not exist' };
      return;
    }
    ctx.body = offer;
  }
  // not async: a request for another path passes on without a promise of its own
  return function credentialOfferEndpoint(ctx, next) {
    return ctx.path.startsWith(prefix) ? serve(ctx) : next();
  };
}
