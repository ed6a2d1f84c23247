import { createRequire } from 'node:module';
import { describe, expect, it } from 'vitest';
import { CookieKeys } from '../../../src/http/cookieKeys.js';

// Keygrip, what Koa's cookies use for an array of secrets: the reference our signatures must equal
const Keygrip = createRequire(import.meta.url)('keygrip') as new (keys: (string | Buffer)[]) => {
  sign(data: string): string;
  index(data: string, digest: string): number;
};

const secrets = ['first-secret-0123456789abcdef', 'second-secret-fedcba9876543210'];
const samples = [
  '_interaction_v2=Fq3kL0_aZ-9xY',
  '_session_v1=abc',
  '_resume_v2=',
  'name=värde ✓',
  `long=${'x'.repeat(4096)}`,
];

describe('CookieKeys: signed cookies as Keygrip signs them, verified with timingSafeEqual', () => {
  it('signs exactly as Keygrip with the same secrets (cookies signed before, or by another instance, stay valid)', () => {
    const ours = new CookieKeys(secrets);
    const reference = new Keygrip(secrets);
    for (const data of samples) {
      expect(ours.sign(data)).toBe(reference.sign(data));
      expect(ours.sign(data)).toMatch(/^[A-Za-z0-9_-]{27}$/); // HMAC-SHA1, base64url without padding
    }
  });

  it('takes secrets given as Buffers as Keygrip does', () => {
    const bytes = [Buffer.from([0, 1, 2, 250, 251, 252]), Buffer.from('second')];
    expect(new CookieKeys(bytes).sign('a=b')).toBe(new Keygrip(bytes).sign('a=b'));
  });

  it('index: the position of the secret that made the digest (rotation: the new secret first, the old still verifies)', () => {
    const [oldSecret] = secrets;
    const signedWithOld = new Keygrip([oldSecret]).sign(samples[0]);
    const rotated = new CookieKeys(['a-new-secret-after-rotation', oldSecret]);
    expect(rotated.index(samples[0], signedWithOld)).toBe(1);
    expect(rotated.verify(samples[0], signedWithOld)).toBe(true);
    expect(rotated.index(samples[0], rotated.sign(samples[0]))).toBe(0);
    expect(new CookieKeys(['unrelated-secret']).index(samples[0], signedWithOld)).toBe(-1);
  });

  it('refuses a digest that is tampered, truncated, extended, for other data, empty or not a string', () => {
    const keys = new CookieKeys(secrets);
    const data = samples[0];
    const good = keys.sign(data);
    const flipped = `${good.slice(0, 10)}${good[10] === 'A' ? 'B' : 'A'}${good.slice(11)}`;
    for (const bad of [
      flipped,
      good.slice(0, -1),
      `${good}A`,
      `${good}=`,
      '',
      keys.sign('_interaction_v2=other'),
      `${good.slice(0, -1)}é`,
    ]) {
      expect(keys.index(data, bad), bad).toBe(-1);
      expect(new Keygrip(secrets).index(data, bad), `Keygrip agrees on ${bad}`).toBe(-1);
    }
    for (const notAString of [undefined, null, 42, ['x'], { toString: () => good }])
      expect(keys.index(data, notAString)).toBe(-1);
  });

  it('needs at least one secret', () => {
    expect(() => new CookieKeys([])).toThrow(/at least one secret/);
  });
});
