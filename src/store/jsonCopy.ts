/**
 * A deep copy of a value exactly as `JSON.parse(JSON.stringify(value))` gives it, without the text in
 * between: `toJSON` is honoured (dates become strings), `undefined`, functions and symbols are left out
 * of objects and become `null` in arrays, non-finite numbers become `null`, wrapper objects their
 * primitives, and a `__proto__` member stays an own property. BigInts and cycles throw, as in JSON
 * (a cycle once the copy is 100 levels deep, where JSON takes over).
 *
 * The memory store keeps what it is given as such a copy and hands out a fresh copy on every read, so
 * callers never share mutable state with it, as with Redis, at a fraction of the cost of JSON text.
 */
export function jsonCopy<T = unknown>(value: unknown): T {
  return copy(value, '', 0) as T;
}

/** Below this depth JSON itself copies (and refuses a cycle with its own TypeError). */
const MAX_DEPTH = 100;

function copy(value: unknown, key: string, depth: number): unknown {
  if (typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
    value = (value as { toJSON: (key: string) => unknown }).toJSON(key);
  }
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return value;
    case 'number':
      return Number.isFinite(value) ? value + 0 : null; // + 0: -0 becomes 0, as "0" parses
    case 'undefined':
    case 'function':
    case 'symbol':
      return undefined;
    case 'bigint':
      throw new TypeError('Do not know how to serialize a BigInt');
    default:
      break;
  }
  if (value === null) return null;
  if (depth === MAX_DEPTH) return JSON.parse(JSON.stringify(value)) as unknown;
  if (Array.isArray(value)) {
    const out = new Array<unknown>(value.length);
    for (let i = 0; i < value.length; i++) {
      const item = copy(value[i], String(i), depth + 1);
      out[i] = item === undefined ? null : item;
    }
    return out;
  }
  if (value instanceof Number || value instanceof String || value instanceof Boolean) return copy(value.valueOf(), key, depth);
  const out: Record<string, unknown> = {};
  for (const name of Object.keys(value as object)) {
    const item = copy((value as Record<string, unknown>)[name], name, depth + 1);
    if (item === undefined) continue;
    if (name === '__proto__') Object.defineProperty(out, name, { value: item, enumerable: true, writable: true, configurable: true });
    else out[name] = item;
  }
  return out;
}
