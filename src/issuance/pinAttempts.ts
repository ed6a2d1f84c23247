import { createHash, timingSafeEqual } from 'node:crypto';
import type { Store } from '../store/types.js';
import { pinAttemptsKey } from './offers.js';

/**
 * D10: a wrong PIN does not burn the offer at once. What happens to the n-th wrong attempt (1-based) out of
 * `limit`:
 * - `retry`: answered by the edge (`invalid_grant`, attempts left); never reaches the provider;
 * - `revoke`: the last one; goes through, so that the provider consumes and revokes the code and its grant;
 * - `exhausted`: a parallel guess beyond the limit; answered by the edge, the offer is already lost.
 */
export type WrongPinOutcome =
  | { kind: 'retry'; attemptsLeft: number }
  | { kind: 'revoke' }
  | { kind: 'exhausted' };

export function wrongPinOutcome(attempt: number, limit: number): WrongPinOutcome {
  if (attempt < limit) return { kind: 'retry', attemptsLeft: limit - attempt };
  if (attempt === limit) return { kind: 'revoke' };
  return { kind: 'exhausted' };
}

export const retryDescription = (attemptsLeft: number) => `invalid tx_code provided: ${attemptsLeft} attempt(s) left`;
export const revokedDescription = 'invalid tx_code provided: no attempts left, the credential offer is no longer valid';
export const failedMessage = (limit: number) =>
  `The PIN was entered wrongly ${limit} ${limit === 1 ? 'time' : 'times'}; this offer is no longer valid.`;

/** Constant-time PIN comparison (the provider re-checks with its own constant-time compare). */
export function pinMatches(expected: string, given: string): boolean {
  const a = createHash('sha256').update(expected).digest();
  const b = createHash('sha256').update(given).digest();
  return timingSafeEqual(a, b);
}

/** Counts wrong attempts atomically in the store, so parallel guesses cannot exceed the limit (D10, D14). */
export class PinAttempts {
  constructor(
    private readonly store: Store,
    readonly limit: number,
  ) {}

  /** No attempt is left after `wrongSoFar` wrong PINs (OfferBook.forRedemption reads the count with the offer). */
  exhausted(wrongSoFar: number): boolean {
    return wrongSoFar >= this.limit;
  }

  async wrong(offerId: string, ttl: number): Promise<WrongPinOutcome> {
    const attempt = await this.store.incr(pinAttemptsKey(offerId), ttl);
    return wrongPinOutcome(attempt, this.limit);
  }
}
