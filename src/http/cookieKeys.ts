import { createHmac, createSecretKey, timingSafeEqual, type KeyObject } from 'node:crypto';

/**
 * The signer of every signed cookie (oidc-provider's session, interaction and resume cookies), in place
 * of the Keygrip that Koa's `cookies` builds from an array of secrets (oidc-provider's `cookies.keys` and
 * Koa's `app.keys` both take such an object).
 *
 * Its signatures are Keygrip's with its defaults, so a cookie signed before (or by another instance
 * during a rolling deploy) still verifies: HMAC-SHA1 of the cookie's `name=value` under the first secret,
 * base64url without padding; a cookie signed with any listed secret verifies (rotation: put the new
 * secret first; with a rotating source, src/keys/keyRing.ts orders them).
 *
 * What differs is how digests are compared: with `crypto.timingSafeEqual` on secrets imported once as
 * KeyObjects (every digest has 27 characters, so equal lengths say nothing), where Keygrip draws random
 * bytes and computes two more HMACs per comparison. Cookies are read on every step of a flow.
 */
/**
 * Rotating secrets (src/keys/keyRing.ts): the secrets now, the one that signs first, and until when
 * (epoch ms) that answer holds; asked again after that moment or after `changed()`.
 */
export type SecretSource = () => { secrets: string[]; until: number };

export class CookieKeys {
  #keys: KeyObject[] = [];
  #until = Infinity;
  readonly #source?: SecretSource;

  constructor(secrets: readonly (string | Buffer)[] | SecretSource) {
    if (typeof secrets === 'function') {
      this.#source = secrets;
      this.changed();
    } else {
      this.#set(secrets);
    }
  }

  /** The rotating source has new secrets (a reload): ask it again on the next use. */
  changed(): void {
    this.#until = -Infinity;
  }

  #set(secrets: readonly (string | Buffer)[]): void {
    if (!secrets.length) throw new Error('cookie keys: at least one secret is required');
    this.#keys = secrets.map((s) => createSecretKey(typeof s === 'string' ? Buffer.from(s, 'utf8') : Buffer.from(s)));
  }

  #current(): KeyObject[] {
    if (this.#source && Date.now() >= this.#until) {
      const { secrets, until } = this.#source();
      this.#set(secrets);
      this.#until = until;
    }
    return this.#keys;
  }

  /** The signature of `data` under the first secret. */
  sign(data: string): string {
    return digestOf(this.#current()[0], data);
  }

  verify(data: string, digest: string): boolean {
    return this.index(data, digest) > -1;
  }

  /** The position of the secret `digest` was made with, or -1 when none made it. */
  index(data: string, digest: unknown): number {
    if (typeof digest !== 'string') return -1;
    const given = Buffer.from(digest, 'utf8');
    const keys = this.#current();
    for (let i = 0; i < keys.length; i++) {
      const expected = Buffer.from(digestOf(keys[i], data), 'latin1');
      if (given.length === expected.length && timingSafeEqual(given, expected)) return i;
    }
    return -1;
  }
}

const digestOf = (key: KeyObject, data: string): string =>
  createHmac('sha1', key).update(data, 'utf8').digest('base64url');
