import { Redis, Cluster, type RedisOptions } from 'ioredis';
import type { Config } from '../config/schema.js';

export type RedisSpec = Exclude<Config['store'], 'memory'>;

/** How long a store operation waits for Redis unless the config says otherwise (`store.commandTimeout`). */
export const DEFAULT_COMMAND_TIMEOUT_MS = 2_000;

/**
 * ioredis from the config (D14): a URL, a Sentinel group, or Cluster nodes. Requests fail fast while
 * Redis is unreachable (no offline queue, a bounded connect timeout) and the client reconnects by itself.
 * ioredis times no command out: the store does, in a way a loaded machine meets (src/store/redisCalls.ts).
 */
export async function connectRedis(
  spec: RedisSpec,
  readyWithinMs: number,
): Promise<{ client: Redis | Cluster; keyPrefix: string; commandTimeoutMs: number }> {
  const s = typeof spec === 'string' ? { url: spec, keyPrefix: 'vc:' } : spec;
  const commandTimeoutMs = s.commandTimeout === undefined ? DEFAULT_COMMAND_TIMEOUT_MS : s.commandTimeout * 1000;
  const common: RedisOptions = {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 1,
    connectTimeout: commandTimeoutMs,
    // A Redis that hangs (or a network that drops packets) leaves the connection open: commands time
    // out for their callers but stay in the client's queue until a reply comes. Without data for 5 s
    // (or 2.5 command timeouts) while commands wait, the connection is dropped (queue flushed) and the
    // client reconnects.
    socketTimeout: Math.max(5_000, 2.5 * commandTimeoutMs),
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
      // ioredis groups a command into a node's auto-pipeline by its first argument; vcTakeFree's first
      // argument is its key count, not a key, so beside another command in the same tick it could join
      // the wrong node's pipeline, which ioredis then refuses whole. It goes out on its own.
      autoPipeliningIgnoredCommands: ['vcTakeFree'],
      clusterRetryStrategy: (times) => Math.min(times * 200, 2_000),
      // CLUSTER SLOTS (at start, after a MOVED) waits as long as a command: 1 s, ioredis' default, is
      // less than a loaded machine gives
      slotsRefreshTimeout: commandTimeoutMs,
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
  return { client, keyPrefix: s.keyPrefix, commandTimeoutMs };
}
