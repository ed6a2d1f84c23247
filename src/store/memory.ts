import { jsonOf, KEEP_SLACK_SECONDS, type Store } from './types.js';

type Entry =
  /**
   * a value as JSON text, as Redis keeps it: every read parses a fresh copy, so callers never share
   * mutable state with the store, and a live record is one string to the garbage collector rather than
   * a graph of objects it marks on every major collection
   */
  | { kind: 'value'; text: string; expiresAt: number }
  | { kind: 'counter'; value: number; expiresAt: number }
  | { kind: 'set'; value: string[]; expiresAt: number }
  | { kind: 'schedule'; value: Map<string, number>; expiresAt: number };

/** A schedule's order, as Redis sorts a sorted set: by due time, then by member. */
const byDueTime = (a: [string, number], b: [string, number]) => a[1] - b[1] || (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0);

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
    // JSON's semantics, the text Redis keeps too (src/store/redis.ts)
    this.#entries.set(key, {
      kind: 'value',
      text: jsonOf(value),
      expiresAt: Date.now() + ttlSeconds * 1000,
    });
  }

  static #read<T>(entry: Entry): T {
    if (entry.kind === 'counter') return entry.value as T;
    if (entry.kind === 'set') return [...entry.value] as T;
    if (entry.kind === 'schedule') return [...entry.value.keys()] as T;
    return JSON.parse(entry.text) as T;
  }

  async get<T>(key: string): Promise<T | undefined> {
    const entry = this.#live(key);
    return entry ? MemoryStore.#read<T>(entry) : undefined;
  }

  async getMany(keys: readonly string[]): Promise<unknown[]> {
    return keys.map((key) => {
      const entry = this.#live(key);
      return entry ? MemoryStore.#read(entry) : undefined;
    });
  }

  async set(key: string, value: unknown, ttlSeconds: number): Promise<void> {
    this.#put(key, value, ttlSeconds);
  }

  async setIfAbsent(key: string, value: unknown, ttlSeconds: number): Promise<boolean> {
    if (this.#live(key)) return false;
    this.#put(key, value, ttlSeconds);
    return true;
  }

  async setIfAbsentWith(
    key: string,
    value: unknown,
    ttlSeconds: number,
    companion: { key: string; value: unknown; ttlSeconds: number },
  ): Promise<boolean> {
    if (this.#live(key)) return false;
    this.#put(key, value, ttlSeconds);
    this.#put(companion.key, companion.value, companion.ttlSeconds);
    return true;
  }

  async setPermanentIfAbsent(key: string, value: unknown): Promise<boolean> {
    // an infinite TTL: never expired by #live or the sweeper
    return this.setIfAbsent(key, value, Number.POSITIVE_INFINITY);
  }

  async replacePermanent(key: string, expected: unknown, value: unknown): Promise<boolean> {
    const entry = this.#live(key);
    if (entry?.kind !== 'value' || entry.text !== JSON.stringify(expected)) return false;
    this.#entries.set(key, {
      kind: 'value',
      text: jsonOf(value),
      expiresAt: Number.POSITIVE_INFINITY,
    });
    return true;
  }

  async consume<T>(key: string): Promise<T | undefined> {
    const entry = this.#live(key);
    if (!entry) return undefined;
    this.#entries.delete(key);
    return MemoryStore.#read<T>(entry);
  }

  async markOnce(
    markerKey: string,
    value: unknown,
    recordKey: string,
    opts: { ttlSeconds?: number; shortenRecord?: boolean } = {},
  ): Promise<boolean> {
    const record = this.#live(recordKey);
    if (!record || this.#live(markerKey)) return false;
    const cap = opts.ttlSeconds === undefined ? Infinity : Date.now() + Math.max(1, Math.ceil(opts.ttlSeconds)) * 1000;
    const expiresAt = Math.min(record.expiresAt, cap);
    this.#entries.set(markerKey, { kind: 'value', text: jsonOf(value), expiresAt });
    if (opts.shortenRecord) record.expiresAt = expiresAt;
    return true;
  }

  async delete(...keys: string[]): Promise<void> {
    for (const key of keys) this.#entries.delete(key);
  }

  async shorten(keys: readonly string[], ttlSeconds: number): Promise<void> {
    const until = Date.now() + Math.max(1, Math.ceil(ttlSeconds)) * 1000;
    for (const key of keys) {
      const entry = this.#live(key);
      if (entry) entry.expiresAt = Math.min(entry.expiresAt, until);
    }
  }

  async takeFree(
    counterKey: string,
    limit: number,
    candidates: readonly string[],
    value: unknown,
    ttlSeconds: number,
    keepKey: string,
  ): Promise<{ full: boolean; taken?: number }> {
    const counter = this.#live(counterKey);
    const count = (counter?.kind === 'counter' ? counter.value : 0) + 1;
    if (counter?.kind === 'counter') counter.value = count;
    else this.#entries.set(counterKey, { kind: 'counter', value: count, expiresAt: Date.now() + ttlSeconds * 1000 });
    if (count > limit) return { full: true };
    const taken = candidates.findIndex((key) => !this.#live(key));
    if (taken === -1) return { full: false };
    this.#put(candidates[taken], value, ttlSeconds);
    const keep = this.#live(keepKey);
    const until = Date.now() + ttlSeconds * 1000;
    if (keep?.kind !== 'set' || keep.expiresAt < until)
      await this.addToSet(keepKey, '1', ttlSeconds + KEEP_SLACK_SECONDS);
    return { full: false, taken };
  }

  async attempt(
    key: string,
    failed: boolean,
    limit: number,
    ttlSeconds: number,
  ): Promise<{ allowed: boolean; count: number }> {
    const entry = this.#live(key);
    const count = entry?.kind === 'counter' ? entry.value : 0;
    if (count >= limit) return { allowed: false, count };
    if (!failed) return { allowed: true, count };
    if (entry?.kind === 'counter') entry.value = count + 1;
    else this.#entries.set(key, { kind: 'counter', value: 1, expiresAt: Date.now() + ttlSeconds * 1000 });
    return { allowed: true, count: count + 1 };
  }

  async addToSet(key: string, member: string, ttlSeconds: number): Promise<void> {
    const entry = this.#live(key);
    const expiresAt = Date.now() + ttlSeconds * 1000;
    if (entry?.kind !== 'set') {
      this.#entries.set(key, {
        kind: 'set',
        value: [member],
        expiresAt: entry ? Math.max(entry.expiresAt, expiresAt) : expiresAt,
      });
      return;
    }
    const set = entry.value;
    if (!set.includes(member)) set.push(member);
    entry.expiresAt = Math.max(entry.expiresAt, expiresAt);
  }

  async addToList(key: string, member: string, ttlSeconds: number): Promise<void> {
    // the same as a set here: only Redis keeps it as text
    return this.addToSet(key, member, ttlSeconds);
  }

  async listed(key: string): Promise<string[]> {
    return this.members(key);
  }

  async members(key: string): Promise<string[]> {
    const entry = this.#live(key);
    return entry?.kind === 'set' ? [...entry.value] : [];
  }

  async schedule(key: string, member: string, atMs: number, ttlSeconds: number): Promise<void> {
    const entry = this.#live(key);
    const expiresAt = Date.now() + ttlSeconds * 1000;
    if (entry?.kind !== 'schedule') {
      this.#entries.set(key, { kind: 'schedule', value: new Map([[member, atMs]]), expiresAt });
      return;
    }
    entry.value.set(member, atMs);
    entry.expiresAt = Math.max(entry.expiresAt, expiresAt);
  }

  async claimDue(key: string, nowMs: number, leaseMs: number, limit: number): Promise<string[]> {
    const entry = this.#live(key);
    if (entry?.kind !== 'schedule') return [];
    const due = [...entry.value]
      .filter(([, at]) => at <= nowMs)
      .sort(byDueTime)
      .slice(0, limit)
      .map(([member]) => member);
    for (const member of due) entry.value.set(member, nowMs + leaseMs);
    return due;
  }

  async unschedule(key: string, member: string): Promise<void> {
    const entry = this.#live(key);
    if (entry?.kind === 'schedule') entry.value.delete(member);
  }

  async scheduled(key: string, fromMs: number, toMs: number): Promise<{ member: string; at: number }[]> {
    const entry = this.#live(key);
    if (entry?.kind !== 'schedule') return [];
    return [...entry.value]
      .filter(([, at]) => at >= fromMs && at <= toMs)
      .sort(byDueTime)
      .map(([member, at]) => ({ member, at }));
  }

  async ping(): Promise<void> {}

  async close(): Promise<void> {
    clearInterval(this.#sweeper);
    this.#entries.clear();
  }
}
