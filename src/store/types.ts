/**
 * One store serves oidc-provider's models and the service's own records (D14). Values are JSON.
 * Every write carries a TTL in seconds: nothing outlives its lifetime. Operations that make an
 * artefact single-use (`consume`, `markOnce`, `setIfAbsent`, `incr`) are atomic in every implementation.
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
  /** Atomically reads and deletes: of concurrent callers, exactly one gets the value. */
  consume<T = unknown>(key: string): Promise<T | undefined>;
  /**
   * Atomically writes `value` under `markerKey` unless it exists, and only while `recordKey` exists; the
   * marker expires with the record. True when this call wrote it: of concurrent callers, exactly one
   * (oidc-provider's single-use codes, D16). Both keys share a hash tag (one Redis Cluster slot).
   */
  markOnce(markerKey: string, value: unknown, recordKey: string): Promise<boolean>;
  delete(...keys: string[]): Promise<void>;
  /** Atomically increments a counter, creating it with the TTL on first use; returns the new value. */
  incr(key: string, ttlSeconds: number): Promise<number>;
  /** Adds a member to a set key (creating it with the TTL, extending the TTL to at least ttlSeconds). */
  addToSet(key: string, member: string, ttlSeconds: number): Promise<void>;
  members(key: string): Promise<string[]>;
  /** Reachability, for /readyz. */
  ping(): Promise<void>;
  close(): Promise<void>;
}
