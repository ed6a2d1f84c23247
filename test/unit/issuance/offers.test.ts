import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import {
  OFFER_ID,
  OfferBook,
  offerIdOf,
  RACE_WINDOW_SECONDS,
  STATUS_GRACE_SECONDS,
  type OfferRecord,
} from '../../../src/issuance/offers.js';
import { failedMessage } from '../../../src/issuance/pinAttempts.js';
import { MemoryStore } from '../../../src/store/memory.js';

const ACCESS_TOKEN = 300;
const record = (offerId: string, lifetime = 60): OfferRecord => {
  const redeemBy = Math.floor(Date.now() / 1000) + lifetime;
  return {
    offerId,
    stepId: `v2.${offerId}`,
    preAuthorizedCode: `code-of-${offerId}`,
    pin: { hash: 'salt.mac', length: 4 },
    credentialType: 'EmployeeBadge',
    attributes: { FirstName: 'Ada' },
    serialNumber: 'SN-1',
    credentialExpiresAt: 1_900_000_000,
    redeemBy,
    keptUntil: redeemBy + ACCESS_TOKEN,
  };
};

let store: MemoryStore;
let offers: OfferBook;
beforeEach(() => {
  vi.useFakeTimers({ toFake: ['Date'] });
  vi.setSystemTime(new Date('2026-01-01T00:00:00Z'));
  store = new MemoryStore();
  offers = new OfferBook(store);
});
afterEach(async () => {
  vi.useRealTimers();
  await store.close();
});

describe("an offer's id", () => {
  it('is the SHA-256 of its pre-authorized code, base64url: the offer URL does not carry the code', () => {
    const id = offerIdOf('abc');
    expect(id).toBe('ungWv48Bz-pBQUDeXa4iI7ADYaOWF3qctBD_YfIAFa0');
    expect(OFFER_ID.test(id)).toBe(true);
    expect(offerIdOf('abd')).not.toBe(id);
  });
});

describe("an offer as the holder's prompt page sees it", () => {
  it('is pending, then scanned, then done', async () => {
    const r = record('o1');
    await offers.create(r);
    expect(await offers.status('o1', r.redeemBy)).toEqual({ status: 'pending' });
    await offers.redeemed(r);
    expect(await offers.status('o1', r.redeemBy)).toEqual({ status: 'scanned' });
    expect(await offers.take('o1')).toEqual(r);
    expect(await offers.status('o1', r.redeemBy)).toEqual({ status: 'scanned' }); // being issued
    await offers.done('o1');
    expect(await offers.status('o1', r.redeemBy)).toMatchObject({ status: 'done' });
  });

  it('shows the attempts left after a wrong PIN', async () => {
    const r = record('o1');
    await offers.create(r);
    await offers.pinRetry(r, 2);
    expect(await offers.status('o1', r.redeemBy)).toEqual({
      status: 'pin_retry',
      attemptsLeft: 2,
      message: 'Wrong PIN. 2 attempts left.',
      say: { id: 'progress.pinRetry', values: { attemptsLeft: 2 } },
    });
  });

  it('expires with its lifetime when nobody redeemed it', async () => {
    const r = record('o1', 60);
    await offers.create(r);
    vi.setSystemTime(Date.now() + 61_000);
    expect(await offers.status('o1', r.redeemBy)).toMatchObject({ status: 'expired' });
  });

  it('is kept past its lifetime for as long as an access token its code bought can be used', async () => {
    const r = record('o1', 60);
    await offers.create(r);
    await offers.redeemed(r);
    vi.setSystemTime(Date.now() + 120_000);
    expect(await offers.find('o1')).toBeDefined();
    expect(await offers.status('o1', r.redeemBy)).toEqual({ status: 'scanned' });
    vi.setSystemTime(Date.now() + (ACCESS_TOKEN - 60 + 1) * 1000);
    expect(await offers.find('o1')).toBeUndefined();
    expect(await offers.status('o1', r.redeemBy)).toMatchObject({ status: 'expired' });
  });

  it('keeps done and failed readable for a while after the attributes are gone', async () => {
    await offers.create(record('o1'));
    await offers.create(record('o2'));
    await offers.take('o1');
    await offers.done('o1');
    await offers.failed('o2', failedMessage(3));
    expect(await offers.find('o1')).toBeUndefined();
    expect(await offers.find('o2')).toBeUndefined();
    vi.setSystemTime(Date.now() + (STATUS_GRACE_SECONDS - 1) * 1000);
    const redeemBy = Math.floor(Date.now() / 1000) + 3600; // a prompt that still counts down sees the outcome, not "pending"
    expect(await offers.status('o1', redeemBy)).toMatchObject({ status: 'done' });
    expect(await offers.status('o2', redeemBy)).toEqual({
      status: 'failed',
      message: 'The PIN was entered wrongly 3 times; this offer is no longer valid.',
      say: { id: 'status.pinExhausted', values: { limit: 3 } },
    });
    vi.setSystemTime(Date.now() + 2000);
    expect(await offers.status('o1', Math.floor(Date.now() / 1000) - 1)).toMatchObject({ status: 'expired' });
  });

  it('cannot be created twice under one id', async () => {
    await offers.create(record('o1'));
    await expect(offers.create(record('o1'))).rejects.toThrow('already exists');
  });
});

describe('issuing an offer', () => {
  it('hands the offer to exactly one of concurrent takers', async () => {
    await offers.create(record('o1'));
    const taken = await Promise.all([offers.take('o1'), offers.take('o1'), offers.take('o1')]);
    expect(taken.filter(Boolean)).toHaveLength(1);
  });

  it('puts a taken offer back, with no outcome, when it was not issued', async () => {
    const r = record('o1');
    await offers.create(r);
    await offers.redeemed(r);
    const taken = (await offers.take('o1'))!;
    await offers.done('o1'); // written beside a step that then failed
    await offers.putBack(taken);
    expect(await offers.status('o1', r.redeemBy)).toEqual({ status: 'scanned' });
    expect(await offers.outcome('o1')).toBeUndefined();
    expect(await offers.take('o1')).toEqual(r);
  });

  it('reads the offer and whether its code was redeemed together', async () => {
    const r = record('o1');
    await offers.create(r);
    expect(await offers.forRedemption('o1')).toEqual({ offer: r, redeemed: false, failed: false, pinFailures: 0 });
    await offers.redeemed(r);
    expect(await offers.forRedemption('o1')).toEqual({ offer: r, redeemed: true, failed: false, pinFailures: 0 });
    await offers.failed('o1', failedMessage(3));
    expect(await offers.forRedemption('o1')).toEqual({
      offer: undefined,
      redeemed: true,
      failed: true,
      pinFailures: 0,
    });
    expect(await offers.forRedemption('nope')).toEqual({
      offer: undefined,
      redeemed: false,
      failed: false,
      pinFailures: 0,
    });
  });
});

describe("redeeming an offer's code (D14, issue 31 §6)", () => {
  it('lets exactly one of concurrent requests claim the redemption', async () => {
    const r = record('o1');
    await offers.create(r);
    const claims = await Promise.all(Array.from({ length: 20 }, () => offers.claimRedemption(r)));
    expect(claims.filter(Boolean)).toHaveLength(1);
  });

  it('a redemption that bought no token releases its claim: the code may be redeemed again', async () => {
    const r = record('o1');
    await offers.create(r);
    expect(await offers.claimRedemption(r)).toBe(true);
    await offers.releaseRedemption('o1');
    expect(await offers.forRedemption('o1')).toMatchObject({ redeemed: false });
    expect(await offers.claimRedemption(r)).toBe(true);
  });

  it('a redemption that bought a token keeps its claim for the race window, then lets a replay claim it', async () => {
    const r = record('o1', 60);
    await offers.create(r);
    expect(await offers.claimRedemption(r)).toBe(true);
    await offers.redeemed(r);
    expect(await offers.claimRedemption(r)).toBe(false);
    expect(await offers.forRedemption('o1')).toMatchObject({ redeemed: true });
    expect(await offers.status('o1', r.redeemBy)).toEqual({ status: 'scanned' });
    vi.setSystemTime(Date.now() + (RACE_WINDOW_SECONDS - 1) * 1000);
    expect(await offers.claimRedemption(r)).toBe(false);
    vi.setSystemTime(Date.now() + 2000);
    expect(await offers.claimRedemption(r)).toBe(true);
    expect(await offers.forRedemption('o1')).toMatchObject({ redeemed: true });
  });
});
