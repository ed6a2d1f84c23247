/**
 * How the Redis store waits and tries again (docs/decisions.md, "Store": timeouts and retries), on a real
 * Redis: the machine's for what needs only a healthy one, a throw-away redis-server for one that hangs.
 *
 * - A process that was not running for longer than the timeout (a loaded machine) still reads the answer
 *   Redis sent meanwhile (with ioredis' own timeout, its timer runs before the socket is read: the call
 *   fails with 503 after Redis ran it, an offer taken and lost).
 * - A call that changes something once carries a receipt: a second try of the same call answers what
 *   the first did and does nothing twice; an undo takes it back, and a try after its undo does nothing.
 * - A call whose outcome stays unknown (Redis hung) answers 503 and is undone once Redis runs it.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Redis } from 'ioredis';
import { createRedisStore, RedisStore, StoreUnavailableError } from '../../src/store/redis.js';
import { receiptKeyOf } from '../../src/store/redisCalls.js';
import { REDIS_URL } from '../helpers/stores.js';
import { startRedis, waitFor, type RedisProcess } from '../helpers/redisServer.js';

// Redis only (the memory store has no timeouts); it starts its own redis-server as well
const run = process.env.TEST_STORE === 'redis' ? describe : describe.skip;

/** The process busy (or not scheduled) for `ms`: nothing of it runs, sockets are not read. */
function stall(ms: number): void {
  const until = performance.now() + ms;
  while (performance.now() < until) {
    /* busy */
  }
}
/** One turn of the event loop: the auto-pipelined command is written. */
const written = () => new Promise((resolve) => setImmediate(resolve));

run('the Redis store on a loaded machine', () => {
  const prefix = `calls:${randomBytes(4).toString('hex')}:`;
  const TIMEOUT_MS = 300;
  let store: RedisStore;
  let client: Redis;
  beforeAll(async () => {
    store = await createRedisStore({ url: REDIS_URL, keyPrefix: prefix, commandTimeout: TIMEOUT_MS / 1000 });
    client = store.client as Redis;
  });
  afterAll(() => store?.close());

  it('answers what Redis sent while the process was stalled past the timeout', async () => {
    await store.set('offer', { id: 1 }, 60);
    const taking = store.consume('offer');
    await written();
    stall(3 * TIMEOUT_MS);
    expect(await taking).toEqual({ id: 1 });
    expect(await store.get('offer')).toBeUndefined();

    const claiming = store.setIfAbsent('claim', 'mine', 60);
    await written();
    stall(3 * TIMEOUT_MS);
    expect(await claiming).toBe(true);
  });

  /** A script the store defined on its client, called as the store does. */
  const script = (name: string, ...args: (string | number)[]) =>
    (client as unknown as Record<string, (...a: (string | number)[]) => Promise<unknown>>)[name](...args);
  const key = (k: string) => `${prefix}${k}`;

  it('a second try of a call with a receipt answers what the first did, and does nothing twice', async () => {
    const r1 = receiptKeyOf(prefix, key('once'), 'r1');
    const r2 = receiptKeyOf(prefix, key('once'), 'r2');
    expect(await script('vcSetIfAbsent', key('once'), r1, '"a"', 60, 30)).toBe(1);
    expect(await script('vcSetIfAbsent', key('once'), r1, '"a"', 60, 30)).toBe(1); // the same call again
    expect(await script('vcSetIfAbsent', key('once'), r2, '"b"', 60, 30)).toBe(0); // another call

    await store.set('taken', { v: 2 }, 60);
    const t1 = receiptKeyOf(prefix, key('taken'), 't1');
    expect(await script('vcConsume', key('taken'), t1, 30)).toBe('{"v":2}');
    expect(await script('vcConsume', key('taken'), t1, 30)).toBe('{"v":2}');
    expect(await script('vcConsume', key('taken'), receiptKeyOf(prefix, key('taken'), 't2'), 30)).toBeNull();

    const a1 = receiptKeyOf(prefix, key('pin'), 'a1');
    expect(await script('vcAttempt', key('pin'), a1, '1', 3, 60, 30)).toEqual([1, 1]);
    expect(await script('vcAttempt', key('pin'), a1, '1', 3, 60, 30)).toEqual([1, 1]);
    expect(await store.get('pin')).toBe(1);

    const keys = ['count', 'keep', 'i:0', 'i:1'].map((k) => key(`{list}:${k}`));
    const f1 = receiptKeyOf(prefix, keys[0], 'f1');
    expect(await script('vcTakeFree', keys.length + 1, ...keys, f1, 10, '"s"', 60, 0, 30)).toBe(0);
    expect(await script('vcTakeFree', keys.length + 1, ...keys, f1, 10, '"s"', 60, 0, 30)).toBe(0);
    expect(await store.get('{list}:count')).toBe(1);
    expect(await store.get('{list}:i:1')).toBeUndefined();
  });

  it('an undo takes a call back, and a try that reaches Redis after its undo does nothing', async () => {
    const r = receiptKeyOf(prefix, key('undone'), 'u1');
    expect(await script('vcSetIfAbsent', key('undone'), r, '"a"', 60, 30)).toBe(1);
    await script('vcUndoWrite', r, key('undone'), key('undone'), 600);
    expect(await store.get('undone')).toBeUndefined();
    expect(await script('vcSetIfAbsent', key('undone'), r, '"a"', 60, 30)).toBe(0); // late: nothing
    expect(await store.get('undone')).toBeUndefined();

    // an undo that comes first fences the call off
    const late = receiptKeyOf(prefix, key('fenced'), 'u2');
    await script('vcUndoWrite', late, late, late, 600);
    expect(await script('vcSetIfAbsent', key('fenced'), late, '"a"', 60, 30)).toBe(0);
    expect(await store.get('fenced')).toBeUndefined();

    // a consume put back, with the expiry it had
    await store.set('offer2', { id: 2 }, 60);
    const c = receiptKeyOf(prefix, key('offer2'), 'c1');
    expect(await script('vcConsume', key('offer2'), c, 30)).toBe('{"id":2}');
    await script('vcUndoConsume', c, key('offer2'), 600);
    expect(await store.get('offer2')).toEqual({ id: 2 });
    const ttl = await client.ttl(key('offer2'));
    expect(ttl).toBeGreaterThan(0);
    expect(ttl).toBeLessThanOrEqual(60);
    expect(await script('vcConsume', key('offer2'), c, 30)).toBeNull(); // late: nothing
    expect(await store.get('offer2')).toEqual({ id: 2 });
  });
});

run('the Redis store when Redis hangs (SIGSTOP) and resumes', () => {
  const prefix = `hang:${randomBytes(4).toString('hex')}:`;
  let redis: RedisProcess;
  let store: RedisStore;
  beforeAll(async () => {
    redis = await startRedis();
    store = await createRedisStore({ url: redis.url, keyPrefix: prefix, commandTimeout: 0.3 });
  });
  afterAll(async () => {
    redis?.resume();
    await store?.close();
    await redis?.destroy();
  });

  it('a call left unanswered answers 503, and what Redis runs of it later is undone', async () => {
    await store.set('offer', { id: 3 }, 60);
    redis.pause();
    const taking = store.consume('offer');
    const claiming = store.setIfAbsent('claim', 'mine', 60);
    await expect(taking).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(claiming).rejects.toBeInstanceOf(StoreUnavailableError);
    redis.resume();
    // Redis runs the consume and the claim, then their undos, queued behind them on the connection
    const receipts = async () => {
      const keys = (await redis.cli('--scan', '--pattern', `${prefix}*:rcpt:*`)).split('\n').filter(Boolean);
      return Promise.all(keys.map(async (k) => (await redis.cli('get', k)).trim()));
    };
    await waitFor('both calls run and undone', async () => (await receipts()).join() === '!,!');
    expect(await store.get('offer')).toEqual({ id: 3 });
    expect(await store.get('claim')).toBeUndefined();
    expect(await store.setIfAbsent('claim', 'next', 60)).toBe(true);
  });
});
