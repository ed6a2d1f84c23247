import type { Store } from './types.js';

interface Entry {
  value: unknown;
  expiresAt: number;
}

/**
 * The embedded store for one process (D14): a demo default, state is lost on restart. Expired entries
 * are dropped when read and swept periodically, so memory stays bounded by what is live.
 */
export class MemoryStore implements Store {
  readonly kind = 'memory' as const;
  readonly #entries = new Map<string, Entry>();
  readonly #sweeper: NodeJS.Timeout;

  constructor(sweepIntervalMs = 10_000) {
    this.#sweeper = setInterval(() => this.sweep(), sweepIntervalMs);
    this.#sweeper.unref();
  }

  get size(): number {
    return this.#entries.size;
  }

  sweep(now = Date.now()): void {
    for (const [key, entry] of this.#entries) {
      if (entry.expiresAt <= now) this.#entries.delete(key);
    }
  }

  #live(key: string): Entry | undefined {
    const entry = this.#entries.get(key);
    if (!entry) return undefined;
    if (entry.expiresAt <= Date.now()) {
      this.#entries.delete(key);
      return undefined;
    }
    return entry;
  }

  #put(key: string, value: unknown, ttlSeconds: number): void {
    // values are copied so callers never share mutable state with the store, as with a remote store
    this.#entries.set(key, { value: structuredClone(value), expiresAt: Date.now() + ttlSeconds * 1000 });
  }

  async get<T>(key: string): Promise<T | undefined> {
    const entry = this.#live(key);
    return entry ? (structuredClone(entry.value) as T) : undefined;
  }

  async set(key: string, value: unknown, ttlSeconds: number): Promise<void> {
    this.#put(key, value, ttlSeconds);
  }

  async setIfAbsent(key: string, value: unknown, ttlSeconds: number): Promise<boolean> {
    if (this.#live(key)) return false;
    this.#put(key, value, ttlSeconds);
    return true;
  }

  async consume<T>(key: string): Promise<T | undefined> {
    const entry = this.#live(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    return entry.value as T;
  }

  async delete(...keys: string[]): Promise<void> {
    for (const key of keys) this.#entries.delete(key);
  }

  async incr(key: string, ttlSeconds: number): Promise<number> {
    const entry = this.#live(key);
    const next = (typeof entry?.value === 'number' ? entry.value : 0) + 1;
    if (entry) entry.value = next;
    else this.#put(key, next, ttlSeconds);
    return next;
  }

  async addToSet(key: string, member: string, ttlSeconds: number): Promise<void> {
    const entry = this.#live(key);
    const expiresAt = Date.now() + ttlSeconds * 1000;
    if (!entry) {
      this.#entries.set(key, { value: [member], expiresAt });
      return;
    }
    const set = entry.value as string[];
    if (!set.includes(member)) set.push(member);
    entry.expiresAt = Math.max(entry.expiresAt, expiresAt);
  }

  async members(key: string): Promise<string[]> {
    const entry = this.#live(key);
    return entry ? [...(entry.value as string[])] : [];
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    this.#entries.clear();
  }
}
