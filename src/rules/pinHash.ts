import { createHash, createHmac, createSecretKey, hkdfSync, timingSafeEqual, type KeyObject } from 'node:crypto';

/** A PIN as it is stored (D10, hardening): never the PIN itself. */
export interface StoredPin {
  /** base64url salt and HMAC-SHA256, `salt.mac` */
  hash: string;
  /** the number of digits, for the offer's `tx_code.length` and the prompt */
  length: number;
}

/**
 * PINs are kept only as a salted HMAC under a key derived from a secret every instance shares and that is
 * never rotated (the service passes its pairwise secret; a rotated one would fail PINs in flight), so
 * every instance checks them alike and a copy of the store alone does not give a short PIN away (a
 * plain salted hash of four digits would be found by trying 10,000 values).
 */
export class PinHasher {
  // a KeyObject, imported once: an HMAC keyed with a Buffer takes a slower path in Node 24
  readonly #key: KeyObject;

  constructor(sharedSecret: string) {
    this.#key = createSecretKey(Buffer.from(hkdfSync('sha256', sharedSecret, 'pin', 'VC provider PIN hash key', 32)));
  }

  /** `unique`: what makes this PIN's record unique (the hint's client and replay key): its hash is the salt. */
  hash(pin: string, unique: string): StoredPin {
    const salt = createHash('sha256').update(unique).digest('base64url').slice(0, 22);
    return { hash: `${salt}.${this.#mac(salt, pin)}`, length: pin.length };
  }

  /** Constant-time comparison of a given PIN with a stored one. */
  matches(stored: StoredPin, given: string): boolean {
    const [salt, mac] = stored.hash.split('.');
    const expected = Buffer.from(mac ?? '', 'base64url');
    const actual = Buffer.from(this.#mac(salt ?? '', given), 'base64url');
    return expected.length === actual.length && timingSafeEqual(expected, actual);
  }

  #mac(salt: string, pin: string): string {
    return createHmac('sha256', this.#key).update(`${salt}.${pin}`).digest('base64url');
  }
}
