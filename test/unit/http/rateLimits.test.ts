import { describe, expect, it } from 'vitest';
import { addressKey, RateLimited, RateLimits, storeKeyPrefix } from '../../../src/http/rateLimits.js';
import { configSchema, type RateLimitsConfig } from '../../../src/config/schema.js';
import { MemoryStore } from '../../../src/store/memory.js';
import { createRedisStore } from '../../../src/store/redis.js';

const none = { par: {}, token: {}, userinfo: {}, walletToken: {}, credential: {}, vpResponse: {} };
const limits = (rateLimits: Partial<RateLimitsConfig>): RateLimitsConfig => ({ ...none, ...rateLimits });

async function outcome(p: Promise<void>): Promise<RateLimited | 'ok'> {
  try {
    await p;
    return 'ok';
  } catch (err) {
    if (err instanceof RateLimited) return err;
    throw err;
  }
}

describe('addressKey: the key of a source address', () => {
  it.each([
    ['203.0.113.7', '203.0.113.7'],
    ['::ffff:203.0.113.7', '203.0.113.7'],
    ['::FFFF:cb00:7107', '203.0.113.7'],
    ['0:0:0:0:0:ffff:203.0.113.7', '203.0.113.7'],
    ['2001:db8:1:2:3:4:5:6', '2001:db8:1:2::/64'],
    ['2001:db8:1:2::ffff', '2001:db8:1:2::/64'],
    ['2001:0db8:0001:0002:aaaa::1', '2001:db8:1:2::/64'],
    ['2001:db8::1', '2001:db8:0:0::/64'],
    ['::1', '0:0:0:0::/64'],
    ['fe80::1%eth0', 'fe80:0:0:0::/64'],
    ['64:ff9b::192.0.2.33', '64:ff9b:0:0::/64'],
    ['', ''],
  ])('%s -> %s', (ip, key) => {
    expect(addressKey(ip)).toBe(key);
  });
});

describe('storeKeyPrefix', () => {
  it("is the Redis configuration's keyPrefix, vc: for a URL alone", () => {
    expect(storeKeyPrefix('redis://127.0.0.1:6379')).toBe('vc:');
    expect(storeKeyPrefix({ url: 'redis://x', keyPrefix: 'p:' })).toBe('p:');
    expect(storeKeyPrefix('memory')).toBe('vc:');
  });
});

describe('RateLimits on the memory store', () => {
  it('the defaults of the config give every endpoint both budgets', () => {
    const config = configSchema.shape.rateLimits.parse(undefined) as RateLimitsConfig;
    for (const endpoint of ['par', 'token', 'walletToken', 'credential', 'vpResponse'] as const) {
      expect(config[endpoint].perClient?.points).toBeGreaterThan(0);
      expect(config[endpoint].perAddress?.points).toBeGreaterThan(0);
    }
  });

  it('a client over its budget is refused, naming the client and the seconds to wait; another client is not', async () => {
    const limited: string[] = [];
    const rl = new RateLimits(limits({ par: { perClient: { points: 2, duration: 30 } } }), new MemoryStore(), {
      onLimited: (e) => limited.push(e),
    });
    expect(await outcome(rl.consume('par', { client: 'a', address: '192.0.2.1' }))).toBe('ok');
    expect(await outcome(rl.consume('par', { client: 'a', address: '192.0.2.1' }))).toBe('ok');
    const refused = await outcome(rl.consume('par', { client: 'a', address: '192.0.2.1' }));
    expect(refused).toBeInstanceOf(RateLimited);
    const r = refused as RateLimited;
    expect([r.endpoint, r.kind]).toEqual(['par', 'client']);
    expect(r.retryAfter).toBeGreaterThanOrEqual(29);
    expect(r.retryAfter).toBeLessThanOrEqual(30);
    expect(r.message).toBe(`too many requests from this client; retry after ${r.retryAfter} seconds`);
    expect(limited).toEqual(['par']);
    expect(await outcome(rl.consume('par', { client: 'b', address: '192.0.2.1' }))).toBe('ok');
    // the other endpoints have no budget here; a request without a client touches no client budget
    expect(await outcome(rl.consume('token', { client: 'a' }))).toBe('ok');
    expect(await outcome(rl.consume('par', { address: '192.0.2.1' }))).toBe('ok');
  });

  it('per address: IPv6 addresses of one /64 share a budget; when both budgets are out, the later one is named', async () => {
    const rl = new RateLimits(
      limits({ vpResponse: { perClient: { points: 1, duration: 5 }, perAddress: { points: 2, duration: 60 } } }),
      new MemoryStore(),
    );
    expect(await outcome(rl.consume('vpResponse', { address: '2001:db8::1' }))).toBe('ok');
    expect(await outcome(rl.consume('vpResponse', { address: '2001:db8::2', client: 'c' }))).toBe('ok');
    const refused = (await outcome(rl.consume('vpResponse', { address: '2001:db8::3', client: 'c' }))) as RateLimited;
    expect(refused.kind).toBe('address');
    expect(refused.retryAfter).toBeGreaterThan(5);
    expect(await outcome(rl.consume('vpResponse', { address: '2001:db8:0:1::1' }))).toBe('ok');
  });
});

describe('RateLimits with Redis unreachable', () => {
  it('never fails with the store: the instance holds the budget in memory instead', async () => {
    // nothing listens on port 1: commands fail at once (no offline queue)
    const store = await createRedisStore({ url: 'redis://127.0.0.1:1', keyPrefix: 'test:rl-unreachable:' }, 200);
    try {
      const rl = new RateLimits(
        limits({ token: { perClient: { points: 2, duration: 60 }, perAddress: { points: 100, duration: 60 } } }),
        store,
      );
      expect(await outcome(rl.consume('token', { client: 'a', address: '192.0.2.1' }))).toBe('ok');
      expect(await outcome(rl.consume('token', { client: 'a', address: '192.0.2.1' }))).toBe('ok');
      expect(await outcome(rl.consume('token', { client: 'a', address: '192.0.2.1' }))).toMatchObject({
        kind: 'client',
        endpoint: 'token',
      });
      expect(await outcome(rl.consume('token', { client: 'b', address: '192.0.2.1' }))).toBe('ok');
    } finally {
      await store.close();
    }
  });
});
