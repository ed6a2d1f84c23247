import { describe, expect, it } from 'vitest';
import { hashTag } from '../../../src/store/redis.js';

describe("hashTag: the part of a key Redis Cluster hashes (the store's MGET stays in one slot)", () => {
  it.each([
    ['wallet:{abc}:offer', 'abc'],
    ['vc:wallet:{abc}:status', 'abc'],
    ['a{b}c{d}', 'b'], // the first {...} only
    ['{}x', undefined], // empty: Redis hashes the whole key
    ['no-tag', undefined],
    ['open{only', undefined],
    ['x}{y}', 'y'],
  ])('%s -> %s', (key, tag) => {
    expect(hashTag(key)).toBe(tag);
  });
});
