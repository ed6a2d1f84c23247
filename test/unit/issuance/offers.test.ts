import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { OfferBook, STATUS_GRACE_SECONDS, type OfferRecord } from '../../../src/issuance/offers.js';
import { MemoryStore } from '../../../src/store/memory.js';

const record = (offerId: string, lifetime = 60): OfferRecord => ({
  offerId,
  credentialType: 'EmployeeBadge',
  attributes: { FirstName: 'Ada' },
  serialNumber: 'SN-1',
  credentialExpiresAt: 1_900_000_000,
  pinProtected: true,
  grantId: 'grant-1',
  keptUntil: Math.floor(Date.now() / 1000) + lifetime,
});

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

describe('an offer as the holder\'s prompt page sees it', () => {
  it('is pending, then scanned, then done', async () => {
    await offers.create(record('o1'), 60);
    expect(await offers.status('o1')).toEqual({ status: 'pending' });
    await offers.scanned((await offers.find('o1'))!, 300);
    expect(await offers.status('o1')).toEqual({ status: 'scanned' });
    await offers.done('o1');
    expect(await offers.status('o1')).toMatchObject({ status: 'done' });
  });

  it('shows the attempts left after a wrong PIN', async () => {
    await offers.create(record('o1'), 60);
    await offers.pinRetry('o1', 2);
    expect(await offers.status('o1')).toEqual({ status: 'pin_retry', attemptsLeft: 2, message: 'The PIN was wrong; 2 attempt(s) left.' });
  });

  it('expires with its lifetime when nobody redeemed it', async () => {
    await offers.create(record('o1', 60), 60);
    vi.setSystemTime(Date.now() + 61_000);
    expect(await offers.status('o1')).toMatchObject({ status: 'expired' });
  });

  it('outlives its lifetime once scanned, while the wallet\'s access token is valid', async () => {
    await offers.create(record('o1', 60), 60);
    await offers.scanned((await offers.find('o1'))!, 300);
    vi.setSystemTime(Date.now() + 120_000);
    expect(await offers.find('o1')).toBeDefined();
    expect(await offers.status('o1')).toEqual({ status: 'scanned' });
  });

  it('keeps done and failed readable for a while after the attributes are gone', async () => {
    await offers.create(record('o1'), 60);
    await offers.create(record('o2'), 60);
    await offers.done('o1');
    await offers.failed('o2', 'The PIN was entered wrongly 3 times; this offer is no longer valid.');
    expect(await offers.find('o1')).toBeUndefined();
    expect(await offers.find('o2')).toBeUndefined();
    vi.setSystemTime(Date.now() + (STATUS_GRACE_SECONDS - 1) * 1000);
    expect(await offers.status('o1')).toMatchObject({ status: 'done' });
    expect(await offers.status('o2')).toEqual({ status: 'failed', message: 'The PIN was entered wrongly 3 times; this offer is no longer valid.' });
    vi.setSystemTime(Date.now() + 2000);
    expect(await offers.status('o1')).toMatchObject({ status: 'expired' });
  });

  it('is unknown, hence expired, when it never existed', async () => {
    expect(await offers.status('nope')).toMatchObject({ status: 'expired' });
  });

  it('cannot be created twice under one id', async () => {
    await offers.create(record('o1'), 60);
    await expect(offers.create(record('o1'), 60)).rejects.toThrow('already exists');
  });

  it('issues at most once', async () => {
    await offers.create(record('o1'), 60);
    const claims = await Promise.all([offers.claimIssuance('o1', 60), offers.claimIssuance('o1', 60)]);
    expect(claims.sort()).toEqual([false, true]);
  });
});
