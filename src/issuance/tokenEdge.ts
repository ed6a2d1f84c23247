import type { Context, Middleware } from 'koa';
import { decodeJwt } from 'jose';
import { readForm } from '../http/form.js';
import { sendError } from '../http/respond.js';
import { ProtocolError } from '../rules/errors.js';
import { offerIdOf, ttlOf, type OfferBook, type OfferRecord } from './offers.js';
import { failedMessage, retryDescription, revokedDescription, type PinAttempts } from './pinAttempts.js';
import type { PinHasher } from '../rules/pinHash.js';
import { ENGLISH } from '../i18n/catalogues.js';
import { PRE_AUTHORIZED_CODE_GRANT } from './offerUri.js';
import type { RateLimits } from '../http/rateLimits.js';
import { hasClientAuthentication, refresh, refreshTokenUntil, type ReissueEdgeDeps } from './refreshEdge.js';

export { reissueUntil, type ReissueEdgeDeps } from './refreshEdge.js';

export interface TokenEdgeDeps {
  offers: OfferBook;
  pins: PinAttempts;
  pinHasher: PinHasher;
  walletClientId: string;
  /** discards the provider's code and grant minted for the offer, if any (the PIN attempts are used up, or the redemption failed) */
  revoke(offer: OfferRecord): Promise<void>;
  /** told when an offer fails for good (its PIN attempts used up) */
  onFailed?: (offer: OfferRecord, message: string) => Promise<void>;
  /**
   * The provider's pre-authorized code for the offer, minted for the client that redeems it (the anonymous
   * wallet client, or the client an attestation names) the first time (`fresh`), the same one after;
   * undefined when the offer was redeemed by another client.
   */
  codeFor(offer: OfferRecord, clientId: string): Promise<{ code: string; fresh: boolean } | undefined>;
  /** walletAttestation.required: a token request without a wallet attestation is refused */
  attestationRequired: boolean;
  /**
   * `walletToken`: every token request consumes its address's budget and, once the offer it names is found,
   * the budget of the offer's relying party (`clientId`), before a PIN is looked at. The wallet itself is
   * anonymous: the client is the relying party whose flow it is.
   */
  rateLimits?: RateLimits;
  /** re-issuance, when a type has `reissue` (src/issuance/reissues.ts) */
  reissue?: ReissueEdgeDeps;
}

/** Where the edge leaves the id of the offer being redeemed, for the access token (`redeemedOffer`). */
const OFFER_STATE = 'walletOffer';
/** The offer the token request being answered redeems (the provider's `extraTokenClaims` runs within it). */
export function redeemedOffer(ctx: { state?: Record<string, unknown> } | undefined): string | undefined {
  const offerId = ctx?.state?.[OFFER_STATE];
  return typeof offerId === 'string' ? offerId : undefined;
}

/** Token requests carry a code and a PIN: a few hundred bytes. */
const TOKEN_FORM_LIMIT = 64 * 1024;

/** Refused by the edge itself, so that oidc-provider does not take it for a replay. */
export const RACE_LOST = 'pre-authorized_code is being or was just redeemed by a concurrent request';

/**
 * The edge in front of the wallet token endpoint (OpenID4VCI 1.0 §6). It leaves the protocol to the
 * provider and adds:
 * - the wallet client's id when a pre-authorized code request carries no client authentication (§6.1:
 *   `client_id` is optional there; oidc-provider needs one);
 * - the provider's pre-authorized code, minted when the offer is first redeemed, for the client that redeems
 *   it: offers go out before anyone knows which wallet will take them, and a code belongs to one client;
 *   the offer's own code (the one in the Credential Offer) only finds the offer;
 * - walletAttestation.required: no token without a wallet attestation;
 * - D10's PIN: the offer keeps only a salted hash of it and the provider's code none, so `tx_code` is
 *   checked here and not passed on. Each attempt is decided atomically in the store: a wrong one before
 *   the last is answered with the attempts left and never consumes the code; the last revokes the offer,
 *   its code and its grant; after it every PIN is refused, the right one too;
 * - one redemption of a code at a time, and one usable winner (D14). oidc-provider consumes the code
 *   before it loads the grant, and a request that finds the code consumed revokes the grant (D16), the
 *   winner's too. A request that finds the redemption claimed, or won less than `RACE_WINDOW_SECONDS`
 *   ago, lost a race: it is refused here and never reaches the provider. A later one is a replay: the
 *   provider refuses it and revokes what the code issued (RFC 6749 §4.1.2);
 * - the offer's status for the holder's prompt page.
 */
export function tokenEdge(deps: TokenEdgeDeps): Middleware {
  return async function walletTokenEdge(ctx, next) {
    if (ctx.method !== 'POST' || ctx.path !== '/token') return next();
    if (!ctx.is('application/x-www-form-urlencoded')) {
      await deps.rateLimits?.consume('walletToken', { address: ctx.ip });
      return next();
    }
    try {
      await preAuthorizedCode(ctx, next, deps);
    } catch (err) {
      if (err instanceof ProtocolError) return sendError(ctx, err);
      throw err;
    }
  };
}

/** A form-encoded token request: the budgets, then, for a pre-authorized code, the offer's checks and its redemption. */
async function preAuthorizedCode(ctx: Context, next: () => Promise<void>, deps: TokenEdgeDeps): Promise<void> {
  const params = await readTokenForm(ctx, deps);
  const preAuthorized = params.grant_type === PRE_AUTHORIZED_CODE_GRANT;
  const attestation = ctx.get('oauth-client-attestation');
  const unattested = preAuthorized && deps.attestationRequired && !attestation;
  const code = preAuthorized ? params['pre-authorized_code'] : undefined;
  const offerId = code && !unattested ? offerIdOf(code) : undefined;
  // the offer is read first, so that the budgets of its relying party and of the address are consumed
  // together (one round trip) before anything is decided, a PIN attempt least of all
  const found = offerId ? await deps.offers.forRedemption(offerId) : undefined;
  if (params.grant_type === 'refresh_token' && deps.reissue)
    return refresh(
      ctx,
      next,
      { ...deps.reissue, rateLimits: deps.rateLimits, walletClientId: deps.walletClientId },
      params,
    );
  await deps.rateLimits?.consume('walletToken', { client: found?.offer?.clientId, address: ctx.ip });
  if (!preAuthorized) return next();
  if (unattested) {
    // as the provider answers a failed client authentication: 401 invalid_client
    return sendError(
      ctx,
      new ProtocolError(
        'invalid_client',
        'OAuth-Client-Attestation is required: this issuer accepts wallets attested by a trusted wallet provider',
        401,
      ),
    );
  }
  if (!hasClientAuthentication(ctx, params)) params.client_id = deps.walletClientId;

  if (!offerId || !found) return next(); // the provider answers: missing parameter
  const { offer, redeemed, failed } = found;
  if (!offer && failed) return answer(ctx, 'invalid_grant', revokedDescription);
  if (!offer) return next(); // the provider answers: not found
  if (Math.floor(Date.now() / 1000) >= offer.redeemBy)
    return answer(ctx, 'invalid_grant', 'pre-authorized_code is expired');

  if (offer.pin && !(await pinPasses(ctx, deps, offer, { redeemed, failures: found.pinFailures }, params))) return;
  await redeem(ctx, next, deps, offer, params, attestation);
}

/** The token request's form; one that cannot be read still consumes its address's budget. */
async function readTokenForm(ctx: Context, deps: TokenEdgeDeps): Promise<Record<string, string>> {
  try {
    return await readForm(ctx, TOKEN_FORM_LIMIT);
  } catch (err) {
    await deps.rateLimits?.consume('walletToken', { address: ctx.ip }); // over the budget, the 429 is the answer
    throw err;
  }
}

/**
 * Claims the offer's redemption, swaps in the provider's code for the redeeming client and lets the provider
 * answer; a redemption that bought no token is released.
 */
async function redeem(
  ctx: Context,
  next: () => Promise<void>,
  deps: TokenEdgeDeps,
  offer: OfferRecord,
  params: Record<string, string>,
  attestation: string,
): Promise<void> {
  // one request at a time has the provider redeem the code; the claim outlasts a win by the race window
  if (!(await deps.offers.claimRedemption(offer))) return answer(ctx, 'invalid_grant', RACE_LOST);
  // a code minted for this request that bought no token is discarded: a request whose client does not
  // authenticate (a forged attestation, say) must not tie the offer to its client
  let fresh = false;
  try {
    // the client the provider will authenticate: the one named, else the attestation's subject
    const clientId = params.client_id ?? subjectOf(attestation);
    if (clientId !== undefined) {
      const minted = await deps.codeFor(offer, clientId);
      if (!minted) {
        await deps.offers.releaseRedemption(offer.offerId);
        return answer(ctx, 'invalid_grant', 'pre-authorized_code was redeemed by another client');
      }
      fresh = minted.fresh;
      params['pre-authorized_code'] = minted.code;
    }
    ctx.state[OFFER_STATE] = offer.offerId;
    if (deps.reissue?.reissuable(offer.credentialType)) refreshTokenUntil(ctx, offer.credentialExpiresAt);
    await next();
  } catch (err) {
    await release(deps, offer, fresh);
    throw err;
  }
  // the wallet has its token: showing the offer scanned must not fail the answer (a claim left 'redeeming'
  // only refuses later redemptions of a code the provider has consumed anyway)
  if (ctx.status === 200) return deps.offers.redeemed(offer).catch(() => undefined);
  await release(deps, offer, fresh);
}

/**
 * The claimed redemption bought no token (a DPoP nonce or attestation challenge was missing, say): the
 * code may be redeemed again. A code minted for it goes first, so that the next claim cannot find it.
 */
async function release(deps: TokenEdgeDeps, offer: OfferRecord, fresh: boolean): Promise<void> {
  if (fresh) await deps.revoke(offer);
  await deps.offers.releaseRedemption(offer.offerId);
}

/** Checks the wallet's `tx_code` against the offer's PIN; false when the request has been answered. */
async function pinPasses(
  ctx: Context,
  deps: TokenEdgeDeps,
  offer: OfferRecord,
  { redeemed, failures }: { redeemed: boolean; failures: number },
  params: Record<string, string>,
): Promise<boolean> {
  const txCode = params.tx_code;
  // OpenID4VCI 1.0 §6.1: required when the offer has a tx_code
  if (txCode === undefined) {
    sendError(
      ctx,
      new ProtocolError('invalid_request', 'tx_code is required: this credential offer is protected by a PIN'),
    );
    return false;
  }
  delete params.tx_code; // the provider's code has no tx_code to compare it with
  // an already redeemed code: the provider answers invalid_grant (and revokes on replay)
  if (redeemed) return true;
  const outcome = await deps.pins.attempt(
    offer.offerId,
    deps.pinHasher.matches(offer.pin!, txCode),
    ttlOf(offer),
    failures,
  );
  switch (outcome.kind) {
    case 'pass':
      return true;
    case 'retry':
      await deps.offers.pinRetry(offer, outcome.attemptsLeft);
      answer(ctx, 'invalid_grant', retryDescription(outcome.attemptsLeft));
      return false;
    case 'revoke':
      // the code and its grant first: once the offer is gone, nothing checks a PIN for that code any more
      await deps.revoke(offer);
      await deps.offers.failed(offer.offerId, failedMessage(deps.pins.limit));
      await deps.onFailed?.(offer, ENGLISH.say(failedMessage(deps.pins.limit)));
      answer(ctx, 'invalid_grant', revokedDescription);
      return false;
    case 'exhausted':
      answer(ctx, 'invalid_grant', revokedDescription);
      return false;
  }
}

/** The `sub` of a wallet attestation, unverified: the provider verifies the attestation and that `sub` is the client. */
function subjectOf(attestation: string): string | undefined {
  if (!attestation) return undefined;
  try {
    const { sub } = decodeJwt(attestation);
    return typeof sub === 'string' && sub.length > 0 ? sub : undefined;
  } catch {
    return undefined; // the provider answers: invalid OAuth-Client-Attestation format
  }
}

/** RFC 6749 §5.2 error response, uncacheable like every token response. */
function answer(ctx: Context, error: 'invalid_grant', description: string): void {
  sendError(ctx, new ProtocolError(error, description));
}
