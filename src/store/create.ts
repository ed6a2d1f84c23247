import type { Config } from '../config/schema.js';
import type { Store } from './types.js';
import { MemoryStore } from './memory.js';

export async function createStore(spec: Config['store']): Promise<Store> {
  if (spec === 'memory') return new MemoryStore();
  throw new Error('store: Redis is not available in this build yet; use "memory"');
}
