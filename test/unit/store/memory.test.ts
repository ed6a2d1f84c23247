import { afterEach, beforeEach, describe, it, expect } from 'vitest';
import { setTimeout as sleep } from 'node:timers/promises';
import { MemoryStore } from '../../../src/store/memory.js';
import type { Store } from '../../../src/store/types.js';

let store: MemoryStore;
beforeEach(() => {
  store = new MemoryStore();
});
afterEach(async () => {
  await store.close();
});

const later = (seconds: number) => Date.now() + seconds * 1000;

describe('MemoryStore: the Store contract (D14)', () => {
  it('is the memory kind and satisfies the Store interface', async () => {
    const s: Store = store;
    expect(s.kind).toBe('memory');
    await expect(s.ping()).resolves.toBeUndefined();
  });

  it('returns what was set, and undefined for an unknown key', async () => {
    await store.set('a', { n: 1, list: ['x'] }, 60);
    expect(await store.get('a')).toEqual({ n: 1, list: ['x'] });
    expect(await store.get('missing')).toBeUndefined();
  });

  it('overwrites a value and its TTL on set', async () => {
    await store.set('a', 1, 1);
    await store.set('a', 2, 60);
    store.sweep(later(5));
    expect(await store.get('a')).toBe(2);
  });

  it('forgets a value after its TTL (1 s, real time)', async () => {
    await store.set('short', 'v', 1);
    await store.set('long', 'v', 60);
    expect(await store.get('short')).toBe('v');
    await sleep(1100);
    expect(await store.get('short')).toBeUndefined();
    expect(await store.get('long')).toBe('v');
  });

  it('hands out copies: mutating a returned value does not change the store', async () => {
    await store.set('obj', { a: 1, nested: { b: 2 } }, 60);
    const got = await store.get<{ a: number; nested: { b: number } }>('obj');
    got!.a = 99;
    got!.nested.b = 99;
    expect(await store.get('obj')).toEqual({ a: 1, nested: { b: 2 } });
  });

  it('stores a copy: mutating the value after set does not change the store', async () => {
    const value = { a: 1, list: [1] };
    await store.set('obj', value, 60);
    value.a = 2;
    value.list.push(2);
    expect(await store.get('obj')).toEqual({ a: 1, list: [1] });
  });

  it('setIfAbsent writes only once, and again after the first value expired', async () => {
    expect(await store.setIfAbsent('k', 'first', 1)).toBe(true);
    expect(await store.setIfAbsent('k', 'second', 60)).toBe(false);
    expect(await store.get('k')).toBe('first');
    await sleep(1100);
    expect(await store.setIfAbsent('k', 'third', 60)).toBe(true);
    expect(await store.get('k')).toBe('third');
  });

  it('setIfAbsent: of 50 concurrent callers exactly one wins', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => store.setIfAbsent('once', i, 60)));
    expect(results.filter(Boolean)).toHaveLength(1);
    expect(await store.get('once')).toBe(results.indexOf(true));
  });

  it('consume returns the value once and deletes it (D14 single use)', async () => {
    await store.set('code', { sub: 'x' }, 60);
    expect(await store.consume('code')).toEqual({ sub: 'x' });
    expect(await store.consume('code')).toBeUndefined();
    expect(await store.get('code')).toBeUndefined();
  });

  it('consume: of 50 concurrent callers exactly one gets the value (D14: two concurrent redemptions, one winner)', async () => {
    await store.set('code', { id: 'c1' }, 60);
    const results = await Promise.all(Array.from({ length: 50 }, () => store.consume('code')));
    const winners = results.filter((r) => r !== undefined);
    expect(winners).toEqual([{ id: 'c1' }]);
  });

  it('consume of an expired value returns nothing', async () => {
    await store.set('code', 'v', 1);
    await sleep(1100);
    expect(await store.consume('code')).toBeUndefined();
  });

  it('attempt counts failed attempts up to the limit and refuses every attempt after it (D10 PIN attempts)', async () => {
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => store.attempt('n', i !== 49, 3, 60)));
    expect(results.filter((r) => r.allowed)).toHaveLength(3);
    expect(results[49]).toEqual({ allowed: false, count: 3 });
    expect(await store.get('n')).toBe(3);
  });

  it('attempt keeps the TTL set on the first failed attempt (later ones do not extend it)', async () => {
    await store.attempt('n', true, 10, 1);
    await store.attempt('n', true, 10, 600);
    await sleep(1100);
    expect(await store.attempt('n', true, 10, 60)).toEqual({ allowed: true, count: 1 });
  });

  it('addToSet / members: a set without duplicates, empty when unknown', async () => {
    expect(await store.members('s')).toEqual([]);
    await store.addToSet('s', 'a', 60);
    await store.addToSet('s', 'b', 60);
    await store.addToSet('s', 'a', 60);
    expect((await store.members('s')).sort()).toEqual(['a', 'b']);
  });

  it('members returns a copy', async () => {
    await store.addToSet('s', 'a', 60);
    (await store.members('s')).push('intruder');
    expect(await store.members('s')).toEqual(['a']);
  });

  it('addToSet extends the TTL to at least the new TTL, never shortens it', async () => {
    await store.addToSet('s', 'a', 1);
    await store.addToSet('s', 'b', 60);
    store.sweep(later(30));
    expect((await store.members('s')).sort()).toEqual(['a', 'b']);
    await store.addToSet('t', 'a', 60);
    await store.addToSet('t', 'b', 1);
    store.sweep(later(30));
    expect((await store.members('t')).sort()).toEqual(['a', 'b']);
  });

  it('delete removes several keys at once and ignores unknown ones', async () => {
    await store.set('a', 1, 60);
    await store.set('b', 2, 60);
    await store.set('c', 3, 60);
    await store.delete('a', 'b', 'missing');
    expect(await store.get('a')).toBeUndefined();
    expect(await store.get('b')).toBeUndefined();
    expect(await store.get('c')).toBe(3);
    await expect(store.delete()).resolves.toBeUndefined();
  });

  it('sweep drops expired entries so memory stays bounded by what is live', async () => {
    await store.set('a', 1, 10);
    await store.set('b', 2, 100);
    await store.attempt('c', true, 3, 10);
    await store.addToSet('d', 'm', 10);
    expect(store.size).toBe(4);
    store.sweep(later(50));
    expect(store.size).toBe(1);
    expect(await store.get('b')).toBe(2);
    store.sweep(later(200));
    expect(store.size).toBe(0);
  });

  it('sweep with the current time keeps live entries', async () => {
    await store.set('a', 1, 60);
    store.sweep();
    expect(store.size).toBe(1);
  });

  it('sweeps periodically on its own', async () => {
    const quick = new MemoryStore(50);
    try {
      await quick.set('a', 1, 1);
      expect(quick.size).toBe(1);
      await sleep(1200);
      expect(quick.size).toBe(0);
    } finally {
      await quick.close();
    }
  });

  it('close empties the store', async () => {
    await store.set('a', 1, 60);
    await store.close();
    expect(store.size).toBe(0);
  });
});
