import { describe, expect, it } from 'vitest';
import { randomBase64, randomBase64url } from '../../src/random.js';

describe('random values from the CSPRNG', () => {
  it('have the requested number of bytes, in the requested encoding', () => {
    expect(randomBase64url(16)).toMatch(/^[A-Za-z0-9_-]{22}$/);
    expect(Buffer.from(randomBase64url(32), 'base64url')).toHaveLength(32);
    expect(randomBase64(16)).toMatch(/^[A-Za-z0-9+/]{22}==$/);
  });

  it('never repeat, and serve large sizes', () => {
    const seen = new Set<string>();
    for (let i = 0; i < 5_000; i++) seen.add(randomBase64url(16));
    expect(seen.size).toBe(5_000);
    const big = Buffer.from(randomBase64url(10_000), 'base64url');
    expect(big).toHaveLength(10_000);
    expect(new Set(big).size).toBeGreaterThan(200); // spread over the byte values, not a zeroed buffer
  });

  it('are not biased: every bit position is set about half the time', () => {
    const ones = new Array<number>(128).fill(0);
    const n = 4_000;
    for (let i = 0; i < n; i++) {
      const b = Buffer.from(randomBase64url(16), 'base64url');
      for (let bit = 0; bit < 128; bit++) if (b[bit >> 3] & (1 << (bit & 7))) ones[bit]++;
    }
    // 4,000 fair coin flips: 6 standard deviations is ±190
    for (const count of ones) expect(Math.abs(count - n / 2)).toBeLessThan(190);
  });
});
