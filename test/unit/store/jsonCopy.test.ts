import { describe, expect, it } from 'vitest';
import { jsonCopy } from '../../../src/store/jsonCopy.js';

const viaJson = (v: unknown) => JSON.parse(JSON.stringify(v)) as unknown;

describe('jsonCopy: the memory store copies values exactly as a JSON round trip would (D14: the same as Redis)', () => {
  const cases: [string, unknown][] = [
    ['primitives', { s: 'x', n: 1.5, t: true, f: false, z: null }],
    ['nested arrays and objects', { a: [1, [2, [3, { b: ['c'] }]]], o: { p: { q: {} } } }],
    ['undefined, functions and symbols left out of objects', { u: undefined, fn: () => 1, sym: Symbol('s'), kept: 1 }],
    ['undefined, functions and symbols as null in arrays, holes as null', [undefined, () => 1, Symbol('s'), , 4]], // eslint-disable-line no-sparse-arrays
    ['non-finite numbers as null, -0 as 0', { nan: Number.NaN, inf: Number.POSITIVE_INFINITY, neg: Number.NEGATIVE_INFINITY, minusZero: -0 }],
    ['dates through toJSON', { at: new Date(86_400_000), list: [new Date(0)] }],
    ['toJSON gets its key', { k: { toJSON: (key: string) => `key:${key}` }, list: [{ toJSON: (key: string) => `index:${key}` }] }],
    ['wrapper objects as primitives', { n: Object(3), s: Object('x'), b: Object(false) }],
    ['Maps and Sets as empty objects', { m: new Map([[1, 2]]), set: new Set([1]) }],
    ['integer-like keys ordered as JSON orders them', { b: 1, 2: 'two', a: 2, 1: 'one' }],
    ['a string', 'just text'],
    ['a number', 42],
    ['null', null],
    ['undefined', undefined],
  ];
  it.each(cases)('%s', (_name, value) => {
    const copied = jsonCopy(value);
    expect(copied).toStrictEqual(value === undefined ? undefined : viaJson(value)); // JSON.stringify(undefined) is no text at all
    if (value !== null && typeof value === 'object') expect(JSON.stringify(copied)).toBe(JSON.stringify(value));
  });

  it('keeps a __proto__ member an own property and never sets the prototype', () => {
    const hostile = JSON.parse('{"__proto__": {"admin": true}, "nested": {"__proto__": {"admin": true}}}') as Record<string, unknown>;
    const copied = jsonCopy<Record<string, { admin?: boolean }>>(hostile);
    expect(Object.getPrototypeOf(copied)).toBe(Object.prototype);
    expect(Object.keys(copied)).toEqual(['__proto__', 'nested']);
    expect((copied as { admin?: boolean }).admin).toBeUndefined();
    expect(Object.getPrototypeOf(copied.nested)).toBe(Object.prototype);
    expect(copied).toStrictEqual(viaJson(hostile));
  });

  it('is a deep copy: nothing is shared with the original', () => {
    const value = { a: { b: [1, { c: 2 }] } };
    const copied = jsonCopy<typeof value>(value);
    (copied.a.b[1] as { c: number }).c = 99;
    expect(value.a.b[1]).toEqual({ c: 2 });
  });

  it('copies values nested deeper than it recurses itself (JSON takes over)', () => {
    let deep: unknown = { leaf: [1, undefined] };
    for (let i = 0; i < 500; i++) deep = { next: deep, at: new Date(i) };
    expect(jsonCopy(deep)).toStrictEqual(viaJson(deep));
  });

  it('refuses what JSON refuses: BigInts and cycles, with a TypeError', () => {
    expect(() => jsonCopy({ n: 1n })).toThrow(TypeError);
    const cycle: Record<string, unknown> = { a: 1 };
    cycle.self = { again: cycle };
    expect(() => jsonCopy(cycle)).toThrow(TypeError);
  });
});
