import type { Store } from '../../src/store/types.js';

export interface RecordedOp {
  op: string;
  key: string;
  /** operations with the same batch were issued in the same event-loop turn: one Redis round trip */
  batch: number;
}

/**
 * A Store that records every operation and the round trip it would share on Redis. ioredis with
 * auto-pipelining (src/store/redis.ts) sends the commands issued before its `setImmediate` runs in one
 * write, and their replies come back in a later turn of the event loop. Here a batch stays open until the
 * next `setImmediate` in the same way, and every operation's result is handed back only once its batch
 * has closed (the operations themselves run at once, in the order issued, as Redis runs a pipeline).
 */
export class RoundTripRecorder implements Store {
  readonly ops: RecordedOp[] = [];
  #batch = 0;
  #closed: Promise<void> | undefined;

  constructor(private readonly inner: Store) {}

  get kind() {
    return this.inner.kind;
  }

  #note<T>(op: string, keys: readonly string[], run: () => Promise<T>): Promise<T> {
    if (!this.#closed) {
      this.#batch++;
      this.#closed = new Promise<void>((resolve) =>
        setImmediate(() => {
          this.#closed = undefined;
          resolve();
        }),
      );
    }
    for (const key of keys) this.ops.push({ op, key, batch: this.#batch });
    const result = run();
    return this.#closed.then(() => result);
  }

  /** The operations matching `op` and `key` (a prefix, or a RegExp). */
  find(op: string, key: string | RegExp): RecordedOp[] {
    return this.ops.filter((o) => o.op === op && (typeof key === 'string' ? o.key.startsWith(key) : key.test(o.key)));
  }

  /** Every operation of a batch, as "op key". */
  batchOf(o: RecordedOp): string[] {
    return this.ops.filter((x) => x.batch === o.batch).map((x) => `${x.op} ${x.key}`);
  }

  get<T>(key: string) {
    return this.#note('get', [key], () => this.inner.get<T>(key));
  }
  getMany(keys: readonly string[]) {
    return this.#note('getMany', keys, () => this.inner.getMany(keys));
  }
  set(key: string, value: unknown, ttl: number) {
    return this.#note('set', [key], () => this.inner.set(key, value, ttl));
  }
  setIfAbsent(key: string, value: unknown, ttl: number) {
    return this.#note('setIfAbsent', [key], () => this.inner.setIfAbsent(key, value, ttl));
  }
  consume<T>(key: string) {
    return this.#note('consume', [key], () => this.inner.consume<T>(key));
  }
  markConsumed(key: string, at: number) {
    return this.#note('markConsumed', [key], () => this.inner.markConsumed(key, at));
  }
  delete(...keys: string[]) {
    return this.#note('delete', keys, () => this.inner.delete(...keys));
  }
  incr(key: string, ttl: number) {
    return this.#note('incr', [key], () => this.inner.incr(key, ttl));
  }
  addToSet(key: string, member: string, ttl: number) {
    return this.#note('addToSet', [key], () => this.inner.addToSet(key, member, ttl));
  }
  members(key: string) {
    return this.#note('members', [key], () => this.inner.members(key));
  }
  ping() {
    return this.inner.ping();
  }
  close() {
    return this.inner.close();
  }
}
