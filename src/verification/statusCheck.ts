import { decodeJwt, decodeProtectedHeader, type JWTVerifyGetKey } from 'jose';
import { OutboundFetch, OutboundRefused, OutboundTimeout, OutboundUnavailable } from '../http/outboundFetch.js';
import { IssuerKeysUnavailable } from './issuerKeys.js';
import { verifyWithKeys } from './jws.js';
import {
  decodeStatusList,
  DEFAULT_MAX_ENTRIES,
  StatusListDecodeError,
  statusAt,
  type StatusListBytes,
} from './statusListBytes.js';

/** draft-ietf-oauth-status-list: at most this long per fetch, this large, and this many same-origin redirects. */
const FETCH_TIMEOUT_MS = 5000;
const MAX_BYTES = 1024 * 1024;
const MAX_REDIRECTS = 3;
/** A token without `ttl` is used this long (seconds); none is used longer than a day. */
const DEFAULT_CACHE = 300;
const MAX_CACHE = 86_400;
const ALGS = ['ES256', 'ES384', 'EdDSA'];
/** The cache's inflated bytes, all lists together, at least this much (and room for one list of the largest size); the oldest go first. */
const CACHE_BYTES = 64 * 1024 * 1024;

/** The list cannot be had: network, HTTP status, size, a redirect to another origin, not https, a refused address. */
export class StatusListUnavailable extends Error {}
/** The list was had, but is not one to trust: signature, `typ`, `sub`, expiry, encoding. */
export class StatusListInvalid extends Error {}

interface Cached {
  /** the list as it was packed (1 to 8 bits an entry), never expanded */
  list: StatusListBytes;
  /** epoch ms */
  until: number;
}

/**
 * Status checks of presented credentials (D18, draft-ietf-oauth-status-list §8): the Status List Token a
 * credential's `status.status_list.uri` names is fetched under the outbound rules (src/http/outboundFetch.ts:
 * https, no private address unless allowed; here at most 3 redirects within the origin, 5 s, 1 MiB), verified with the keys of the credential's issuer, its `sub`
 * must be the URI, and it is cached for its `ttl` (within its `exp`). Failures are never cached. A list
 * of more than `maxEntries` entries (`statusList.maxEntries`) is refused as it is inflated.
 */
export class StatusChecks {
  readonly #outbound: OutboundFetch;
  readonly #maxEntries: number;
  readonly #cacheBytes: number;
  readonly #cache = new Map<string, Cached>();
  readonly #loading = new Map<string, Promise<Cached>>();

  constructor(outbound: OutboundFetch = new OutboundFetch(), maxEntries = DEFAULT_MAX_ENTRIES) {
    this.#outbound = outbound;
    this.#maxEntries = maxEntries;
    // a list of 8-bit entries is the largest: maxEntries bytes
    this.#cacheBytes = Math.max(CACHE_BYTES, maxEntries);
  }

  /**
   * The status value of entry `idx` of the list at `uri`, a list signed by one of `keys`, the keys of
   * `issuer`. Cached per issuer and URI: a list verified with one issuer's keys says nothing for another's.
   */
  async status(issuer: string, uri: string, idx: number, keys: JWTVerifyGetKey, now = Date.now()): Promise<number> {
    const key = JSON.stringify([issuer, uri]);
    let cached = this.#cache.get(key);
    if (!cached || cached.until <= now) {
      this.#cache.delete(key);
      // concurrent checks of one list share one fetch
      let loading = this.#loading.get(key);
      if (!loading) {
        loading = this.#load(uri, keys, now).finally(() => this.#loading.delete(key));
        this.#loading.set(key, loading);
      }
      cached = await loading;
      this.#keep(key, cached);
    }
    const value = statusAt(cached.list, idx);
    if (value === undefined) throw new StatusListInvalid(`status_list.idx ${idx} is outside the status list`);
    return value;
  }

  /** Caches a list; the oldest lists leave while all of them hold more bytes than the budget. */
  #keep(key: string, cached: Cached): void {
    this.#cache.set(key, cached);
    let total = 0;
    for (const entry of this.#cache.values()) total += entry.list.bytes.byteLength;
    for (const [oldest, entry] of this.#cache) {
      if (total <= this.#cacheBytes || oldest === key) break;
      this.#cache.delete(oldest);
      total -= entry.list.bytes.byteLength;
    }
  }

  async #load(uri: string, keys: JWTVerifyGetKey, now: number): Promise<Cached> {
    const jwt = await this.#get(uri);
    let header: Record<string, unknown>;
    let payload: Record<string, unknown>;
    try {
      header = decodeProtectedHeader(jwt) as Record<string, unknown>;
      payload = decodeJwt(jwt) as Record<string, unknown>;
    } catch {
      throw new StatusListInvalid('the status list is not a JWT');
    }
    if (header.typ !== 'statuslist+jwt') throw new StatusListInvalid('the status list typ is not statuslist+jwt');
    try {
      await verifyWithKeys(jwt, keys, ALGS);
    } catch (err) {
      if (err instanceof IssuerKeysUnavailable)
        throw new StatusListUnavailable(`the issuer's keys are unavailable: ${err.message}`);
      throw new StatusListInvalid("the status list is not signed by the credential issuer's keys");
    }
    // §5.1: sub is the URI the list was fetched from
    if (payload.sub !== uri) throw new StatusListInvalid('the status list sub is not its URI');
    const seconds = Math.floor(now / 1000);
    if (typeof payload.exp === 'number' && payload.exp <= seconds)
      throw new StatusListInvalid('the status list has expired');
    if (typeof payload.iat !== 'number') throw new StatusListInvalid('the status list has no iat');
    let list: StatusListBytes;
    try {
      list = await decodeStatusList(payload.status_list, this.#maxEntries);
    } catch (err) {
      if (err instanceof StatusListDecodeError) throw new StatusListInvalid(err.message);
      throw err;
    }
    const ttl = typeof payload.ttl === 'number' && payload.ttl > 0 ? Math.min(payload.ttl, MAX_CACHE) : DEFAULT_CACHE;
    const until = Math.min(now + ttl * 1000, typeof payload.exp === 'number' ? payload.exp * 1000 : Infinity);
    return { list, until };
  }

  async #get(uri: string): Promise<string> {
    if (!URL.canParse(uri)) throw new StatusListInvalid('status_list.uri is not a URL');
    try {
      const text = await this.#outbound.get(uri, {
        what: 'the status list',
        accept: 'application/statuslist+jwt',
        maxBytes: MAX_BYTES,
        timeoutMs: FETCH_TIMEOUT_MS,
        redirects: MAX_REDIRECTS,
      });
      return text.trim();
    } catch (err) {
      if (err instanceof OutboundRefused || err instanceof OutboundUnavailable || err instanceof OutboundTimeout)
        throw new StatusListUnavailable(err.message);
      throw err;
    }
  }
}
