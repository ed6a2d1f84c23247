import { describe, expect, it } from 'vitest';
import { ConfigError, validateConfig } from '../../../src/config/load.js';
import { DEFAULT_MAX_ENTRIES } from '../../../src/verification/statusListBytes.js';
import { minimalDoc } from '../config/fixtures.js';

/** issue 31 §1: `statusList.maxEntries`, the largest status list the verifier reads. */
const problems = (statusList: Record<string, unknown>): string[] => {
  try {
    validateConfig({ ...minimalDoc(), statusList });
    return [];
  } catch (err) {
    if (err instanceof ConfigError) return err.problems;
    throw err;
  }
};

describe('statusList.maxEntries (issue 31 §1)', () => {
  it("defaults to 16 Mi entries, the verifier's own default", () => {
    expect(validateConfig(minimalDoc()).statusList.maxEntries).toBe(DEFAULT_MAX_ENTRIES);
    expect(validateConfig({ ...minimalDoc(), statusList: { ttl: 60 } }).statusList.maxEntries).toBe(
      DEFAULT_MAX_ENTRIES,
    );
  });

  it("is refused below this service's own list size, and out of its range, naming the key", () => {
    expect(problems({ size: 1 << 20, maxEntries: 1 << 19 })).toEqual([
      'statusList.size: size must not exceed maxEntries',
    ]);
    expect(problems({ maxEntries: 1 << 27 })[0]).toMatch(/^statusList\.maxEntries: /);
    expect(problems({ maxEntries: 100 })[0]).toMatch(/^statusList\.maxEntries: /);
    expect(problems({ size: 1 << 20, maxEntries: 1 << 20 })).toEqual([]);
  });
});
