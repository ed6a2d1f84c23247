import { Redis, Cluster, type RedisOptions } from 'ioredis';
import type { Config } from '../config/schema.js';
import type { Store } from './types.js';

type RedisSpec = Exclude<Config['store'], 'memory'>;

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

/** Store.setIfAbsentWith: the companion is written only when the key was. */
const SET_IF_ABSENT_WITH = `if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'EX', ARGV[2]) then
  redis.call('SET', KEYS[2], ARGV[3], 'EX', ARGV[4])
  return 1
end
return 0`;

/** Store.attempt: refused at the limit; a failed attempt is counted (INCR, TTL on creation), in one step. */
const ATTEMPT = `local count = tonumber(redis.call('GET', KEYS[1]) or '0')
if count >= tonumber(ARGV[2]) then return {0, count} end
if ARGV[1] == '1' then
  count = redis.call('INCR', KEYS[1])
  if count == 1 then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
end
return {1, count}`;

/** SADD that extends the set's TTL to at least ARGV[2] seconds, in one step. */
const SADD_WITH_TTL = `redis.call('SADD', KEYS[1], ARGV[1])
local ttl = redis.call('TTL', KEYS[1])
if ttl < tonumber(ARGV[2]) then redis.call('EXPIRE', KEYS[1], ARGV[2]) end
return 1`;

/** Store.schedule: ZADD that extends the key's TTL to at least ARGV[3] seconds, in one step. */
const SCHEDULE = `redis.call('ZADD', KEYS[1], ARGV[2], ARGV[1])
local ttl = redis.call('TTL', KEYS[1])
if ttl < tonumber(ARGV[3]) then redis.call('EXPIRE', KEYS[1], ARGV[3]) end
return 1`;

/** Store.claimDue: the due members, each moved to now + lease, in one step. */
// compare and set of a record without TTL (key rotation): SET without EX keeps it permanent
const REPLACE = `if redis.call('GET', KEYS[1]) ~= ARGV[1] then return 0 end
redis.call('SET', KEYS[1], ARGV[2])
return 1`;

const CLAIM_DUE = `local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
for _, member in ipairs(due) do redis.call('ZADD', KEYS[1], 'XX', ARGV[2], member) end
return due`;

/**
 * Writes a marker next to a record, once, for as long as the record lives: SET NX with the record's
 * remaining lifetime, only while the record exists. 1 when this call wrote it. The record itself is
 * left as it was written.
 */
const MARK_ONCE = `local ttl = redis.call('PTTL', KEYS[2])
if ttl <= 0 then return 0 end
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ttl) then return 1 end
return 0`;

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
    client.defineCommand('vcAttempt', { numberOfKeys: 1, lua: ATTEMPT });
    client.defineCommand('vcSetIfAbsentWith', { numberOfKeys: 2, lua: SET_IF_ABSENT_WITH });
    client.defineCommand('vcSaddWithTtl', { numberOfKeys: 1, lua: SADD_WITH_TTL });
    client.defineCommand('vcMarkOnce', { numberOfKeys: 2, lua: MARK_ONCE });
    client.defineCommand('vcSchedule', { numberOfKeys: 1, lua: SCHEDULE });
    client.defineCommand('vcClaimDue', { numberOfKeys: 1, lua: CLAIM_DUE });
    client.defineCommand('vcReplace', { numberOfKeys: 1, lua: REPLACE });
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
      () => this.client.set(this.#key(key), JSON.stringify(value), 'EX', Math.max(1, Math.ceil(ttlSeconds))),
      nothing,
    );
  }

  setIfAbsent(key: string, value: unknown, ttlSeconds: number): Promise<boolean> {
    return this.#command(
      () => this.client.set(this.#key(key), JSON.stringify(value), 'EX', Math.max(1, Math.ceil(ttlSeconds)), 'NX'),
      (ok) => ok === 'OK',
    );
  }

  setPermanentIfAbsent(key: string, value: unknown): Promise<boolean> {
    return this.#command(
      () => this.client.set(this.#key(key), JSON.stringify(value), 'NX'),
      (ok) => ok === 'OK',
    );
  }

  replacePermanent(key: string, expected: unknown, value: unknown): Promise<boolean> {
    const run = (
      this.client as unknown as { vcReplace(k: string, e: string, v: string): Promise<number> }
    ).vcReplace.bind(this.client);
    return this.#command(
      () => run(this.#key(key), JSON.stringify(expected), JSON.stringify(value)),
      (written) => written === 1,
    );
  }

  setIfAbsentWith(
    key: string,
    value: unknown,
    ttlSeconds: number,
    companion: { key: string; value: unknown; ttlSeconds: number },
  ): Promise<boolean> {
    const run = (
      this.client as unknown as {
        vcSetIfAbsentWith(k: string, c: string, v: string, t: number, cv: string, ct: number): Promise<number>;
      }
    ).vcSetIfAbsentWith.bind(this.client);
    const ttl = (t: number) => Math.max(1, Math.ceil(t));
    return this.#command(
      () =>
        run(
          this.#key(key),
          this.#key(companion.key),
          JSON.stringify(value),
          ttl(ttlSeconds),
          JSON.stringify(companion.value),
          ttl(companion.ttlSeconds),
        ),
      (written) => written === 1,
    );
  }

  consume<T>(key: string): Promise<T | undefined> {
    return this.#command(() => this.client.getdel(this.#key(key)), parseValue<T>);
  }

  markOnce(markerKey: string, value: unknown, recordKey: string): Promise<boolean> {
    const run = (
      this.client as unknown as { vcMarkOnce(m: string, r: string, v: string): Promise<number> }
    ).vcMarkOnce.bind(this.client);
    return this.#command(
      () => run(this.#key(markerKey), this.#key(recordKey), JSON.stringify(value)),
      (marked) => marked === 1,
    );
  }

  delete(...keys: string[]): Promise<void> {
    if (!keys.length) return Promise.resolve();
    // one command per key: keys of different slots cannot share a DEL on a Cluster
    return this.#command(() => Promise.all(keys.map((k) => this.client.del(this.#key(k)))), nothing);
  }

  attempt(
    key: string,
    failed: boolean,
    limit: number,
    ttlSeconds: number,
  ): Promise<{ allowed: boolean; count: number }> {
    const run = (
      this.client as unknown as { vcAttempt(k: string, f: string, l: number, ttl: number): Promise<[number, number]> }
    ).vcAttempt.bind(this.client);
    return this.#command(
      () => run(this.#key(key), failed ? '1' : '0', limit, Math.max(1, Math.ceil(ttlSeconds))),
      ([allowed, count]) => ({ allowed: allowed === 1, count }),
    );
  }

  addToSet(key: string, member: string, ttlSeconds: number): Promise<void> {
    const run = (
      this.client as unknown as { vcSaddWithTtl(k: string, m: string, ttl: number): Promise<number> }
    ).vcSaddWithTtl.bind(this.client);
    return this.#command(() => run(this.#key(key), member, Math.max(1, Math.ceil(ttlSeconds))), nothing);
  }

  members(key: string): Promise<string[]> {
    return this.#command(() => this.client.smembers(this.#key(key)), asIs);
  }

  schedule(key: string, member: string, atMs: number, ttlSeconds: number): Promise<void> {
    const run = (
      this.client as unknown as { vcSchedule(k: string, m: string, at: number, ttl: number): Promise<number> }
    ).vcSchedule.bind(this.client);
    return this.#command(
      () => run(this.#key(key), member, Math.round(atMs), Math.max(1, Math.ceil(ttlSeconds))),
      nothing,
    );
  }

  claimDue(key: string, nowMs: number, leaseMs: number, limit: number): Promise<string[]> {
    const run = (
      this.client as unknown as { vcClaimDue(k: string, now: number, until: number, limit: number): Promise<string[]> }
    ).vcClaimDue.bind(this.client);
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

/**
 * ioredis from the config (D14): a URL, a Sentinel group, or Cluster nodes. Requests fail fast while
 * Redis is unreachable (no offline queue, a bounded connect timeout) and the client reconnects by itself.
 */
export async function createRedisStore(spec: RedisSpec, readyWithinMs = 5_000): Promise<RedisStore> {
  const s = typeof spec === 'string' ? { url: spec, keyPrefix: 'vc:' } : spec;
  const common: RedisOptions = {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: 2_000,
    commandTimeout: 2_000,
    // A Redis that hangs (or a network that drops packets) leaves the connection open: commands time
    // out for their callers but stay in the client's queue until a reply comes. Without data for 5 s
    // while commands wait, the connection is dropped (queue flushed) and the client reconnects.
    socketTimeout: 5_000,
    retryStrategy: (times) => Math.min(times * 200, 2_000),
    lazyConnect: true,
    // commands issued in the same tick (concurrent requests) go out in one write and come back in one read
    enableAutoPipelining: true,
    ...(s.password ? { password: s.password } : {}),
    ...(s.username ? { username: s.username } : {}),
    ...(s.tls ? { tls: s.tls === true ? {} : (s.tls as RedisOptions['tls']) } : {}),
  };
  let client: Redis | Cluster;
  if (s.cluster?.length) {
    client = new Cluster(s.cluster, {
      redisOptions: common,
      enableOfflineQueue: false,
      enableAutoPipelining: true,
      clusterRetryStrategy: (times) => Math.min(times * 200, 2_000),
    });
  } else if (s.sentinels?.length) {
    client = new Redis({ ...common, sentinels: s.sentinels, name: s.name ?? 'mymaster' });
  } else {
    client = s.url ? new Redis(s.url, common) : new Redis(common);
  }
  client.on('error', () => {
    /* reported through failing commands and /readyz; reconnects by itself */
  });
  // Wait for the first connection so the first requests do not fail; if Redis is down at start the
  // service starts anyway (readyz says so) and the client keeps reconnecting.
  await Promise.race([
    new Promise<void>((resolve) => client.once('ready', () => resolve())),
    client
      .connect()
      .then(
        () => undefined,
        () => undefined,
      )
      .then(() => new Promise((r) => setTimeout(r, readyWithinMs))),
  ]);
  return new RedisStore(client, s.keyPrefix);
}
