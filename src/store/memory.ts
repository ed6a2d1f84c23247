import type { Store } from './types.js';

interface Entry {
  /** JSON text, as a remote store keeps it: every read is a fresh copy, and copying is cheap */
  value: string | number | string[];
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
    // values are kept as JSON text so callers never share mutable state with the store, as with Redis
    this.#entries.set(key, { value: JSON.stringify(value), expiresAt: Date.now() + ttlSeconds * 1000 });
  }

  static #read<T>(entry: Entry): T {
    return (typeof entry.value === 'string' ? JSON.parse(entry.value) : entry.value) as T;
  }

  async get<T>(key: string): Promise<T | undefined> {
    const entry = this.#live(key);
    return entry ? MemoryStore.#read<T>(entry) : undefined;
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
    return MemoryStore.#read<T>(entry);
  }

  async markConsumed(key: string, at: number): Promise<boolean> {
    const entry = this.#live(key);
    if (!entry || typeof entry.value !== 'string') return false;
    const payload = JSON.parse(entry.value) as unknown;
    if (typeof payload !== 'object' || payload === null || Array.isArray(payload) || 'consumed' in payload) return false;
    entry.value = JSON.stringify({ ...payload, consumed: at });
    return true;
  }

  async delete(...keys: string[]): Promise<void> {
    for (const key of keys) this.#entries.delete(key);
  }

  async incr(key: string, ttlSeconds: number): Promise<number> {
    const entry = this.#live(key);
    const next = (typeof entry?.value === 'number' ? entry.value : 0) + 1;
    if (entry) entry.value = next;
    else this.#entries.set(key, { value: next, expiresAt: Date.now() + ttlSeconds * 1000 });
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
