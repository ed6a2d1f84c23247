import { afterEach, describe, expect, it } from 'vitest';
import { failedMessage, PinAttempts, pinMatches, wrongPinOutcome } from '../../../src/issuance/pinAttempts.js';
import { MemoryStore } from '../../../src/store/memory.js';
import { OfferBook } from '../../../src/issuance/offers.js';

describe('wrong PIN attempts (D10)', () => {
  it('lets the holder retry until the last attempt, which revokes', () => {
    expect(wrongPinOutcome(1, 3)).toEqual({ kind: 'retry', attemptsLeft: 2 });
    expect(wrongPinOutcome(2, 3)).toEqual({ kind: 'retry', attemptsLeft: 1 });
    expect(wrongPinOutcome(3, 3)).toEqual({ kind: 'revoke' });
    expect(wrongPinOutcome(4, 3)).toEqual({ kind: 'exhausted' });
  });

  it('revokes at once when only one attempt is configured', () => {
    expect(wrongPinOutcome(1, 1)).toEqual({ kind: 'revoke' });
  });

  it('tells the holder in words what happened', () => {
    expect(failedMessage(3)).toBe('The PIN was entered wrongly 3 times; this offer is no longer valid.');
    expect(failedMessage(1)).toBe('The PIN was entered wrongly 1 time; this offer is no longer valid.');
  });

  it('compares PINs exactly', () => {
    expect(pinMatches('1234', '1234')).toBe(true);
    expect(pinMatches('1234', '1235')).toBe(false);
    expect(pinMatches('1234', '12345')).toBe(false);
    expect(pinMatches('0123', '123')).toBe(false);
  });
});

describe('counting attempts in the store', () => {
  const store = new MemoryStore();
  afterEach(async () => {
    await store.delete('wallet:{o1}:pin-attempts');
  });

  it('evaluates exactly one revoke among many parallel wrong guesses', async () => {
    const pins = new PinAttempts(store, 3);
    const outcomes = await Promise.all(Array.from({ length: 20 }, () => pins.wrong('o1', 60)));
    expect(outcomes.filter((o) => o.kind === 'retry')).toHaveLength(2);
    expect(outcomes.filter((o) => o.kind === 'revoke')).toHaveLength(1);
    expect(outcomes.filter((o) => o.kind === 'exhausted')).toHaveLength(17);
    const { wrongPins } = await new OfferBook(store).forRedemption('o1');
    expect(wrongPins).toBe(20);
    expect(pins.exhausted(wrongPins)).toBe(true);
  });

  it('is not exhausted before the limit', async () => {
    const pins = new PinAttempts(store, 3);
    await pins.wrong('o1', 60);
    const { wrongPins } = await new OfferBook(store).forRedemption('o1');
    expect(wrongPins).toBe(1);
    expect(pins.exhausted(wrongPins)).toBe(false);
    expect(pins.exhausted(2)).toBe(false);
    expect(pins.exhausted(3)).toBe(true);
  });
});
