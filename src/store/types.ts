/** How much longer than asked `takeFree` may keep its `keepKey` alive, so that it extends it rarely. */
export const KEEP_SLACK_SECONDS = 3600;

/**
 * A value already serialised as JSON by its caller (who keeps the text too): `set` writes the text as it
 * is, rather than serialising the value a second time.
 */
export class JsonText {
  constructor(readonly text: string) {}
}

/** A value's JSON text, as both stores keep it (`null` for a value JSON has no text for). */
export const jsonOf = (value: unknown): string =>
  value instanceof JsonText ? value.text : (JSON.stringify(value) ?? 'null');

/**
 * One store serves oidc-provider's models and the service's own records (D14). Values are JSON (a
 * `JsonText` is written as the text it holds).
 * Every write carries a TTL in seconds: nothing outlives its lifetime (the one exception,
 * `setPermanentIfAbsent`, is for the generated key sets). Operations that make an
 * artefact single-use or bounded (`consume`, `markOnce`, `setIfAbsent`, `attempt`) are atomic in every implementation.
 */
export interface Store {
  readonly kind: 'memory' | 'redis';
  get<T = unknown>(key: string): Promise<T | undefined>;
  /**
   * Several keys in one round trip (Redis MGET), answered in order. Keys that share a hash tag (`{id}`)
   * are one Redis Cluster slot and are read together; other keys are read one by one.
   */
  getMany(keys: readonly string[]): Promise<unknown[]>;
  set(key: string, value: unknown, ttlSeconds: number): Promise<void>;
  /** Writes only when the key does not exist; true when this call wrote it. */
  setIfAbsent(key: string, value: unknown, ttlSeconds: number): Promise<boolean>;
  /**
   * `setIfAbsent`, and when this call wrote `key`, `companion` too (its own value and TTL), in one atomic
   * step: a companion is never written beside a key that already existed. Both keys share a hash tag.
   */
  setIfAbsentWith(
    key: string,
    value: unknown,
    ttlSeconds: number,
    companion: { key: string; value: unknown; ttlSeconds: number },
  ): Promise<boolean>;
  /**
   * The one write without a TTL: as setIfAbsent (atomic, true when this call wrote it), but the record
   * never expires. Only for what lives as long as the deployment, the generated key sets (D20): a key
   * with no TTL is also never evicted by Redis' volatile-* eviction policies.
   */
  setPermanentIfAbsent(key: string, value: unknown): Promise<boolean>;
  /**
   * Compare and set of a permanent record (key rotation, D20): writes `value` only while the record still
   * holds `expected` (as written, JSON), so of two concurrent rotations one wins and the other retries.
   */
  replacePermanent(key: string, expected: unknown, value: unknown): Promise<boolean>;
  /** Atomically reads and deletes: of concurrent callers, exactly one gets the value. */
  consume<T = unknown>(key: string): Promise<T | undefined>;
  /**
   * Atomically writes `value` under `markerKey` unless it exists, and only while `recordKey` exists; the
   * marker expires with the record, or after `opts.ttlSeconds` when that is sooner. True when this call
   * wrote it: of concurrent callers, exactly one (oidc-provider's single-use codes, D16). With
   * `opts.shortenRecord`, the record then expires with the marker too (a request used up: nothing of it
   * is read again). Both keys share a hash tag (one Redis Cluster slot).
   */
  markOnce(
    markerKey: string,
    value: unknown,
    recordKey: string,
    opts?: { ttlSeconds?: number; shortenRecord?: boolean },
  ): Promise<boolean>;
  /** Deletes the keys; keys that share a hash tag in one command. */
  delete(...keys: string[]): Promise<void>;
  /**
   * Each key that exists expires in `ttlSeconds` at the latest (a TTL already shorter is kept): what a
   * finished flow still holds, kept only briefly. One command per key, sent together.
   */
  shorten(keys: readonly string[], ttlSeconds: number): Promise<void>;
  /**
   * A free entry of a bounded table (a status list, D18), in one atomic step: refused (`full`) once
   * `counterKey` has counted `limit` entries; otherwise counts one and writes `value` under the first of
   * `candidates` that does not exist, with `ttlSeconds`, and makes `keepKey` (a set) live at least as
   * long (extended by up to `KEEP_SLACK_SECONDS` more at a time, so that most calls leave it as it is).
   * `taken` is the position of the candidate written, undefined when all existed. Every key shares one
   * hash tag.
   */
  takeFree(
    counterKey: string,
    limit: number,
    candidates: readonly string[],
    value: unknown,
    ttlSeconds: number,
    keepKey: string,
  ): Promise<{ full: boolean; taken?: number }>;
  /**
   * One attempt against a limit, decided atomically: refused once the counter under `key` has reached
   * `limit`; otherwise allowed, and a failed attempt counts (the counter is created with the TTL). Returns
   * whether it was allowed and the count after it: of concurrent attempts, no more than `limit` failed
   * ones are ever allowed, and none after them (D10's PIN attempts).
   */
  attempt(
    key: string,
    failed: boolean,
    limit: number,
    ttlSeconds: number,
  ): Promise<{ allowed: boolean; count: number }>;
  /** Adds a member to a set key (creating it with the TTL, extending the TTL to at least ttlSeconds). */
  addToSet(key: string, member: string, ttlSeconds: number): Promise<void>;
  members(key: string): Promise<string[]>;
  /**
   * Adds a word (no whitespace) to a list kept as one short text (creating it with the TTL, extending
   * the TTL to at least ttlSeconds): an index of a few members, far smaller and cheaper than a set.
   * `listed` reads it; a member added twice is listed once.
   */
  addToList(key: string, member: string, ttlSeconds: number): Promise<void>;
  listed(key: string): Promise<string[]>;
  /**
   * A schedule (a Redis sorted set): `member` is due at `atMs` (epoch ms); the key lives at least
   * `ttlSeconds` more. Scheduling a member again moves it.
   */
  schedule(key: string, member: string, atMs: number, ttlSeconds: number): Promise<void>;
  /**
   * Takes up to `limit` members due by `nowMs`, each leased: its due time moves to `nowMs + leaseMs`, in
   * one atomic step, so of concurrent callers each member goes to one, and a member whose taker died is
   * due again when the lease ends.
   */
  claimDue(key: string, nowMs: number, leaseMs: number, limit: number): Promise<string[]>;
  unschedule(key: string, member: string): Promise<void>;
  /** The members due between `fromMs` and `toMs`, earliest first, with their due times. */
  scheduled(key: string, fromMs: number, toMs: number): Promise<{ member: string; at: number }[]>;
  /** Reachability, for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
