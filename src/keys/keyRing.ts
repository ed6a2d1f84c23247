import { readFile, stat } from 'node:fs/promises';
import type { JWK } from 'jose';
import type { Config } from '../config/schema.js';
import { CookieKeys } from '../http/cookieKeys.js';
import { credentialExpiry } from '../rules/validity.js';
import type { Logger } from '../log.js';
import type { Store } from '../store/types.js';
import {
  KEY_STORE_KEYS,
  KINDS,
  privateJwk,
  publicJwks,
  secretOf,
  type KeptJwk,
  type KeyOrigin,
  type KeySet,
  type SecretEntry,
} from './keys.js';
import { viewSet, type SetView } from './rotation.js';

/** What signs and what is published, asked at each use: a rotation changes both without a restart. */
export interface SigningKeys {
  /** the private JWK that signs now (without our rotation dates) */
  signing(): JWK;
  /** every key published now: pending, active, and retired ones still within their keep period */
  published(): { keys: JWK[] };
}

interface JwksView {
  until: number;
  signing: JWK;
  published: { keys: JWK[] };
}

/** A JWKS whose keys rotate (D20): the view is computed once per change and per state transition. */
export class RotatingJwks implements SigningKeys {
  #entries: KeptJwk[];
  readonly #keepMs: number;
  #view?: JwksView;

  constructor(entries: KeptJwk[], keepMs: number) {
    this.#entries = entries;
    this.#keepMs = keepMs;
  }

  get entries(): KeptJwk[] {
    return this.#entries;
  }

  update(entries: KeptJwk[]): void {
    this.#entries = entries;
    this.#view = undefined;
  }

  #current(): JwksView {
    const now = Date.now();
    if (!this.#view || now >= this.#view.until) {
      const view = viewSet(this.#entries, now, this.#keepMs);
      this.#view = {
        until: view.until,
        signing: privateJwk(this.#entries[view.signing]),
        published: publicJwks({ keys: this.#entries.filter((_, i) => view.keys[i].state !== 'expired') }),
      };
    }
    return this.#view;
  }

  signing(): JWK {
    return this.#current().signing;
  }

  published(): { keys: JWK[] } {
    return this.#current().published;
  }
}

/** A fixed JWKS (tests, the benchmark's tools): the first key signs, every key is published. */
export function staticKeys(set: { keys: KeptJwk[] }): SigningKeys {
  return new RotatingJwks(set.keys, 0);
}

/** Either form of the credential and ID-token keys that components take. */
export function signingKeysOf(keys: SigningKeys | { keys: KeptJwk[] }): SigningKeys {
  return 'signing' in keys ? keys : staticKeys(keys);
}

/** How long a retired key stays published, per set (D20). */
export interface KeepPeriods {
  idToken: number;
  credential: number;
  cookies: number;
}

/**
 * A retired ID-token key: as long as an ID token it signed is valid. A credential key: as long as a
 * credential it signed may be valid (the longest validity of any credential type) or a Status List Token
 * it signed (two ttl). Cookie secrets: as long as the longest signed cookie (the interaction's).
 */
export function keepPeriods(
  config: Pick<Config, 'lifetimes' | 'credentialTypes' | 'statusList'>,
  extraValidities: string[] = [],
): KeepPeriods {
  const now = new Date();
  const validities = [...config.credentialTypes.map((t) => t.validity), ...extraValidities];
  const longest = Math.max(
    ...validities.map((v) => credentialExpiry(v, now).getTime() - now.getTime()),
    2 * config.statusList.ttl * 1000,
  );
  return { idToken: config.lifetimes.token * 1000, credential: longest, cookies: config.lifetimes.interaction * 1000 };
}

/** The sets a rotation changes (the pairwise secret never rotates, D12). */
export type RotatingSet = 'idToken' | 'credential' | 'cookies';
export const ROTATING: readonly RotatingSet[] = ['idToken', 'credential', 'cookies'];

/**
 * The keys an instance signs and verifies with, kept current (D20): every `reloadMs` it looks at where
 * each set came from at start-up (its key file, or its store key) and takes a changed set, so a key that
 * `npm run keys -- rotate` added is published by every instance within that interval, long before it
 * signs. Which key signs follows from the dates the set carries, alike on every instance.
 */
export class KeyRing {
  readonly idToken: RotatingJwks;
  readonly credential: RotatingJwks;
  readonly cookieKeys: CookieKeys;
  /** D12: never rotated; also the root of the secrets derived for PIN hashes and nonces */
  readonly pairwise: string;
  #cookies: SecretEntry[];
  readonly #keep: KeepPeriods;
  readonly #origins: Map<RotatingSet, KeyOrigin>;
  /** per set, the last text taken, and for key files the modification stamp last looked at */
  readonly #seen = new Map<RotatingSet, string>();
  readonly #stamps = new Map<RotatingSet, string>();
  readonly #store?: Store;
  readonly #logger?: Logger;
  #timer?: NodeJS.Timeout;
  #reloading?: Promise<void>;

  /** with the local issuer CA: certifies a reloaded credential set's keys that have no fitting leaf (one an operator added by hand) */
  readonly #certify?: (set: { keys: KeptJwk[] }) => Promise<{ keys: KeptJwk[] }>;

  constructor(
    keys: KeySet,
    origins: KeyOrigin[],
    o: {
      keep: KeepPeriods;
      store?: Store;
      logger?: Logger;
      certifyCredential?: (set: { keys: KeptJwk[] }) => Promise<{ keys: KeptJwk[] }>;
    },
  ) {
    this.#certify = o.certifyCredential;
    this.#keep = o.keep;
    this.#store = o.store;
    this.#logger = o.logger;
    this.#origins = new Map(origins.filter((x) => x.set !== 'pairwise').map((x) => [x.set as RotatingSet, x]));
    this.idToken = new RotatingJwks(keys.idToken.keys, o.keep.idToken);
    this.credential = new RotatingJwks(keys.credential.keys, o.keep.credential);
    this.#cookies = keys.cookies;
    this.cookieKeys = new CookieKeys(() => this.#cookieSecrets());
    this.pairwise = keys.pairwise[0];
    this.#seen.set('idToken', JSON.stringify(keys.idToken));
    this.#seen.set('credential', JSON.stringify(keys.credential));
    this.#seen.set('cookies', JSON.stringify(keys.cookies));
  }

  /** The cookie secrets, the signing one first, without those past their keep period. */
  #cookieSecrets(): { secrets: string[]; until: number } {
    const view: SetView = viewSet(this.#cookies, Date.now(), this.#keep.cookies);
    const kept = view.keys
      .filter((k) => k.state !== 'expired' && k.index !== view.signing)
      .map((k) => secretOf(this.#cookies[k.index]));
    return { secrets: [secretOf(this.#cookies[view.signing]), ...kept], until: view.until };
  }

  /** Looks at every set's source every `reloadMs` (unref'd: it never keeps a process alive). */
  start(reloadMs: number): void {
    this.#timer ??= setInterval(() => void this.reload(), reloadMs);
    this.#timer.unref();
  }

  close(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
  }

  /** Takes every set whose source changed; a source that cannot be read leaves the keys as they are. */
  reload(): Promise<void> {
    this.#reloading ??= (async () => {
      for (const set of ROTATING) {
        try {
          await this.#reloadSet(set);
        } catch (err) {
          this.#logger?.warn(
            { keySet: set, err: (err as Error).message },
            'keys: cannot reload a key set; keeping the keys loaded before',
          );
        }
      }
    })().finally(() => (this.#reloading = undefined));
    return this.#reloading;
  }

  async #reloadSet(set: RotatingSet): Promise<void> {
    const origin = this.#origins.get(set);
    if (!origin) return;
    let value: unknown;
    let where: string;
    if (origin.origin === 'store' || origin.origin === 'generated-store') {
      if (!this.#store) return;
      where = `store key ${KEY_STORE_KEYS[set]}`;
      value = await this.#store.get(KEY_STORE_KEYS[set]);
    } else {
      where = origin.file;
      // a cheap look first: most reloads find the file as it was
      const { mtimeMs, size } = await stat(origin.file);
      const stamp = `${mtimeMs}:${size}`;
      if (this.#stamps.get(set) === stamp) return;
      this.#stamps.set(set, stamp);
      value = JSON.parse(await readFile(origin.file, 'utf8'));
    }
    if (value === undefined) return;
    const text = JSON.stringify(value);
    if (this.#seen.get(set) === text) return;
    let checked = KINDS[set].check(where, value);
    if (set === 'credential' && this.#certify) checked = await this.#certify(checked as { keys: KeptJwk[] });
    this.#seen.set(set, text);
    if (set === 'cookies') {
      this.#cookies = checked as SecretEntry[];
      this.cookieKeys.changed();
    } else {
      this[set].update((checked as { keys: KeptJwk[] }).keys);
    }
    this.#logger?.info({ keySet: set, source: where }, 'keys: reloaded a changed key set');
  }
}
