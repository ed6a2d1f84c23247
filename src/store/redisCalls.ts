import { performance } from 'node:perf_hooks';

/**
 * How the Redis store waits for Redis and when it sends a call again (docs/decisions.md, "Store"). ioredis
 * times nothing out (no `commandTimeout`): its timer runs in the event loop that also reads the replies,
 * and Node runs due timers before it reads sockets, so on a loaded machine a process not scheduled for the
 * timeout's length would fail a command whose reply is already in its socket, after Redis ran it.
 */

/** A key's Redis Cluster hash tag: the text between its first `{` and the next `}`, when not empty. */
export function hashTag(key: string): string | undefined {
  const open = key.indexOf('{');
  if (open === -1) return undefined;
  const close = key.indexOf('}', open + 1);
  return close > open + 1 ? key.slice(open + 1, close) : undefined;
}

/**
 * Where a call on `key` (its full name, under `prefix`) keeps its receipt: a key under the same prefix (the
 * service's Redis ACL may allow no other) and in the same hash slot. A key with a hash tag keeps it (the
 * receipt's name starts with the key); a key without one becomes the receipt's tag after the prefix (a
 * Cluster hashes both alike). Where neither works (a prefix with a brace, a key with a `}` but no tag:
 * the service writes no such key) the receipt shares the key's slot only outside a Cluster.
 */
export function receiptKeyOf(prefix: string, key: string, receipt: string): string {
  if (hashTag(key) === undefined && !/[{}]/.test(prefix) && !key.includes('}'))
    return `${prefix}{${key}}:rcpt:${receipt}`;
  return `${key}:rcpt:${receipt}`;
}

/** A call that found no answer within its time. */
export class StoreTimeoutError extends Error {
  constructor(ms: number) {
    super(`no answer from Redis within ${ms} ms`);
    this.name = 'StoreTimeoutError';
  }
}

/** A late timer stretches the wait by its lateness, up to this many times the time asked for in all. */
const MAX_STRETCH = 3;
/** Lateness below this is ordinary timer jitter, not a stall. */
const STALL_MS = 20;

/**
 * `reply`, or StoreTimeoutError once Redis left it unanswered for `ms` of the time this process was
 * running. When the timer fires, the replies already received are read first (one turn of the event
 * loop: its poll phase, then `setImmediate`); when it fires late (the process was not running, and on the
 * same machine Redis likely neither), the wait is stretched by the lateness, up to MAX_STRETCH × `ms`.
 */
export function answerWithin<T>(reply: Promise<T>, ms: number): Promise<T> {
  return new Promise<T>((resolve, reject) => {
    let settled = false;
    const hardStop = performance.now() + MAX_STRETCH * ms;
    let due = performance.now() + ms;
    let timer: NodeJS.Timeout;
    const check = () => {
      const firedAt = performance.now();
      const late = firedAt - due;
      setImmediate(() => {
        if (settled) return;
        if (late > STALL_MS && firedAt < hardStop) {
          due = Math.min(firedAt + late, hardStop);
          timer = setTimeout(check, due - firedAt);
          return;
        }
        settled = true;
        reject(new StoreTimeoutError(ms));
      });
    };
    timer = setTimeout(check, ms);
    reply.then(
      (value) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        resolve(value);
      },
      (err: unknown) => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        reject(err);
      },
    );
  });
}

/**
 * What a failure says about the call: `unsent` (refused before Redis ran it: the client was not connected,
 * or Redis answered LOADING, READONLY, MASTERDOWN, CLUSTERDOWN, TRYAGAIN or BUSY), `unknown` (the connection
 * closed or the answer never came: Redis may have run it), or `final` (Redis ran it and refused it, or
 * anything else: sending it again would not help).
 */
export function failureKind(err: unknown): 'unsent' | 'unknown' | 'final' {
  if (err instanceof StoreTimeoutError) return 'unknown';
  const e = err as { name?: string; message?: string };
  const message = String(e?.message ?? '');
  if (e?.name === 'ReplyError')
    return /^(LOADING|READONLY|MASTERDOWN|CLUSTERDOWN|TRYAGAIN|BUSY)\b/.test(message) ? 'unsent' : 'final';
  if (
    /enableOfflineQueue options is false|Cluster is ended|None of startup nodes is available|Failed to refresh slots cache/.test(
      message,
    )
  )
    return 'unsent';
  if (
    /Connection is closed|Reached the max retries per request|Too many Cluster redirections|Command timed out/.test(
      message,
    )
  )
    return 'unknown';
  return 'final';
}

/** Pauses before the second and third tries of a call whose try failed with an error. */
export const RETRY_DELAYS_MS = [100, 400] as const;

/**
 * One store operation's Redis call. Every call may be sent again after Redis may have run it: it is
 * idempotent, or it carries a receipt by which a second try recognises the first one's success.
 */
export interface Call<R> {
  send: () => Promise<R>;
  /** After a failure that leaves the outcome unknown: takes back what the call may have done (best effort). */
  undo?: () => Promise<unknown>;
}

const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/**
 * Runs `call` within `ms` (see answerWithin), trying again after an error that left it unsent or unknown
 * while time is left: a timed-out try is not sent again, as it would queue behind itself on the same
 * connection. Rejects with the last error; when that leaves the outcome unknown, the
 * call's `undo` is sent first, queued behind it (on the same connection it runs after the call).
 */
export async function runCall<R>(call: Call<R>, ms: number): Promise<R> {
  const started = performance.now();
  for (let tries = 0; ; tries++) {
    try {
      return await answerWithin(call.send(), ms);
    } catch (err) {
      const kind = failureKind(err);
      const delay = RETRY_DELAYS_MS[tries];
      const retry =
        !(err instanceof StoreTimeoutError) &&
        kind !== 'final' &&
        delay !== undefined &&
        performance.now() - started + delay < ms;
      if (retry) {
        await sleep(delay);
        continue;
      }
      if (kind === 'unknown' && call.undo) undoLater(call.undo, ms);
      throw err;
    }
  }
}

/** Sends `undo` now and, while Redis cannot be reached, twice more (the undo itself is idempotent). */
function undoLater(undo: () => Promise<unknown>, ms: number): void {
  const attempt = (left: number) => {
    answerWithin(undo(), ms).catch((err: unknown) => {
      if (left > 0 && failureKind(err) !== 'final') setTimeout(() => attempt(left - 1), 5 * ms).unref();
    });
  };
  attempt(2);
}
