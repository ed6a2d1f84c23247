import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { randomBytes } from 'node:crypto';
import type { Store } from '../../src/store/types.js';
import { adapterScope, createOidcAdapterFactory } from '../../src/store/oidcAdapter.js';
import { JsonText } from '../../src/store/types.js';
import { STORE_KINDS } from '../helpers/stores.js';
import { MemoryStore } from '../../src/store/memory.js';
import { RedisStore } from '../../src/store/redis.js';

/**
 * The Store contract (D14), run against the embedded memory store and the real Redis alike: TTLs on
 * every key, and single-use operations that are atomic under concurrency.
 */
describe.each(Object.keys(STORE_KINDS) as (keyof typeof STORE_KINDS)[])('Store contract on %s', (kind) => {
  let store: Store;
  beforeAll(async () => {
    store = await STORE_KINDS[kind]();
  });
  afterAll(async () => store.close());

  it('round-trips JSON values and answers undefined for unknown keys', async () => {
    await store.set('a', { n: 1, s: 'x', list: [true, null] }, 60);
    expect(await store.get('a')).toEqual({ n: 1, s: 'x', list: [true, null] });
    expect(await store.get('nothing-here')).toBeUndefined();
  });

  it('reads back what JSON would carry, as Redis does: dates as text, undefined left out, NaN as null, __proto__ an own member', async () => {
    const value = JSON.parse('{"__proto__": {"polluted": true}}') as Record<string, unknown>;
    Object.assign(value, {
      at: new Date(0),
      gone: undefined,
      nan: Number.NaN,
      list: [undefined, () => 1, -0],
      nested: { n: Number.POSITIVE_INFINITY },
    });
    await store.set('json-like', value, 60);
    const got = await store.get<Record<string, unknown>>('json-like');
    expect(got).toStrictEqual(JSON.parse(JSON.stringify(value)));
    expect(Object.keys(got!)).toEqual(['__proto__', 'at', 'nan', 'list', 'nested']);
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
  });

  it('getMany: keys of one hash tag in one read, others one by one, in order, undefined where missing', async () => {
    await store.set('many:{t1}:a', { a: 1 }, 60);
    await store.attempt('many:{t1}:n', true, 10, 60);
    await store.set('many:other', 'x', 60);
    expect(await store.getMany(['many:{t1}:a', 'many:{t1}:missing', 'many:{t1}:n'])).toEqual([{ a: 1 }, undefined, 1]);
    expect(await store.getMany(['many:{t1}:a', 'many:other', 'many:nothing'])).toEqual([{ a: 1 }, 'x', undefined]);
    expect(await store.getMany([])).toEqual([]);
  });

  it('forgets a value once its TTL has passed', async () => {
    await store.set('short', 1, 1);
    expect(await store.get('short')).toBe(1);
    await sleep(1200);
    expect(await store.get('short')).toBeUndefined();
  });

  it('setIfAbsent: of 50 concurrent writers exactly one wins', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => store.setIfAbsent('nx', i, 60)));
    expect(results.filter(Boolean)).toHaveLength(1);
  });

  it('setPermanentIfAbsent (D20 key sets): of 50 concurrent writers exactly one wins, and its record has no TTL', async () => {
    const key = `permanent:${randomBytes(4).toString('hex')}`;
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => store.setPermanentIfAbsent(key, { keys: [i] })),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    const winner = results.indexOf(true);
    expect(await store.get(key)).toEqual({ keys: [winner] });
    expect(await store.setIfAbsent(key, 'other', 60)).toBe(false);
    if (store instanceof RedisStore) {
      const [full] = await store.client.keys(`*${key}`);
      expect(await store.client.ttl(full)).toBe(-1); // a key without an expiry
    } else if (store instanceof MemoryStore) {
      store.sweep(Date.now() + 100 * 365 * 86_400_000);
    }
    expect(await store.get(key)).toEqual({ keys: [winner] });
    await store.delete(key);
    expect(await store.get(key)).toBeUndefined();
  });

  it('consume: of 50 concurrent consumers exactly one gets the value, and it is gone', async () => {
    await store.set('once', { v: 'secret' }, 60);
    const results = await Promise.all(Array.from({ length: 50 }, () => store.consume('once')));
    expect(results.filter((r) => r !== undefined)).toEqual([{ v: 'secret' }]);
    expect(await store.get('once')).toBeUndefined();
  });

  it('markOnce: of 50 concurrent callers exactly one writes the marker; the record stays as written; the marker expires with it', async () => {
    const value = { grantId: 'g', text: 'a "consumed": look-alike', nested: { consumed: false }, n: 1.5 };
    await store.set('code:{c1}', value, 2);
    const results = await Promise.all(
      Array.from({ length: 50 }, () => store.markOnce('code:{c1}:consumed', 1_700_000_000, 'code:{c1}')),
    );
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await store.getMany(['code:{c1}', 'code:{c1}:consumed'])).toEqual([value, 1_700_000_000]);
    expect(await store.markOnce('code:{c1}:consumed', 1_700_000_001, 'code:{c1}')).toBe(false);
    await sleep(2200); // the record's TTL applies to both
    expect(await store.getMany(['code:{c1}', 'code:{c1}:consumed'])).toEqual([undefined, undefined]);
  });

  it('setIfAbsentWith: of 50 concurrent writers one wins, and only the winner writes its companion, with its own TTL', async () => {
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        store.setIfAbsentWith('nxw:{h}', i, 60, { key: 'nxw:{h}:data', value: { by: i }, ttlSeconds: 1 }),
      ),
    );
    const winner = results.indexOf(true);
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await store.getMany(['nxw:{h}', 'nxw:{h}:data'])).toEqual([winner, { by: winner }]);
    await sleep(1200);
    expect(await store.getMany(['nxw:{h}', 'nxw:{h}:data'])).toEqual([winner, undefined]);
    expect(
      await store.setIfAbsentWith('nxw:{h}', 'again', 60, { key: 'nxw:{h}:data', value: 'again', ttlSeconds: 60 }),
    ).toBe(false);
    expect(await store.get('nxw:{h}:data')).toBeUndefined();
  });

  it('markOnce: false while the record does not exist', async () => {
    expect(await store.markOnce('missing:{m}:consumed', 1, 'missing:{m}')).toBe(false);
    expect(await store.get('missing:{m}:consumed')).toBeUndefined();
  });

  it('attempt: of 50 concurrent failed attempts against a limit of 3, exactly 3 are allowed and counted; the counter expires', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, () => store.attempt('tries', true, 3, 1)));
    expect(
      results
        .filter((r) => r.allowed)
        .map((r) => r.count)
        .sort(),
    ).toEqual([1, 2, 3]);
    expect(results.filter((r) => !r.allowed).every((r) => r.count === 3)).toBe(true);
    await sleep(1200);
    expect(await store.attempt('tries', true, 3, 60)).toEqual({ allowed: true, count: 1 });
  });

  it('attempt: a successful attempt is allowed without counting, and refused once the limit is reached', async () => {
    expect(await store.attempt('mixed', false, 2, 60)).toEqual({ allowed: true, count: 0 });
    expect(await store.attempt('mixed', true, 2, 60)).toEqual({ allowed: true, count: 1 });
    expect(await store.attempt('mixed', false, 2, 60)).toEqual({ allowed: true, count: 1 });
    expect(await store.attempt('mixed', true, 2, 60)).toEqual({ allowed: true, count: 2 });
    expect(await store.attempt('mixed', false, 2, 60)).toEqual({ allowed: false, count: 2 });
  });

  it('sets: members added once, TTL extended, deleted with delete()', async () => {
    await store.addToSet('set', 'a', 60);
    await store.addToSet('set', 'b', 60);
    await store.addToSet('set', 'a', 60);
    expect((await store.members('set')).sort()).toEqual(['a', 'b']);
    await store.delete('set', 'a');
    expect(await store.members('set')).toEqual([]);
  });

  it('lists: members added once, TTL extended, deleted with delete()', async () => {
    await store.addToList('list:{l}', 'a', 1);
    await store.addToList('list:{l}', 'b', 60);
    await store.addToList('list:{l}', 'a', 1);
    expect((await store.listed('list:{l}')).sort()).toEqual(['a', 'b']);
    await sleep(1200); // extended to the longest TTL asked
    expect((await store.listed('list:{l}')).sort()).toEqual(['a', 'b']);
    await store.addToList('list:{short}', 'x', 1);
    await sleep(1200);
    expect(await store.listed('list:{short}')).toEqual([]);
    await store.delete('list:{l}');
    expect(await store.listed('list:{l}')).toEqual([]);
  });

  it('delete: keys of one hash tag and others together', async () => {
    await Promise.all(['d:{t}:a', 'd:{t}:b', 'd:other'].map((k) => store.set(k, 1, 60)));
    await store.delete('d:{t}:a', 'd:other', 'd:{t}:b', 'd:never');
    expect(await store.getMany(['d:{t}:a', 'd:{t}:b'])).toEqual([undefined, undefined]);
    expect(await store.get('d:other')).toBeUndefined();
  });

  it('shorten: existing keys expire within the TTL given, never later than they would have; missing keys stay missing', async () => {
    await store.set('sh:{s}:long', 'l', 60);
    await store.set('sh:{s}:short', 's', 1);
    await store.shorten(['sh:{s}:long', 'sh:{s}:short', 'sh:{s}:missing'], 2);
    expect(await store.getMany(['sh:{s}:long', 'sh:{s}:short', 'sh:{s}:missing'])).toEqual(['l', 's', undefined]);
    await sleep(1200);
    expect(await store.getMany(['sh:{s}:long', 'sh:{s}:short'])).toEqual(['l', undefined]);
    await sleep(1000);
    expect(await store.get('sh:{s}:long')).toBeUndefined();
    expect(await store.get('sh:{s}:missing')).toBeUndefined();
  });

  it('markOnce with a TTL: the marker expires by then, and with shortenRecord the record too', async () => {
    await store.set('cap:{c}', 'record', 60);
    expect(await store.markOnce('cap:{c}:m', 1, 'cap:{c}', { ttlSeconds: 1 })).toBe(true);
    await store.set('cap:{d}', 'record', 60);
    expect(await store.markOnce('cap:{d}:m', 1, 'cap:{d}', { ttlSeconds: 1, shortenRecord: true })).toBe(true);
    expect(await store.markOnce('cap:{d}:m', 2, 'cap:{d}', { ttlSeconds: 1, shortenRecord: true })).toBe(false);
    await sleep(1200);
    expect(await store.getMany(['cap:{c}', 'cap:{c}:m'])).toEqual(['record', undefined]);
    expect(await store.getMany(['cap:{d}', 'cap:{d}:m'])).toEqual([undefined, undefined]);
  });

  it('takeFree: 50 concurrent takers of 3 candidates within a limit of 10: each candidate goes to one, the others find none free', async () => {
    const candidates = ['tf:{t}:i:1', 'tf:{t}:i:2', 'tf:{t}:i:3'];
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, n) => store.takeFree('tf:{t}:count', 100, candidates, `s${n}`, 60, 'tf:{t}:list')),
    );
    const taken = results.filter((r) => r.taken !== undefined);
    expect(taken.map((r) => r.taken).sort()).toEqual([0, 1, 2]);
    expect(results.every((r) => !r.full)).toBe(true);
    const values = (await store.getMany(candidates)) as string[];
    expect(new Set(values).size).toBe(3);
    expect(await store.members('tf:{t}:list')).toEqual(['1']);
  });

  it('takeFree: full once the counter reached the limit, whatever is free', async () => {
    const take = (i: number) => store.takeFree('tf:{f}:count', 2, [`tf:{f}:i:${i}`], 'v', 60, 'tf:{f}:list');
    expect(await take(1)).toEqual({ full: false, taken: 0 });
    expect(await take(1)).toEqual({ full: false }); // counted, though nothing was free
    expect(await take(2)).toEqual({ full: true });
    expect(await store.get('tf:{f}:i:2')).toBeUndefined();
  });

  it("oidc-provider's adapter, within a request scope: of 50 concurrent requests that find and consume one code, exactly one succeeds", async () => {
    const Adapter = createOidcAdapterFactory(store, 'contract-scope');
    const codes = new Adapter('AuthorizationCode');
    await codes.upsert('code1', { grantId: 'g1', exp: Math.floor(Date.now() / 1000) + 60 }, 60);
    const request = () =>
      adapterScope(undefined, async () => {
        const found = await codes.find('code1');
        if (!found || found.consumed !== undefined) throw new Error('consumed');
        await codes.consume('code1');
      });
    const outcomes = await Promise.allSettled(Array.from({ length: 50 }, request));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    expect((await codes.find('code1'))?.consumed).toBeTypeOf('number');
  });

  it("oidc-provider's adapter, within a request scope: a code found in the request is consumed once, by concurrent requests too", async () => {
    const Adapter = createOidcAdapterFactory(store, 'contract-scope');
    const codes = new Adapter('AuthorizationCode');
    await codes.upsert('c2', { grantId: 'g2', exp: Math.floor(Date.now() / 1000) + 60 }, 60);
    // each request finds the code unconsumed, then consumes it with the lifetime it read: one wins
    const redeem = () =>
      adapterScope(undefined, async () => {
        expect((await codes.find('c2'))?.consumed).toBeUndefined();
        await codes.consume('c2');
      });
    const [first, second] = await Promise.allSettled([redeem(), redeem()]);
    expect([first.status, second.status].sort()).toEqual(['fulfilled', 'rejected']);
    expect((await codes.find('c2'))?.consumed).toBeTypeOf('number');
    await codes.revokeByGrantId('g2');
  });

  it('a JsonText value is kept as the JSON it holds, by every write', async () => {
    await store.set('jt:set', new JsonText('{"a":[1,"x"]}'), 60);
    expect(await store.get('jt:set')).toEqual({ a: [1, 'x'] });
    expect(await store.setIfAbsent('jt:nx', new JsonText('"text"'), 60)).toBe(true);
    expect(await store.get('jt:nx')).toBe('text');
  });

  it("oidc-provider's adapter, within a request scope: a record the request wrote is read back as written without a store read, and from the store once consumed or destroyed", async () => {
    let reads = 0;
    const counting = new Proxy(store, {
      get(target, name, receiver) {
        const value = Reflect.get(target, name, receiver) as unknown;
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (name === 'get' || name === 'getMany') reads++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    const Adapter = createOidcAdapterFactory(counting, 'contract-written');
    const codes = new Adapter('AuthorizationCode');
    const grants = new Adapter('Grant');
    const exp = Math.floor(Date.now() / 1000) + 60;
    await adapterScope(undefined, async () => {
      await grants.upsert('g3', { accountId: 'a', exp }, 60);
      await codes.upsert('c3', { grantId: 'g3', exp, nested: { scope: 'openid' } }, 60);
      const found = await codes.find('c3');
      expect(found).toEqual({ grantId: 'g3', exp, nested: { scope: 'openid' } });
      found!.nested = 'changed by the caller'; // a copy: the next find reads the record as written
      expect((await codes.find('c3'))?.nested).toEqual({ scope: 'openid' });
      expect(await grants.find('g3')).toEqual({ accountId: 'a', exp });
      expect(reads).toBe(0);
      await codes.consume('c3');
      expect((await codes.find('c3'))?.consumed).toBeTypeOf('number');
      await grants.destroy('g3');
      expect(await grants.find('g3')).toBeUndefined();
      expect(reads).toBe(2);
    });
    // another request reads the store
    await adapterScope(undefined, async () => {
      expect((await codes.find('c3'))?.consumed).toBeTypeOf('number');
    });
    await codes.revokeByGrantId('g3');
  });

  it('answers ping', async () => {
    await expect(store.ping()).resolves.toBeUndefined();
  });

  it("oidc-provider's adapter: of 50 concurrent consumes of one code exactly one succeeds", async () => {
    const Adapter = createOidcAdapterFactory(store, 'contract');
    const codes = new Adapter('AuthorizationCode');
    await codes.upsert('code1', { grantId: 'g1', exp: Math.floor(Date.now() / 1000) + 60 }, 60);
    const outcomes = await Promise.allSettled(Array.from({ length: 50 }, () => codes.consume('code1')));
    expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
    expect((await codes.find('code1'))?.consumed).toBeTypeOf('number');
    await codes.revokeByGrantId('g1');
    expect(await codes.find('code1')).toBeUndefined();
  });

  it('schedule and claimDue: due members earliest first, each leased to one of 20 concurrent takers, due again when the lease ends', async () => {
    const key = `due:${randomBytes(4).toString('hex')}`;
    const now = Date.now();
    await store.schedule(key, 'late', now + 60_000, 60);
    await store.schedule(key, 'b', now - 1_000, 60);
    await store.schedule(key, 'a', now - 2_000, 60);
    const takes = await Promise.all(Array.from({ length: 20 }, () => store.claimDue(key, now, 300, 10)));
    expect(takes.flat()).toEqual(['a', 'b']); // each once, the earliest first
    expect(await store.claimDue(key, now + 100, 300, 10)).toEqual([]); // leased
    expect(await store.claimDue(key, now + 301, 300, 1)).toEqual(['a']); // the lease ended; the limit holds
    expect((await store.scheduled(key, 0, now + 120_000)).map((e) => e.member)).toEqual(['b', 'a', 'late']);
    await store.unschedule(key, 'late');
    await store.schedule(key, 'b', now + 5_000, 60); // moved
    expect(await store.scheduled(key, now + 4_000, now + 6_000)).toEqual([{ member: 'b', at: now + 5_000 }]);
  });
});
