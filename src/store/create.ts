import type { Config } from '../config/schema.js';
import type { Store } from './types.js';
import { MemoryStore } from './memory.js';
import { createRedisStore } from './redis.js';

export async function createStore(spec: Config['store']): Promise<Store> {
  if (spec === 'memory') return new MemoryStore();
  return createRedisStore(spec);
}
