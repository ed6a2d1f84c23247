import { describe, expect, it } from 'vitest';
import {
  batchSizeOf,
  batchTimestamps,
  duplicateKey,
  issuerBatchSize,
  MAX_BATCH_SIZE,
  reusePolicyOf,
  wholeHour,
} from '../../../src/rules/batch.js';

describe('one-time-use batches (issue 49, OpenID4VCI 1.0 §8.2, §12.2.4; ARF ISSU_36, ISSU_39)', () => {
  it("a type's batch size is its own, else the operator's default", () => {
    expect(batchSizeOf({ batchSize: 10 }, 1)).toBe(10);
    expect(batchSizeOf({}, 5)).toBe(5);
    expect(batchSizeOf({ batchSize: 1 }, 5)).toBe(1); // off is a valid choice per type
  });

  it('§12.2.4: batch_size is the largest of the types, and absent when none takes batches (it MUST be 2 or greater)', () => {
    expect(issuerBatchSize([1, 10, 3])).toBe(10);
    expect(issuerBatchSize([1, 1])).toBeUndefined();
    expect(issuerBatchSize([])).toBeUndefined();
    expect(issuerBatchSize([2])).toBe(2);
    expect(MAX_BATCH_SIZE).toBeGreaterThanOrEqual(10);
  });

  it('ISSU_39/ISSU_45: a batch type says once_only, its batch size and a re-issue trigger below it', () => {
    expect(reusePolicyOf(1)).toBeUndefined();
    expect(reusePolicyOf(10)).toEqual({
      id: 'arf_annex_ii',
      options: [{ details: ['once_only'], batch_size: 10, reissue_trigger_unused: 2 }],
    });
    for (const size of [2, 3, 4, 5, 50, 100]) {
      const { batch_size, reissue_trigger_unused } = reusePolicyOf(size)!.options[0];
      expect(batch_size).toBe(size);
      expect(reissue_trigger_unused).toBeGreaterThanOrEqual(1);
      expect(reissue_trigger_unused).toBeLessThan(size);
    }
  });

  it('ISSU_36: timestamps are rounded down to whole UTC hours, never later than the flow allowed', () => {
    const now = Date.UTC(2026, 11, 7, 14, 29, 23) / 1000;
    const expiresAt = Date.UTC(2027, 11, 7, 14, 29, 24) / 1000;
    const { iat, exp } = batchTimestamps(now, expiresAt);
    expect(new Date(iat * 1000).toISOString()).toBe('2026-12-07T14:00:00.000Z');
    expect(new Date(exp * 1000).toISOString()).toBe('2027-12-07T14:00:00.000Z');
    expect(iat).toBeLessThanOrEqual(now);
    expect(exp).toBeLessThanOrEqual(expiresAt);
    // two flows of the same hour carry the same values: neither tells one batch from another
    expect(batchTimestamps(now + 1700, expiresAt + 1700)).toEqual({ iat, exp });
    expect(wholeHour(iat)).toBe(iat);
  });

  it('finds a key proved twice (each credential needs its own key)', () => {
    expect(duplicateKey(['a', 'b', 'c'])).toBeUndefined();
    expect(duplicateKey(['a', 'b', 'a'])).toEqual({ at: 2, first: 0 });
    expect(duplicateKey([])).toBeUndefined();
  });
});
