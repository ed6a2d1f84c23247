import type { Redis, Cluster } from 'ioredis';
import { connectRedis, type RedisSpec } from './redisConnect.js';
import { jsonOf, KEEP_SLACK_SECONDS, type Store } from './types.js';
import { defineScripts } from './redisScripts.js';

/**
 * Redis is unreachable. Shaped so that oidc-provider's own error handler answers it as it is, 503
 * `temporarily_unavailable` (its `expose`/`statusCode`/`error_description` convention), and so does ours.
 */
export class StoreUnavailableError extends Error {
  readonly status = 503;
  readonly statusCode = 503;
  readonly expose = true;
  readonly error_description = 'the service cannot reach its store right now; try again in a moment';
  constructor(cause?: unknown) {
    super('temporarily_unavailable', { cause });
    this.name = 'StoreUnavailableError';
  }
}

/** A key's Redis Cluster hash tag: the text between its first `{` and the next `}`, when not empty. */
export function hashTag(key: string): string | undefined {
  const open = key.indexOf('{');
  if (open === -1) return undefined;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : undefined;
}

/** A stored value as JSON text, or none. */
function parseValue<T>(raw: string | null): T | undefined {
  return raw === null ? undefined : (JSON.parse(raw) as T);
}

const nothing = (): void => undefined;
const asIs = <T>(reply: T): T => reply;

function unavailable(err: unknown): never {
  throw new StoreUnavailableError(err);
}

/**
 * Every operation touches one key, or (getMany) keys sharing one hash tag, so one slot, so the store
 * works the same on a single Redis, behind Sentinel, and on a Cluster (D14). Single-use operations are single
 * commands (GETDEL, SET NX) or scripts, never read-then-write.
 */
export class RedisStore implements Store {
  readonly kind = 'redis' as const;
  readonly client: Redis | Cluster;
  readonly #prefix: string;
  /** told of every operation that failed because Redis could not be reached (metrics: vc_store_errors_total) */
  readonly #unavailable = new Set<() => void>();

  constructor(client: Redis | Cluster, prefix: string) {
    this.client = client;
    this.#prefix = prefix;
    defineScripts(client);
  }

  #key(key: string): string {
    return `${this.#prefix}${key}`;
  }

  /**
   * Calls `listener` for every operation that fails because Redis cannot be reached (the store knows
   * nothing of metrics: the service counts them). Returns how to stop.
   */
  onUnavailable(listener: () => void): () => void {
    this.#unavailable.add(listener);
    return () => void this.#unavailable.delete(listener);
  }

  /** One command: its reply through `read`, a failure to reach Redis as StoreUnavailableError. */
  #command<R, T>(op: () => Promise<R>, read: (reply: R) => T): Promise<T> {
    let reply: Promise<R>;
    try {
      reply = op();
    } catch (err) {
      this.#tell();
      return Promise.reject(new StoreUnavailableError(err));
    }
    return reply.then(read, (err) => {
      this.#tell();
      return unavailable(err);
    });
  }

  /** A script the constructor defined (ioredis adds it to the client as a command), with its arguments. */
  #script<R>(name: string): (...args: (string | number)[]) => Promise<R> {
    const client = this.client as unknown as Record<string, (...args: (string | number)[]) => Promise<R>>;
    return client[name].bind(this.client);
  }

  #tell(): void {
    for (const listener of this.#unavailable) listener();
  }

  get<T>(key: string): Promise<T | undefined> {
    return this.#command(() => this.client.get(this.#key(key)), parseValue<T>);
  }

  getMany(keys: readonly string[]): Promise<unknown[]> {
    const full = keys.map((k) => this.#key(k));
    const tag = full.length > 1 ? hashTag(full[0]) : undefined;
    // one MGET when every key is in the first one's slot (same hash tag), as a Cluster requires
    if (tag === undefined || full.some((k) => hashTag(k) !== tag)) return Promise.all(keys.map((k) => this.get(k)));
    return this.#command(
      () => this.client.mget(...full),
      (raws) => raws.map(parseValue),
    );
  }

  set(key: string, value: unknown, ttlSeconds: number): Promise<void> {
    return this.#command(
      () => this.client.set(this.#key(key), jsonOf(value), 'EX', Math.max(1, Math.ceil(ttlSeconds))),
      nothing,
    );
  }

  setIfAbsent(key: string, value: unknown, ttlSeconds: number): Promise<boolean> {
    return this.#command(
      () => this.client.set(this.#key(key), jsonOf(value), 'EX', Math.max(1, Math.ceil(ttlSeconds)), 'NX'),
      (ok) => ok === 'OK',
    );
  }

  setPermanentIfAbsent(key: string, value: unknown): Promise<boolean> {
    return this.#command(
      () => this.client.set(this.#key(key), jsonOf(value), 'NX'),
      (ok) => ok === 'OK',
    );
  }

  replacePermanent(key: string, expected: unknown, value: unknown): Promise<boolean> {
    const run = this.#script<number>('vcReplace');
    return this.#command(
      () => run(this.#key(key), JSON.stringify(expected), jsonOf(value)),
      (written) => written === 1,
    );
  }

  setIfAbsentWith(
    key: string,
    value: unknown,
    ttlSeconds: number,
    companion: { key: string; value: unknown; ttlSeconds: number },
  ): Promise<boolean> {
    const run = this.#script<number>('vcSetIfAbsentWith');
    const ttl = (t: number) => Math.max(1, Math.ceil(t));
    return this.#command(
      () =>
        run(
          this.#key(key),
          this.#key(companion.key),
          jsonOf(value),
          ttl(ttlSeconds),
          jsonOf(companion.value),
          ttl(companion.ttlSeconds),
        ),
      (written) => written === 1,
    );
  }

  consume<T>(key: string): Promise<T | undefined> {
    return this.#command(() => this.client.getdel(this.#key(key)), parseValue<T>);
  }

  markOnce(
    markerKey: string,
    value: unknown,
    recordKey: string,
    opts: { ttlSeconds?: number; shortenRecord?: boolean } = {},
  ): Promise<boolean> {
    const run = this.#script<number>('vcMarkOnce');
    const capMs = opts.ttlSeconds === undefined ? 0 : Math.max(1, Math.ceil(opts.ttlSeconds)) * 1000;
    return this.#command(
      () => run(this.#key(markerKey), this.#key(recordKey), jsonOf(value), capMs, opts.shortenRecord ? '1' : '0'),
      (marked) => marked === 1,
    );
  }

  delete(...keys: string[]): Promise<void> {
    if (!keys.length) return Promise.resolve();
    // keys of different slots cannot share a DEL on a Cluster: one DEL per hash tag (per key without one)
    const groups = new Map<string, string[]>();
    for (const key of keys) {
      const full = this.#key(key);
      const group = hashTag(full) ?? full;
      groups.set(group, [...(groups.get(group) ?? []), full]);
    }
    return this.#command(() => Promise.all([...groups.values()].map((g) => this.client.del(...g))), nothing);
  }

  shorten(keys: readonly string[], ttlSeconds: number): Promise<void> {
    if (!keys.length) return Promise.resolve();
    const ttl = Math.max(1, Math.ceil(ttlSeconds));
    // EXPIRE LT: only ever sooner; a key that does not exist stays absent
    return this.#command(() => Promise.all(keys.map((k) => this.client.expire(this.#key(k), ttl, 'LT'))), nothing);
  }

  takeFree(
    counterKey: string,
    limit: number,
    candidates: readonly string[],
    value: unknown,
    ttlSeconds: number,
    keepKey: string,
  ): Promise<{ full: boolean; taken?: number }> {
    const run = this.#script<number>('vcTakeFree');
    const keys = [counterKey, keepKey, ...candidates].map((k) => this.#key(k));
    const ttl = Math.max(1, Math.ceil(ttlSeconds));
    return this.#command(
      () => run(keys.length, ...keys, limit, jsonOf(value), ttl, KEEP_SLACK_SECONDS),
      (at) => (at === -2 ? { full: true } : { full: false, ...(at >= 0 ? { taken: at } : {}) }),
    );
  }

  attempt(
    key: string,
    failed: boolean,
    limit: number,
    ttlSeconds: number,
  ): Promise<{ allowed: boolean; count: number }> {
    const run = this.#script<[number, number]>('vcAttempt');
    return this.#command(
      () => run(this.#key(key), failed ? '1' : '0', limit, Math.max(1, Math.ceil(ttlSeconds))),
      ([allowed, count]) => ({ allowed: allowed === 1, count }),
    );
  }

  addToSet(key: string, member: string, ttlSeconds: number): Promise<void> {
    const run = this.#script<number>('vcSaddWithTtl');
    return this.#command(() => run(this.#key(key), member, Math.max(1, Math.ceil(ttlSeconds))), nothing);
  }

  addToList(key: string, member: string, ttlSeconds: number): Promise<void> {
    const full = this.#key(key);
    const ttl = Math.max(1, Math.ceil(ttlSeconds));
    // the first member, the common case, is one SET NX; a later one is appended by the script
    return this.#command(
      async () =>
        (await this.client.set(full, member, 'EX', ttl, 'NX')) === 'OK' ||
        this.#script<number>('vcAppendWithTtl')(full, member, ttl),
      nothing,
    );
  }

  listed(key: string): Promise<string[]> {
    return this.#command(
      () => this.client.get(this.#key(key)),
      (text) => [...new Set((text ?? '').split(' ').filter(Boolean))],
    );
  }

  members(key: string): Promise<string[]> {
    return this.#command(() => this.client.smembers(this.#key(key)), asIs);
  }

  schedule(key: string, member: string, atMs: number, ttlSeconds: number): Promise<void> {
    const run = this.#script<number>('vcSchedule');
    return this.#command(
      () => run(this.#key(key), member, Math.round(atMs), Math.max(1, Math.ceil(ttlSeconds))),
      nothing,
    );
  }

  claimDue(key: string, nowMs: number, leaseMs: number, limit: number): Promise<string[]> {
    const run = this.#script<string[]>('vcClaimDue');
    return this.#command(() => run(this.#key(key), Math.round(nowMs), Math.round(nowMs + leaseMs), limit), asIs);
  }

  unschedule(key: string, member: string): Promise<void> {
    return this.#command(() => this.client.zrem(this.#key(key), member), nothing);
  }

  scheduled(key: string, fromMs: number, toMs: number): Promise<{ member: string; at: number }[]> {
    return this.#command(
      () => this.client.zrangebyscore(this.#key(key), Math.round(fromMs), Math.round(toMs), 'WITHSCORES'),
      (flat) => {
        const out: { member: string; at: number }[] = [];
        for (let i = 0; i < flat.length; i += 2) out.push({ member: flat[i], at: Number(flat[i + 1]) });
        return out;
      },
    );
  }

  ping(): Promise<void> {
    return this.#command(() => this.client.ping(), nothing);
  }

  async close(): Promise<void> {
    this.client.disconnect();
  }
}

/** A store on the Redis the config names (see connectRedis). */
export async function createRedisStore(spec: RedisSpec, readyWithinMs = 5_000): Promise<RedisStore> {
  const { client, keyPrefix } = await connectRedis(spec, readyWithinMs);
  return new RedisStore(client, keyPrefix);
}
