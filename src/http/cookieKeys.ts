import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';

/**
 * The signer of every signed cookie (oidc-provider's session, interaction and resume cookies), in place
 * of the Keygrip that Koa's `cookies` builds from an array of secrets (oidc-provider's `cookies.keys` and
 * Koa's `app.keys` both take such an object).
 *
 * Its signatures are Keygrip's with its defaults, so a cookie signed before (or by another instance
 * during a rolling deploy) still verifies: HMAC-SHA1 of the cookie's `name=value` under the first secret,
 * base64url without padding; a cookie signed with any listed secret verifies (rotation: put the new
 * secret first).
 *
 * What differs is how digests are compared: with `crypto.timingSafeEqual` on secrets imported once as
 * KeyObjects (every digest has 27 characters, so equal lengths say nothing), where Keygrip draws random
 * bytes and computes two more HMACs per comparison. Cookies are read on every step of a flow.
 */
export class CookieKeys {
  readonly #keys: KeyObject[];

  constructor(secrets: readonly (string | Buffer)[]) {
    if (!secrets.length) throw new Error('cookie keys: at least one secret is required');
    this.#keys = secrets.map((s) => createSecretKey(typeof s === 'string' ? Buffer.from(s, 'utf8') : Buffer.from(s)));
  }

  /** The signature of `data` under the first secret. */
  sign(data: string): string {
    return digestOf(this.#keys[0], data);
  }

  verify(data: string, digest: string): boolean {
    return this.index(data, digest) > -1;
  }

  /** The position of the secret `digest` was made with, or -1 when none made it. */
  index(data: string, digest: unknown): number {
    if (typeof digest !== 'string') return -1;
    const given = Buffer.from(digest, 'utf8');
    for (let i = 0; i < this.#keys.length; i++) {
      const expected = Buffer.from(digestOf(this.#keys[i], data), 'latin1');
      if (given.length === expected.length && timingSafeEqual(given, expected)) return i;
    }
    return -1;
  }
}

const digestOf = (key: KeyObject, data: string): string => createHmac('sha1', key).update(data, 'utf8').digest('base64url');
