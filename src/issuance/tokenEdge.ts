import type { Context, Middleware } from 'koa';
import { readForm } from '../http/form.js';
import { sendError } from '../http/respond.js';
import { ProtocolError } from '../rules/errors.js';
import type { Store } from '../store/types.js';
import { offerIdOf, ttlOf, type OfferBook, type OfferRecord } from './offers.js';
import { failedMessage, pinMatches, retryDescription, revokedDescription, type PinAttempts } from './pinAttempts.js';
import { PRE_AUTHORIZED_CODE_GRANT } from './offerUri.js';

export interface TokenEdgeDeps {
  offers: OfferBook;
  pins: PinAttempts;
  store: Store;
  walletClientId: string;
}

/** Token requests carry a code and a PIN: a few hundred bytes. */
const TOKEN_FORM_LIMIT = 64 * 1024;

type PinVerdict = 'pass' | 'answered' | 'last-attempt';

const redeemingKey = (offerId: string) => `wallet:{${offerId}}:redeeming`;

/**
 * The edge in front of the wallet token endpoint (OpenID4VCI 1.0 §6). It leaves the protocol to the
 * provider and adds:
 * - the wallet client's id when a pre-authorized code request carries no client authentication (§6.1:
 *   `client_id` is optional there; oidc-provider needs one);
 * - D10's PIN attempts: a wrong `tx_code` before the last is answered here and never consumes the code; the
 *   last goes through, so that the provider revokes the code and its grant;
 * - one redemption of a code at a time (D14: of concurrent redemptions, one winner). oidc-provider
 *   consumes the code before it loads the grant, and a concurrent replay that finds the code consumed
 *   revokes the grant (D16), which could fail the first redemption too; the others are refused here;
 * - the offer's status for the holder's prompt page.
 */
export function tokenEdge(deps: TokenEdgeDeps): Middleware {
  async function preAuthorizedCode(ctx: Context, next: () => Promise<void>): Promise<void> {
    const params = await readForm(ctx, TOKEN_FORM_LIMIT);
    if (params.grant_type !== PRE_AUTHORIZED_CODE_GRANT) return next();
    if (!hasClientAuthentication(ctx, params)) params.client_id = deps.walletClientId;

    const code = params['pre-authorized_code'];
    if (!code) return next(); // the provider answers: missing parameter
    const offerId = offerIdOf(code);
    const { offer, wrongPins, redeemed } = await deps.offers.forRedemption(offerId);
    if (!offer) return next(); // the provider answers: not found, expired, ...

    const verdict = offer.txCode !== undefined ? await checkPin(ctx, deps, offer, offer.txCode, redeemed, params.tx_code, wrongPins) : 'pass';
    if (verdict === 'answered') return;

    if (!(await deps.store.setIfAbsent(redeemingKey(offerId), 1, ttlOf(offer)))) {
      return answer(ctx, 'invalid_grant', 'pre-authorized_code is being redeemed by another request');
    }
    try {
      await next();
    } finally {
      await deps.store.delete(redeemingKey(offerId));
    }
    if (ctx.status === 200) await deps.offers.scanned(offer);
    if (verdict === 'last-attempt' && isOAuthError(ctx.body, 'invalid_grant')) {
      ctx.body = { error: 'invalid_grant', error_description: revokedDescription };
    }
  }

  return async function walletTokenEdge(ctx, next) {
    if (ctx.method !== 'POST' || ctx.path !== '/token' || !ctx.is('application/x-www-form-urlencoded')) return next();
    try {
      await preAuthorizedCode(ctx, next);
    } catch (err) {
      if (err instanceof ProtocolError) return sendError(ctx, err);
      throw err;
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
  txCode: string | undefined,
  /** wrong PINs counted when the offer was read */
  wrongPins: number,
): Promise<PinVerdict> {
  // missing tx_code: the provider answers invalid_request before consuming anything
  if (!txCode) return 'pass';
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
function hasClientAuthentication(ctx: Context, params: Record<string, string>): boolean {
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
function answer(ctx: Context, error: 'invalid_grant', description: string): void {
  sendError(ctx, new ProtocolError(error, description));
}
