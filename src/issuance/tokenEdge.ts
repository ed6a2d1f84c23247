import type { Context, Middleware } from 'koa';
import type { ParsedUrlQuery } from 'node:querystring';
import { appendToForm, BodyError, parseForm, readFormBody, replayBody } from '../http/formBody.js';
import { offerIdOf, ttlOf, type OfferBook, type OfferRecord } from './offers.js';
import { failedMessage, pinMatches, retryDescription, revokedDescription, type PinAttempts } from './pinAttempts.js';
import { PRE_AUTHORIZED_CODE_GRANT } from './offerUri.js';
import { StoreScope } from '../store/requestScope.js';
import type { Store } from '../store/types.js';

export interface TokenEdgeDeps {
  offers: OfferBook;
  pins: PinAttempts;
  walletClientId: string;
  store: Store;
  /** where the provider keeps the record of a pre-authorized code */
  codeKey: (code: string) => string;
  /** where the provider keeps a grant */
  grantKey: (grantId: string) => string;
}

type PinVerdict = 'pass' | 'answered' | 'last-attempt';

/**
 * The edge in front of the wallet token endpoint (OpenID4VCI 1.0 §6). It leaves the protocol to the
 * provider and adds three things:
 * - the wallet client's id when a pre-authorized code request carries no client authentication (§6.1:
 *   `client_id` is optional there; oidc-provider needs one);
 * - D10's PIN attempts: a wrong `tx_code` before the last is answered here and never consumes the code; the
 *   last goes through, so that the provider revokes the code and its grant;
 * - the offer's status for the holder's prompt page.
 */
export function tokenEdge(deps: TokenEdgeDeps): Middleware {
  return async function preAuthorizedCodeEdge(ctx, next) {
    if (ctx.method !== 'POST' || ctx.path !== '/token' || !ctx.is('application/x-www-form-urlencoded') || !ctx.req.readable) {
      return next();
    }

    let body: Buffer;
    try {
      body = await readFormBody(ctx);
    } catch (err) {
      if (err instanceof BodyError) return answer(ctx, 'invalid_request', err.message);
      throw err;
    }
    const params = parseForm(body);
    if (params.grant_type !== PRE_AUTHORIZED_CODE_GRANT) {
      replayBody(ctx, body);
      return next();
    }
    if (!hasClientAuthentication(ctx, params)) body = appendToForm(body, { client_id: deps.walletClientId });
    replayBody(ctx, body);

    // the offer is found by its code's hash; the code's own record, which the provider loads next, is
    // read in the same round trip (src/store/requestScope.ts)
    const code = params['pre-authorized_code'];
    if (typeof code !== 'string' || !code) return next(); // the provider answers: missing, duplicated parameter
    const scope = StoreScope.of(ctx.state);
    scope.read(deps.store, deps.codeKey(code));
    const { offer, wrongPins, redeemed } = await deps.offers.forRedemption(offerIdOf(code));
    if (!offer) return next(); // the provider answers: not found, expired, ...

    const verdict = offer.txCode !== undefined ? await checkPin(ctx, deps, offer, offer.txCode, redeemed, params.tx_code, wrongPins) : 'pass';
    if (verdict === 'answered') return;

    // The grant, which the provider loads right after consuming the code, is read now: it goes out in
    // the pipeline of the provider's consume, ahead of it. So the request that consumes the code finds
    // its grant even when a concurrent replay of the code, arriving just after, revokes it (D16); what
    // that replay revokes cannot be used afterwards (the credential request loads the grant again).
    scope.read(deps.store, deps.grantKey(offer.grantId));
    // the offer shows scanned once the wallet holds an access token: written with the token's record
    scope.alongside('AccessToken', () => deps.offers.scanned(offer));
    await next();

    if (verdict === 'last-attempt' && isOAuthError(ctx.body, 'invalid_grant')) {
      ctx.body = { error: 'invalid_grant', error_description: revokedDescription };
    }
  };
}

async function checkPin(
  ctx: Context,
  deps: TokenEdgeDeps,
  offer: OfferRecord,
  pin: string,
  /** the code was exchanged already */
  redeemed: boolean,
  txCode: ParsedUrlQuery[string],
  /** wrong PINs counted when the offer was read */
  wrongPins: number,
): Promise<PinVerdict> {
  // missing or duplicated tx_code: the provider answers invalid_request before consuming anything
  if (typeof txCode !== 'string' || !txCode) return 'pass';
  // expired or already redeemed: the provider answers invalid_grant (and revokes on replay)
  if (redeemed || Math.floor(Date.now() / 1000) >= offer.redeemBy) return 'pass';

  if (deps.pins.exhausted(wrongPins)) {
    answer(ctx, 'invalid_grant', revokedDescription);
    return 'answered';
  }
  if (pinMatches(pin, txCode)) return 'pass';

  const outcome = await deps.pins.wrong(offer.offerId, ttlOf(offer));
  switch (outcome.kind) {
    case 'retry':
      await deps.offers.pinRetry(offer, outcome.attemptsLeft);
      answer(ctx, 'invalid_grant', retryDescription(outcome.attemptsLeft));
      return 'answered';
    case 'revoke':
      await deps.offers.failed(offer.offerId, failedMessage(deps.pins.limit));
      return 'last-attempt';
    case 'exhausted':
      answer(ctx, 'invalid_grant', revokedDescription);
      return 'answered';
  }
}

/** RFC 6749 §2.3: any client authentication the provider would look at. */
function hasClientAuthentication(ctx: Context, params: ParsedUrlQuery): boolean {
  return (
    params.client_id !== undefined ||
    params.client_assertion !== undefined ||
    ctx.get('authorization') !== '' ||
    ctx.get('oauth-client-attestation') !== ''
  );
}

function isOAuthError(body: unknown, error: string): boolean {
  return typeof body === 'object' && body !== null && (body as { error?: unknown }).error === error;
}

/** RFC 6749 §5.2 error response, uncacheable like every token response. */
function answer(ctx: Context, error: string, description: string): void {
  ctx.status = 400;
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Pragma', 'no-cache');
  ctx.body = { error, error_description: description };
}
