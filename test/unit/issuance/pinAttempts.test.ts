import { afterEach, describe, expect, it } from 'vitest';
import { ENGLISH } from '../../../src/i18n/catalogues.js';
import { failedMessage, PinAttempts } from '../../../src/issuance/pinAttempts.js';
import { MemoryStore } from '../../../src/store/memory.js';
import { PinHasher } from '../../../src/rules/pinHash.js';

describe('PIN attempts (D10)', () => {
  const store = new MemoryStore();
  afterEach(async () => {
    await store.delete('wallet:{o1}:pin-attempts');
  });

  it('lets the holder retry until the last attempt, which revokes; after it every PIN is refused, the right one too', async () => {
    const pins = new PinAttempts(store, 3);
    expect(await pins.attempt('o1', false, 60)).toEqual({ kind: 'retry', attemptsLeft: 2 });
    expect(await pins.attempt('o1', true, 60)).toEqual({ kind: 'pass' });
    expect(await pins.attempt('o1', false, 60)).toEqual({ kind: 'retry', attemptsLeft: 1 });
    expect(await pins.attempt('o1', false, 60)).toEqual({ kind: 'revoke' });
    expect(await pins.attempt('o1', true, 60)).toEqual({ kind: 'exhausted' });
    expect(await pins.attempt('o1', false, 60)).toEqual({ kind: 'exhausted' });
  });

  it('revokes at once when only one attempt is configured', async () => {
    expect(await new PinAttempts(store, 1).attempt('o1', false, 60)).toEqual({ kind: 'revoke' });
  });

  it('of 20 parallel attempts, 19 wrong and the right one last, exactly 2 retries and 1 revoke; the right one is refused after them', async () => {
    const pins = new PinAttempts(store, 3);
    const outcomes = await Promise.all(Array.from({ length: 20 }, (_, i) => pins.attempt('o1', i === 19, 60)));
    expect(outcomes.filter((o) => o.kind === 'retry')).toHaveLength(2);
    expect(outcomes.filter((o) => o.kind === 'revoke')).toHaveLength(1);
    expect(outcomes.filter((o) => o.kind === 'exhausted')).toHaveLength(17);
    expect(outcomes[19]).toEqual({ kind: 'exhausted' });
  });

  it('tells the holder in words what happened', () => {
    expect(ENGLISH.say(failedMessage(3))).toBe('The PIN was entered wrongly 3 times; this offer is no longer valid.');
    expect(ENGLISH.say(failedMessage(1))).toBe('The PIN was entered wrongly 1 time; this offer is no longer valid.');
  });
});

describe('stored PINs', () => {
  const hasher = new PinHasher('shared-secret-0123456789');

  it('are a salted hash, never the PIN, and match only the same PIN', () => {
    const stored = hasher.hash('0123', 'hint:client:jti:a');
    expect(stored.length).toBe(4);
    expect(stored.hash).not.toContain('0123');
    // salted with what makes each record unique: the same PIN of another hint hashes otherwise
    expect(hasher.hash('0123', 'hint:client:jti:b').hash).not.toBe(stored.hash);
    expect(hasher.matches(stored, '0123')).toBe(true);
    expect(hasher.matches(stored, '123')).toBe(false);
    expect(hasher.matches(stored, '01234')).toBe(false);
    expect(hasher.matches(stored, '0124')).toBe(false);
  });

  it('match on every instance sharing the secret, and not under another secret', () => {
    const stored = hasher.hash('9876', 'hint:client:jti:c');
    expect(new PinHasher('shared-secret-0123456789').matches(stored, '9876')).toBe(true);
    expect(new PinHasher('another-secret-0123456789').matches(stored, '9876')).toBe(false);
  });
});
