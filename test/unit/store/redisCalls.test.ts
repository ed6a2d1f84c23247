import { describe, expect, it } from 'vitest';
import { ReplyError } from 'ioredis';
import {
  answerWithin,
  failureKind,
  hashTag,
  receiptKeyOf,
  runCall,
  StoreTimeoutError,
} from '../../../src/store/redisCalls.js';

/**
 * The Redis store's calls (docs/decisions.md, "Store": timeouts and retries): which failures are tried
 * again, that a timed-out call is not (it would queue behind itself) and is undone, and where a receipt
 * lives. The end-to-end behaviour on a real Redis: test/integration/redis-calls.test.ts.
 */
describe('failureKind: what a failure says about the call', () => {
  it.each([
    ["Stream isn't writeable and enableOfflineQueue options is false", 'unsent'],
    ["Cluster isn't ready and enableOfflineQueue options is false", 'unsent'],
    ['Connection is closed.', 'unknown'],
    [
      'Reached the max retries per request limit (which is 1). Refer to "maxRetriesPerRequest" option for details.',
      'unknown',
    ],
    ['something else', 'final'],
  ])('%s: %s', (message, kind) => {
    expect(failureKind(new Error(message))).toBe(kind);
  });

  it.each([
    ['LOADING Redis is loading the dataset in memory', 'unsent'],
    ["READONLY You can't write against a read only replica.", 'unsent'],
    ['CLUSTERDOWN The cluster is down', 'unsent'],
    ['TRYAGAIN Multiple keys request during rehashing of slot', 'unsent'],
    ['BUSY Redis is busy running a script.', 'unsent'],
    ['OOM command not allowed when used memory > maxmemory', 'final'],
    ['WRONGTYPE Operation against a key holding the wrong kind of value', 'final'],
  ])('a reply %s: %s', (message, kind) => {
    expect(failureKind(new ReplyError(message))).toBe(kind);
  });

  it('an answer that did not come in time: unknown', () => {
    expect(failureKind(new StoreTimeoutError(10))).toBe('unknown');
  });
});

describe('runCall', () => {
  it('tries a call again after it went unsent, and answers the next try', async () => {
    let tries = 0;
    const answer = await runCall(
      {
        send: async () => {
          if (++tries === 1) throw new Error("Stream isn't writeable and enableOfflineQueue options is false");
          return 'ok';
        },
      },
      2_000,
    );
    expect([answer, tries]).toEqual(['ok', 2]);
  });

  it('tries a call again after its connection closed (its receipt makes that safe), at most three times', async () => {
    let tries = 0;
    let undone = 0;
    const failing = runCall(
      {
        send: async () => {
          tries++;
          throw new Error('Connection is closed.');
        },
        undo: async () => void undone++,
      },
      2_000,
    );
    await expect(failing).rejects.toThrow('Connection is closed.');
    expect(tries).toBe(3);
    expect(undone).toBe(1); // its outcome is unknown: taken back
  });

  it('does not send a timed-out call again (it would queue behind itself), and undoes it', async () => {
    let tries = 0;
    let undone = 0;
    const failing = runCall(
      {
        send: () => {
          tries++;
          return new Promise<never>(() => undefined);
        },
        undo: async () => void undone++,
      },
      50,
    );
    await expect(failing).rejects.toBeInstanceOf(StoreTimeoutError);
    expect([tries, undone]).toEqual([1, 1]);
  });

  it('does not try again, nor undo, a call Redis refused', async () => {
    let tries = 0;
    let undone = 0;
    const refused = runCall(
      {
        send: async () => {
          tries++;
          throw new ReplyError('WRONGTYPE Operation against a key holding the wrong kind of value');
        },
        undo: async () => void undone++,
      },
      2_000,
    );
    await expect(refused).rejects.toThrow('WRONGTYPE');
    expect([tries, undone]).toEqual([1, 0]);
  });
});

describe('answerWithin', () => {
  it('answers a reply that comes in time, and times out one that does not', async () => {
    expect(await answerWithin(Promise.resolve('v'), 50)).toBe('v');
    await expect(answerWithin(new Promise(() => undefined), 30)).rejects.toBeInstanceOf(StoreTimeoutError);
  });
});

describe("receiptKeyOf: a receipt lives under the store's prefix, in its key's Redis Cluster slot", () => {
  it.each([
    ['vc:wallet:{abc}:offer', 'vc:wallet:{abc}:offer:rcpt:r'], // the key's tag, kept first
    ['vc:status:wallet:current', 'vc:{vc:status:wallet:current}:rcpt:r'], // the whole key as the tag
    ['vc:open{only', 'vc:{vc:open{only}:rcpt:r'],
  ])('%s -> %s', (key, receipt) => {
    expect(receiptKeyOf('vc:', key, 'r')).toBe(receipt);
    // Redis Cluster hashes a key by its tag, else the whole key: the receipt's tag is the key's
    expect(hashTag(receipt)).toBe(hashTag(key) ?? key);
  });
});
