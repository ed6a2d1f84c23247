import type { Store } from '../store/types.js';

/** What the holder's prompt page shows about an offer (D10: live progress, errors a person understands). */
export type OfferStatus = {
  status: 'pending' | 'scanned' | 'pin_retry' | 'done' | 'failed' | 'expired';
  message?: string;
  attemptsLeft?: number;
};

/** Everything needed to issue the credential once the wallet redeems the offer. Never logged (D17). */
export interface OfferRecord {
  offerId: string;
  credentialType: string;
  attributes: Record<string, unknown>;
  serialNumber: string;
  /** epoch seconds */
  credentialExpiresAt: number;
  pinProtected: boolean;
  grantId: string;
  /** epoch seconds until which the record is kept */
  keptUntil: number;
}

/** How long `done` and `failed` stay readable after the offer itself is gone. */
export const STATUS_GRACE_SECONDS = 120;

const now = () => Math.floor(Date.now() / 1000);

// Hash tags keep one offer's keys in one Redis Cluster slot (D14).
const offerKey = (offerId: string) => `wallet:{${offerId}}:offer`;
const statusKey = (offerId: string) => `wallet:{${offerId}}:status`;
/** The final outcome, kept apart so that a progress update racing it (a parallel PIN guess) cannot hide it. */
const outcomeKey = (offerId: string) => `wallet:{${offerId}}:outcome`;
const issuedKey = (offerId: string) => `wallet:{${offerId}}:issued`;
export const pinAttemptsKey = (offerId: string) => `wallet:{${offerId}}:pin-attempts`;

/** The offers and their status, kept in the shared store (D14) with TTLs, so any instance can serve any step. */
export class OfferBook {
  constructor(private readonly store: Store) {}

  /** The offer is pending until the wallet redeems it: no status record is written until then. */
  async create(record: OfferRecord, lifetime: number): Promise<void> {
    const fresh = await this.store.setIfAbsent(offerKey(record.offerId), record, lifetime);
    if (!fresh) throw new Error(`offer ${record.offerId} already exists`);
  }

  find(offerId: string): Promise<OfferRecord | undefined> {
    return this.store.get<OfferRecord>(offerKey(offerId));
  }

  /** The offer and the wrong PINs counted against it, in one round trip (one hash slot). */
  async findWithWrongPins(offerId: string): Promise<{ offer?: OfferRecord; wrongPins: number }> {
    const [offer, wrongPins] = (await this.store.getMany([offerKey(offerId), pinAttemptsKey(offerId)])) as [OfferRecord | undefined, number | undefined];
    return { offer, wrongPins: wrongPins ?? 0 };
  }

  async status(offerId: string): Promise<OfferStatus> {
    // one round trip: the three keys share the offer's hash tag
    const [outcome, status, offer] = (await this.store.getMany([outcomeKey(offerId), statusKey(offerId), offerKey(offerId)])) as (OfferStatus | OfferRecord | undefined)[];
    if (outcome) return outcome as OfferStatus;
    if (!offer) return { status: 'expired', message: 'This offer has expired.' };
    return (status as OfferStatus | undefined) ?? { status: 'pending' };
  }

  async pinRetry(offerId: string, attemptsLeft: number): Promise<void> {
    const message = `The PIN was wrong; ${attemptsLeft} attempt(s) left.`;
    await this.setStatus(offerId, { status: 'pin_retry', message, attemptsLeft }, await this.#statusTtl(offerId));
  }

  /**
   * The wallet holds an access token: keep the offer (`record`, as just read) until that token can no
   * longer be used, even when the offer's own lifetime ends first.
   */
  async scanned(record: OfferRecord, accessTokenLifetime: number): Promise<void> {
    const keptUntil = Math.max(record.keptUntil, now() + accessTokenLifetime);
    const ttl = keptUntil - now();
    await Promise.all([
      this.store.set(offerKey(record.offerId), { ...record, keptUntil }, ttl),
      this.setStatus(record.offerId, { status: 'scanned' }, ttl + STATUS_GRACE_SECONDS),
    ]);
  }

  /** Single issuance per offer (D14): of concurrent credential requests, exactly one wins. */
  claimIssuance(offerId: string, ttl: number): Promise<boolean> {
    return this.store.setIfAbsent(issuedKey(offerId), 1, ttl);
  }

  releaseIssuance(offerId: string): Promise<void> {
    return this.store.delete(issuedKey(offerId));
  }

  /** The credential is with the holder: its attributes are no longer kept. */
  async done(offerId: string): Promise<void> {
    await this.#finalOutcome(offerId, { status: 'done', message: 'The credential is in your wallet.' });
  }

  async failed(offerId: string, message: string): Promise<void> {
    await this.#finalOutcome(offerId, { status: 'failed', message });
  }

  /**
   * The outcome, then the offer gone, issued in this order in one round trip (one connection, one slot:
   * Redis applies them in order), so that a status read never finds neither.
   */
  async #finalOutcome(offerId: string, outcome: OfferStatus): Promise<void> {
    await Promise.all([this.store.setIfAbsent(outcomeKey(offerId), outcome, STATUS_GRACE_SECONDS), this.store.delete(offerKey(offerId))]);
  }

  private setStatus(offerId: string, status: OfferStatus, ttl: number): Promise<void> {
    return this.store.set(statusKey(offerId), status, Math.max(1, ttl));
  }

  async #statusTtl(offerId: string): Promise<number> {
    const record = await this.find(offerId);
    return (record ? record.keptUntil - now() : 0) + STATUS_GRACE_SECONDS;
  }
}
