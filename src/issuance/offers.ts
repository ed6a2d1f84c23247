import { createHash } from 'node:crypto';
import type { Store } from '../store/types.js';
import type { StoredPin } from '../rules/pinHash.js';
import { said, say, type Say } from '../i18n/catalogues.js';
import { linkToFlow } from '../telemetry/spans.js';

/** What the holder's prompt page shows about an offer (D10: live progress, errors a person understands). */
export type OfferStatus = {
  status: 'pending' | 'scanned' | 'pin_retry' | 'done' | 'failed' | 'expired';
  message?: string;
  /** the message for the holder's page, in the holder's language there */
  say?: Say;
  attemptsLeft?: number;
};

/** Everything needed to serve, redeem and issue an offer. Never logged (D17). */
export interface OfferRecord {
  /** `offerIdOf(preAuthorizedCode)` */
  offerId: string;
  /** what the offer is a step of (the holder's prompt), handed back when the credential is issued */
  stepId: string;
  /** the relying party whose flow the offer is (for metrics and the audit line, D17) */
  clientId?: string;
  preAuthorizedCode: string;
  /** the PIN (the wallet's `tx_code`), as a salted hash only, when the offer has one */
  pin?: StoredPin;
  credentialType: string;
  attributes: Record<string, unknown>;
  serialNumber: string;
  /** epoch seconds */
  credentialExpiresAt: number;
  /** epoch seconds: the pre-authorized code's expiry, after which the offer is no longer served or redeemable */
  redeemBy: number;
  /** epoch seconds until which the record is kept: `redeemBy` plus an access token's lifetime */
  keptUntil: number;
  /** the step is an External Client flow's (D13): its end is announced to the client */
  external?: boolean;
  /** the flow's root span context (a traceparent), when tracing is on; the wallet's requests link to it */
  trace?: string;
}

/** How long `done` and `failed` stay readable after the offer itself is gone. */
export const STATUS_GRACE_SECONDS = 120;

const now = () => Math.floor(Date.now() / 1000);

/**
 * An offer's id: the SHA-256 of its pre-authorized code. The wallet's token request names the code, so
 * the edge finds the offer (and its PIN) without reading the code's record; the offer's URL
 * (`credential_offer_uri`) carries the id, which does not reveal the code.
 */
export const offerIdOf = (preAuthorizedCode: string) =>
  createHash('sha256').update(preAuthorizedCode).digest('base64url');
export const OFFER_ID = /^[A-Za-z0-9_-]{43}$/;

// Hash tags keep one offer's keys in one Redis Cluster slot (D14).
const offerKey = (offerId: string) => `wallet:{${offerId}}:offer`;
const statusKey = (offerId: string) => `wallet:{${offerId}}:status`;
/** The final outcome, kept apart so that a progress update racing it (a parallel PIN guess) cannot hide it. */
const outcomeKey = (offerId: string) => `wallet:{${offerId}}:outcome`;
export const pinAttemptsKey = (offerId: string) => `wallet:{${offerId}}:pin-attempts`;
/** The provider's code and grant minted for the offer (src/issuance/providerCodes.ts). */
export const mintedCodeKey = (offerId: string) => `wallet:{${offerId}}:code`;
/**
 * The redemption of the offer's code (D14): `redeeming` while one request has the provider redeem it, then
 * `redeemed` for `RACE_WINDOW_SECONDS` once that bought a token; absent before, after a redemption that
 * failed, and after the window.
 */
const redemptionKey = (offerId: string) => `wallet:{${offerId}}:redemption`;
type Redemption = 'redeeming' | 'redeemed';

/**
 * How long after a redemption bought its token another redemption of the code counts as one that raced
 * it: refused without reaching the provider, so the winner's token stays usable. Requests
 * sent together reach the edge spread over up to about a second on a busy instance; later ones are
 * replays, which the provider refuses and answers by revoking what the code issued (RFC 6749 §4.1.2).
 */
export const RACE_WINDOW_SECONDS = 5;

/** Seconds the offer's records (and its PIN attempts) are still kept. */
export const ttlOf = (record: OfferRecord) => Math.max(1, record.keptUntil - now());

/**
 * The offers and their status, kept in the shared store (D14) with TTLs, so any instance can serve any step.
 * An offer is kept from the start for as long as an access token its code buys can be used; whether it
 * can still be served or redeemed is `redeemBy`.
 */
export class OfferBook {
  constructor(private readonly store: Store) {}

  /** The offer is pending until the wallet redeems it: no status record is written until then. */
  async create(record: OfferRecord): Promise<void> {
    const fresh = await this.store.setIfAbsent(offerKey(record.offerId), record, ttlOf(record));
    if (!fresh) throw new Error(`offer ${record.offerId} already exists`);
  }

  async find(offerId: string): Promise<OfferRecord | undefined> {
    const offer = await this.store.get<OfferRecord>(offerKey(offerId));
    linkToFlow(offer?.trace); // the wallet's requests join the offer's flow
    return offer;
  }

  /**
   * What the token request needs before the provider sees it, in one round trip (one hash slot): the
   * offer, whether its code was redeemed, whether the offer failed (its PIN attempts used up), and how
   * many wrong PINs it has counted so far.
   */
  async forRedemption(
    offerId: string,
  ): Promise<{ offer?: OfferRecord; redeemed: boolean; failed: boolean; pinFailures: number }> {
    const [offer, status, outcome, failures] = (await this.store.getMany([
      offerKey(offerId),
      statusKey(offerId),
      outcomeKey(offerId),
      pinAttemptsKey(offerId),
    ])) as [OfferRecord | undefined, OfferStatus | undefined, OfferStatus | undefined, number | undefined];
    linkToFlow(offer?.trace);
    return {
      offer,
      redeemed: status?.status === 'scanned',
      failed: outcome?.status === 'failed',
      pinFailures: Number(failures ?? 0),
    };
  }

  /** Until when (epoch ms) the offer's credential can still be issued, when the wallet redeemed its code; else undefined. */
  async issuableUntil(offerId: string): Promise<number | undefined> {
    const { offer, redeemed } = await this.forRedemption(offerId);
    return offer && redeemed ? offer.keptUntil * 1000 : undefined;
  }

  /** One redemption at a time (D14): true for the one request that may have the provider redeem the code. */
  claimRedemption(record: OfferRecord): Promise<boolean> {
    return this.store.setIfAbsent(redemptionKey(record.offerId), 'redeeming' satisfies Redemption, ttlOf(record));
  }

  /** The claimed redemption bought no token: the code may be redeemed again (with the right PIN, say). */
  async releaseRedemption(offerId: string): Promise<void> {
    await this.store.delete(redemptionKey(offerId));
  }

  /**
   * The claimed redemption bought a token: the claim stays for `RACE_WINDOW_SECONDS`, so that requests
   * that raced this one and reach the claim later are refused, and the offer is shown scanned (the wallet
   * holds a token; the offer is already kept as long as that token lasts).
   */
  async redeemed(record: OfferRecord): Promise<void> {
    // one round trip: the keys share the offer's hash tag
    await Promise.all([
      this.store.set(redemptionKey(record.offerId), 'redeemed' satisfies Redemption, RACE_WINDOW_SECONDS),
      this.store.set(statusKey(record.offerId), { status: 'scanned' }, ttlOf(record)),
    ]);
  }

  /** `redeemBy`: the offer's expiry, as `create` was given it (the prompt keeps it): the offer itself is not read. */
  async status(offerId: string, redeemBy: number): Promise<OfferStatus> {
    // one round trip: the keys share the offer's hash tag
    const [outcome, status] = (await this.store.getMany([outcomeKey(offerId), statusKey(offerId)])) as (
      OfferStatus | undefined
    )[];
    return (
      outcome ??
      status ??
      (now() < redeemBy ? { status: 'pending' } : { status: 'expired', ...said(say('status.offerExpired')) })
    );
  }

  /** Lives as long as the offer, like every progress status. */
  async pinRetry(record: OfferRecord, attemptsLeft: number): Promise<void> {
    await this.store.set(
      statusKey(record.offerId),
      { status: 'pin_retry', ...said(say('progress.pinRetry', { attemptsLeft })), attemptsLeft },
      ttlOf(record),
    );
  }

  /**
   * Single issuance per offer (D14): the credential request takes the offer out of the store, so of
   * concurrent requests exactly one gets it. A request that does not issue puts it back.
   */
  async take(offerId: string): Promise<OfferRecord | undefined> {
    const offer = await this.store.consume<OfferRecord>(offerKey(offerId));
    linkToFlow(offer?.trace);
    return offer;
  }

  /** The offer as it was before `take`, with no outcome: a credential request that did not issue. */
  async putBack(record: OfferRecord): Promise<void> {
    await Promise.all([
      this.store.delete(outcomeKey(record.offerId)),
      this.store.set(offerKey(record.offerId), record, ttlOf(record)),
    ]);
  }

  outcome(offerId: string): Promise<OfferStatus | undefined> {
    return this.store.get<OfferStatus>(outcomeKey(offerId));
  }

  /** The credential is with the holder (its offer, attributes included, was taken by the request). */
  async done(offerId: string): Promise<void> {
    await this.store.setIfAbsent(
      outcomeKey(offerId),
      { status: 'done', message: 'The credential is in your wallet.' },
      STATUS_GRACE_SECONDS,
    );
  }

  /**
   * After `done`: what only a redemption needed (its progress status, the provider's code minted for it)
   * goes. With the offer gone, no token request reaches that code again, and the outcome outranks the status.
   */
  async forgetRedemption(offerId: string): Promise<void> {
    await this.store.delete(statusKey(offerId), mintedCodeKey(offerId));
  }

  /**
   * The outcome, then the offer gone, issued in this order in one round trip (one connection, one slot:
   * Redis applies them in order), so that a status read never finds neither.
   */
  async failed(offerId: string, message: Say): Promise<void> {
    await Promise.all([
      this.store.setIfAbsent(outcomeKey(offerId), { status: 'failed', ...said(message) }, STATUS_GRACE_SECONDS),
      this.store.delete(offerKey(offerId)),
    ]);
  }
}
