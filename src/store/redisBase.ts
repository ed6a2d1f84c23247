import type { Redis, Cluster } from 'ioredis';
import { randomBase64url } from '../random.js';
import { DEFAULT_COMMAND_TIMEOUT_MS } from './redisConnect.js';
import { defineScripts } from './redisScripts.js';
import { receiptKeyOf, runCall } from './redisCalls.js';

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

/** How long an undone call's receipt (`!`) is kept: a try that reaches Redis later does nothing. */
const UNDONE_TTL = 600;

/**
 * How the Redis store calls Redis (RedisStore has the operations): each call waits for Redis up to its
 * timeout (time this process was not running does not count) and is sent again after a failed
 * connection; one that changes something once carries a receipt, so that a second try never does it
 * twice, and is undone when its outcome stays unknown (src/store/redisCalls.ts, redisScripts.ts).
 */
export class RedisCalls {
  readonly client: Redis | Cluster;
  readonly #prefix: string;
  /** told of every operation that failed because Redis could not be reached (metrics: vc_store_errors_total) */
  readonly #unavailable = new Set<() => void>();
  readonly #timeoutMs: number;
  /** How long a receipt is kept: longer than a call tries (three times its timeout at most). */
  protected readonly receiptTtl: number;

  /** `timeoutMs`: how long an operation waits for Redis (see redisCalls.ts, answerWithin) */
  constructor(client: Redis | Cluster, prefix: string, timeoutMs = DEFAULT_COMMAND_TIMEOUT_MS) {
    this.client = client;
    this.#prefix = prefix;
    this.#timeoutMs = timeoutMs;
    this.receiptTtl = Math.max(30, Math.ceil((4 * timeoutMs) / 1000));
    defineScripts(client);
  }

  protected key(key: string): string {
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

  /** One idempotent call: its reply through `read`, a failure to reach Redis as StoreUnavailableError. */
  protected command<R, T>(op: () => Promise<R>, read: (reply: R) => T, undo?: () => Promise<unknown>): Promise<T> {
    return runCall({ send: op, undo }, this.#timeoutMs).then(read, (err: unknown) => {
      for (const listener of this.#unavailable) listener();
      throw new StoreUnavailableError(err);
    });
  }

  /**
   * A call that changes something once, on `key` (its full name): each try carries the call's receipt, so
   * that a second try answers what the first did (redisScripts.ts, "Receipts"), and `undo` takes it back
   * when the call fails with its outcome unknown.
   */
  protected once<R, T>(
    key: string,
    send: (receiptKey: string) => Promise<R>,
    read: (reply: R) => T,
    undo: (receiptKey: string) => Promise<unknown>,
  ): Promise<T> {
    const receiptKey = receiptKeyOf(this.#prefix, key, randomBase64url(12));
    return this.command(
      () => send(receiptKey),
      read,
      () => undo(receiptKey),
    );
  }

  /** Undoes a call with a receipt: the keys it wrote deleted when it wrote them (redisScripts.ts, UNDO_WRITE). */
  protected undoWrite(receiptKey: string, a = receiptKey, b = a): Promise<unknown> {
    return this.script('vcUndoWrite')(receiptKey, a, b, UNDONE_TTL);
  }

  /** Undoes a consume: the value put back (redisScripts.ts, UNDO_CONSUME). */
  protected undoConsume(receiptKey: string, key: string): Promise<unknown> {
    return this.script('vcUndoConsume')(receiptKey, key, UNDONE_TTL);
  }

  /** A script defined on the client (ioredis adds it as a command), with its arguments. */
  protected script<R>(name: string): (...args: (string | number)[]) => Promise<R> {
    const client = this.client as unknown as Record<string, (...args: (string | number)[]) => Promise<R>>;
    return client[name].bind(this.client);
  }
}
