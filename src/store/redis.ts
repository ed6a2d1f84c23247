import { connectRedis, type RedisSpec } from './redisConnect.js';
import { jsonOf, KEEP_SLACK_SECONDS, type Store } from './types.js';
import { hashTag } from './redisCalls.js';
import { RedisCalls } from './redisBase.js';

export { hashTag };
export { StoreUnavailableError } from './redisBase.js';

/** A stored value as JSON text, or none. */
function parseValue<T>(raw: string | null): T | undefined {
  return raw === null ? undefined : (JSON.parse(raw) as T);
}

const nothing = (): void => undefined;
const asIs = <T>(reply: T): T => reply;

/**
 * Every operation touches one key, or (getMany) keys sharing one hash tag, so one slot, so the store
 * works the same on a single Redis, behind Sentinel, and on a Cluster (D14). Single-use operations are
 * scripts, never read-then-write. How each waits for Redis and tries again: RedisCalls.
 */
export class RedisStore extends RedisCalls implements Store {
  readonly kind = 'redis' as const;

  get<T>(key: string): Promise<T | undefined> {
    return this.command(() => this.client.get(this.key(key)), parseValue<T>);
  }

  getMany(keys: readonly string[]): Promise<unknown[]> {
    const full = keys.map((k) => this.key(k));
    const tag = full.length > 1 ? hashTag(full[0]) : undefined;
    // one MGET when every key is in the first one's slot (same hash tag), as a Cluster requires
    if (tag === undefined || full.some((k) => hashTag(k) !== tag)) return Promise.all(keys.map((k) => this.get(k)));
    return this.command(
      () => this.client.mget(...full),
      (raws) => raws.map(parseValue),
    );
  }

  set(key: string, value: unknown, ttlSeconds: number): Promise<void> {
    return this.command(
      () => this.client.set(this.key(key), jsonOf(value), 'EX', Math.max(1, Math.ceil(ttlSeconds))),
      nothing,
    );
  }

  setIfAbsent(key: string, value: unknown, ttlSeconds: number): Promise<boolean> {
    return this.#setOnce(key, value, Math.max(1, Math.ceil(ttlSeconds)));
  }

  setPermanentIfAbsent(key: string, value: unknown): Promise<boolean> {
    return this.#setOnce(key, value, 0);
  }

  /** SET NX with a receipt; `ttl` 0: without expiry. */
  #setOnce(key: string, value: unknown, ttl: number): Promise<boolean> {
    const full = this.key(key);
    return this.once(
      full,
      (receipt) => this.script<number>('vcSetIfAbsent')(full, receipt, jsonOf(value), ttl, this.receiptTtl),
      (written) => written === 1,
      (receipt) => this.undoWrite(receipt, full),
    );
  }

  replacePermanent(key: string, expected: unknown, value: unknown): Promise<boolean> {
    const run = this.script<number>('vcReplace');
    return this.command(
      () => run(this.key(key), JSON.stringify(expected), jsonOf(value)),
      (written) => written === 1,
    );
  }

  setIfAbsentWith(
    key: string,
    value: unknown,
    ttlSeconds: number,
    companion: { key: string; value: unknown; ttlSeconds: number },
  ): Promise<boolean> {
    const [full, other] = [this.key(key), this.key(companion.key)];
    const ttl = (t: number) => Math.max(1, Math.ceil(t));
    const [v, cv] = [jsonOf(value), jsonOf(companion.value)];
    return this.once(
      full,
      (receipt) =>
        this.script<number>('vcSetIfAbsentWith')(
          full,
          other,
          receipt,
          v,
          ttl(ttlSeconds),
          cv,
          ttl(companion.ttlSeconds),
          this.receiptTtl,
        ),
      (written) => written === 1,
      (receipt) => this.undoWrite(receipt, full, other),
    );
  }

  consume<T>(key: string): Promise<T | undefined> {
    const full = this.key(key);
    return this.once(
      full,
      (receipt) => this.script<string | null>('vcConsume')(full, receipt, this.receiptTtl),
      parseValue<T>,
      (receipt) => this.undoConsume(receipt, full),
    );
  }

  markOnce(
    markerKey: string,
    value: unknown,
    recordKey: string,
    opts: { ttlSeconds?: number; shortenRecord?: boolean } = {},
  ): Promise<boolean> {
    const [marker, record] = [this.key(markerKey), this.key(recordKey)];
    const capMs = opts.ttlSeconds === undefined ? 0 : Math.max(1, Math.ceil(opts.ttlSeconds)) * 1000;
    const shorten = opts.shortenRecord ? '1' : '0';
    return this.once(
      marker,
      (receipt) =>
        this.script<number>('vcMarkOnce')(marker, record, receipt, jsonOf(value), capMs, shorten, this.receiptTtl),
      (marked) => marked === 1,
      (receipt) => this.undoWrite(receipt, marker),
    );
  }

  delete(...keys: string[]): Promise<void> {
    if (!keys.length) return Promise.resolve();
    // keys of different slots cannot share a DEL on a Cluster: one DEL per hash tag (per key without one)
    const groups = new Map<string, string[]>();
    for (const key of keys) {
      const full = this.key(key);
      const group = hashTag(full) ?? full;
      groups.set(group, [...(groups.get(group) ?? []), full]);
    }
    return this.command(() => Promise.all([...groups.values()].map((g) => this.client.del(...g))), nothing);
  }

  shorten(keys: readonly string[], ttlSeconds: number): Promise<void> {
    if (!keys.length) return Promise.resolve();
    const ttl = Math.max(1, Math.ceil(ttlSeconds));
    // EXPIRE LT: only ever sooner; a key that does not exist stays absent
    return this.command(() => Promise.all(keys.map((k) => this.client.expire(this.key(k), ttl, 'LT'))), nothing);
  }

  takeFree(
    counterKey: string,
    limit: number,
    candidates: readonly string[],
    value: unknown,
    ttlSeconds: number,
    keepKey: string,
  ): Promise<{ full: boolean; taken?: number }> {
    const keys = [counterKey, keepKey, ...candidates].map((k) => this.key(k));
    const ttl = Math.max(1, Math.ceil(ttlSeconds));
    const v = jsonOf(value);
    // an undone take leaves its entry to expire with the credential it was for (nothing reads an entry
    // without its SerialNumber's record)
    return this.once(
      keys[0],
      (receipt) =>
        this.script<number>('vcTakeFree')(
          keys.length + 1,
          ...keys,
          receipt,
          limit,
          v,
          ttl,
          KEEP_SLACK_SECONDS,
          this.receiptTtl,
        ),
      (at) => (at === -2 ? { full: true } : { full: false, ...(at >= 0 ? { taken: at } : {}) }),
      (receipt) => this.undoWrite(receipt),
    );
  }

  attempt(
    key: string,
    failed: boolean,
    limit: number,
    ttlSeconds: number,
  ): Promise<{ allowed: boolean; count: number }> {
    const full = this.key(key);
    const ttl = Math.max(1, Math.ceil(ttlSeconds));
    // an attempt whose outcome stays unknown is not taken back: a wrong PIN may have been counted
    return this.once(
      full,
      (receipt) =>
        this.script<[number, number]>('vcAttempt')(full, receipt, failed ? '1' : '0', limit, ttl, this.receiptTtl),
      ([allowed, count]) => ({ allowed: allowed === 1, count }),
      (receipt) => this.undoWrite(receipt),
    );
  }

  addToSet(key: string, member: string, ttlSeconds: number): Promise<void> {
    const run = this.script<number>('vcSaddWithTtl');
    return this.command(() => run(this.key(key), member, Math.max(1, Math.ceil(ttlSeconds))), nothing);
  }

  addToList(key: string, member: string, ttlSeconds: number): Promise<void> {
    const full = this.key(key);
    const ttl = Math.max(1, Math.ceil(ttlSeconds));
    // the first member, the common case, is one SET NX; a later one is appended by the script
    return this.command(
      async () =>
        (await this.client.set(full, member, 'EX', ttl, 'NX')) === 'OK' ||
        this.script<number>('vcAppendWithTtl')(full, member, ttl),
      nothing,
    );
  }

  listed(key: string): Promise<string[]> {
    return this.command(
      () => this.client.get(this.key(key)),
      (text) => [...new Set((text ?? '').split(' ').filter(Boolean))],
    );
  }

  members(key: string): Promise<string[]> {
    return this.command(() => this.client.smembers(this.key(key)), asIs);
  }

  schedule(key: string, member: string, atMs: number, ttlSeconds: number): Promise<void> {
    const run = this.script<number>('vcSchedule');
    return this.command(
      () => run(this.key(key), member, Math.round(atMs), Math.max(1, Math.ceil(ttlSeconds))),
      nothing,
    );
  }

  claimDue(key: string, nowMs: number, leaseMs: number, limit: number): Promise<string[]> {
    const run = this.script<string[]>('vcClaimDue');
    return this.command(() => run(this.key(key), Math.round(nowMs), Math.round(nowMs + leaseMs), limit), asIs);
  }

  unschedule(key: string, member: string): Promise<void> {
    return this.command(() => this.client.zrem(this.key(key), member), nothing);
  }

  scheduled(key: string, fromMs: number, toMs: number): Promise<{ member: string; at: number }[]> {
    return this.command(
      () => this.client.zrangebyscore(this.key(key), Math.round(fromMs), Math.round(toMs), 'WITHSCORES'),
      (flat) => {
        const out: { member: string; at: number }[] = [];
        for (let i = 0; i < flat.length; i += 2) out.push({ member: flat[i], at: Number(flat[i + 1]) });
        return out;
      },
    );
  }

  ping(): Promise<void> {
    return this.command(() => this.client.ping(), nothing);
  }

  async close(): Promise<void> {
    this.client.disconnect();
  }
}

/** A store on the Redis the config names (see connectRedis). */
export async function createRedisStore(spec: RedisSpec, readyWithinMs = 5_000): Promise<RedisStore> {
  const { client, keyPrefix, commandTimeoutMs } = await connectRedis(spec, readyWithinMs);
  return new RedisStore(client, keyPrefix, commandTimeoutMs);
}
