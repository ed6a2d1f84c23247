import type { Store } from '../store/types.js';
import { pinAttemptsKey } from './offers.js';
import { say, type Say } from '../i18n/catalogues.js';

/**
 * D10: a wrong PIN does not burn the offer at once. What happens to a PIN attempt, decided atomically in
 * the store (so that parallel requests can neither exceed the limit nor slip a right PIN in after it):
 * - `pass`: the right PIN, while attempts are left;
 * - `retry`: a wrong PIN before the last; `attemptsLeft` remain;
 * - `revoke`: the last wrong PIN: the offer is revoked;
 * - `exhausted`: any PIN, right or wrong, after the limit was reached.
 */
export type PinOutcome =
  { kind: 'pass' } | { kind: 'retry'; attemptsLeft: number } | { kind: 'revoke' } | { kind: 'exhausted' };

export const retryDescription = (attemptsLeft: number) => `invalid tx_code provided: ${attemptsLeft} attempt(s) left`;
export const revokedDescription = 'invalid tx_code provided: no attempts left, the credential offer is no longer valid';
export const failedMessage = (limit: number): Say => say('status.pinExhausted', { limit });

/** Counts wrong attempts per offer in the store, with one atomic operation per attempt (D10, D14). */
export class PinAttempts {
  constructor(
    private readonly store: Store,
    readonly limit: number,
    /** told of every wrong PIN (metrics: vc_pin_failures_total) */
    private readonly onFailure?: () => void,
  ) {}

  /**
   * `failuresSeen`: the wrong attempts counted when the offer was read in this request. A right PIN while
   * they are below the limit passes without asking the store again: that read is the attempt's moment,
   * and a pass writes nothing. Everything else is decided by the store's atomic `attempt`.
   */
  async attempt(offerId: string, right: boolean, ttlSeconds: number, failuresSeen?: number): Promise<PinOutcome> {
    if (right && failuresSeen !== undefined && failuresSeen < this.limit) return { kind: 'pass' };
    const { allowed, count } = await this.store.attempt(pinAttemptsKey(offerId), !right, this.limit, ttlSeconds);
    if (!right) this.onFailure?.();
    if (!allowed) return { kind: 'exhausted' };
    if (right) return { kind: 'pass' };
    return count < this.limit ? { kind: 'retry', attemptsLeft: this.limit - count } : { kind: 'revoke' };
  }
}
