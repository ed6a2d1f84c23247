import { Redis } from 'ioredis';
import type { TestProject } from 'vitest/node';
import { REDIS_URL } from './helpers/stores.js';

/**
 * Issue 33: the flow tests run on Redis too (vitest.config.ts); without it the suite would fail test by
 * test with assertion errors that do not say why. This global setup asks Redis once and stops the run at
 * once with the address when it does not answer. Runs without the Redis project (unit tests) need no Redis.
 */
export default async function setup(project: TestProject): Promise<void> {
  if (project.name !== 'flows-redis') return;
  const redis = new Redis(REDIS_URL, {
    lazyConnect: true,
    connectTimeout: 2_000,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.ping();
  } catch (err) {
    throw new Error(
      `Redis not reachable at ${REDIS_URL} (${(err as Error).message}): the flow tests run on Redis too. Start it (Debian: apt-get install redis-server) or point TEST_REDIS_URL at one.`,
      { cause: err },
    );
  } finally {
    redis.disconnect();
  }
}
