import { randomBytes } from 'node:crypto';
import { MemoryStore } from '../../src/store/memory.js';
import { createRedisStore } from '../../src/store/redis.js';
import type { Store } from '../../src/store/types.js';

/** The Redis this machine kind starts at 127.0.0.1:6379 (override with TEST_REDIS_URL). */
export const REDIS_URL = process.env.TEST_REDIS_URL ?? 'redis://127.0.0.1:6379/0';

/** Both store kinds, each test run under its own key prefix so runs never see each other's keys. */
export const STORE_KINDS = {
  memory: async (): Promise<Store> => new MemoryStore(),
  redis: (): Promise<Store> =>
    createRedisStore({ url: REDIS_URL, keyPrefix: `test:${randomBytes(6).toString('hex')}:` }),
} as const;

export type StoreKind = keyof typeof STORE_KINDS;

/** The store a flow test runs on: TEST_STORE=redis (the vitest "flows-redis" project) or memory. */
export function testStore(): Promise<Store> {
  const kind = (process.env.TEST_STORE ?? 'memory') as StoreKind;
  if (!(kind in STORE_KINDS)) throw new Error(`TEST_STORE must be one of ${Object.keys(STORE_KINDS).join(', ')}`);
  return STORE_KINDS[kind]();
}
