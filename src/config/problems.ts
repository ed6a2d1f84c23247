import { isMap, isPair, isScalar, isSeq, type Node } from 'yaml';
import type { z } from 'zod';

/**
 * How check-config names the place of a problem: a path such as `clients[0].clientSecret`,
 * an entry of a list also by what identifies it (`clients[0] (demo-issuer)`), and for an unknown key the
 * nearest key the schema knows there.
 */

/** The field that names an entry of each list, where the list has one. */
const ENTRY_NAMES: Record<string, string> = { clients: 'clientId', credentialTypes: 'name' };

export function formatPath(path: readonly PropertyKey[], doc?: unknown): string {
  let out = '';
  let at: unknown = doc;
  path.forEach((seg, i) => {
    at = at !== null && typeof at === 'object' ? (at as Record<PropertyKey, unknown>)[seg] : undefined;
    if (typeof seg !== 'number') {
      out = out ? `${out}.${String(seg)}` : String(seg);
      return;
    }
    out += `[${seg}]`;
    const field = ENTRY_NAMES[String(path[i - 1])];
    const name = field && at !== null && typeof at === 'object' ? (at as Record<string, unknown>)[field] : undefined;
    if (typeof name === 'string' && name.length > 0 && name.length <= 80) out += ` (${field} ${name})`;
  });
  return out;
}

/** The config path of a YAML scalar, from the ancestors `yaml`'s visit hands over. */
export function yamlPath(ancestors: readonly unknown[], node: Node): PropertyKey[] {
  const path: PropertyKey[] = [];
  const chain = [...ancestors, node];
  chain.forEach((a, i) => {
    if (isPair(a) && isScalar(a.key)) path.push(String(a.key.value));
    else if (isSeq(a)) path.push(a.items.indexOf(chain[i + 1] as never));
  });
  // a scalar that is itself a map's key is not a value of the config
  return isMap(chain.at(-2)) ? path.slice(0, -1) : path;
}

type Def = {
  type: string;
  shape?: Record<string, z.ZodType>;
  innerType?: z.ZodType;
  in?: z.ZodType;
  element?: z.ZodType;
  options?: z.ZodType[];
  valueType?: z.ZodType;
};
const defOf = (s: z.ZodType): Def => (s as unknown as { _zod: { def: Def } })._zod.def;

/** The keys the schema allows for the object at `path`, or none when it is not one object there. */
export function knownKeys(schema: z.ZodType, path: readonly PropertyKey[]): string[] {
  const objects = (s: z.ZodType, rest: readonly PropertyKey[]): Record<string, z.ZodType>[] => {
    const def = defOf(s);
    if (def.innerType) return objects(def.innerType, rest);
    if (def.type === 'pipe' && def.in) return objects(def.in, rest);
    if (def.type === 'union' && def.options) return def.options.flatMap((o) => objects(o, rest));
    if (rest.length === 0) return def.type === 'object' && def.shape ? [def.shape] : [];
    const [seg, ...more] = rest;
    if (def.type === 'object' && def.shape && typeof seg === 'string' && def.shape[seg])
      return objects(def.shape[seg], more);
    if (def.type === 'array' && def.element && typeof seg === 'number') return objects(def.element, more);
    if (def.type === 'record' && def.valueType) return objects(def.valueType, more);
    return [];
  };
  return [...new Set(objects(schema, path).flatMap((shape) => Object.keys(shape)))];
}

/** The known key nearest to an unknown one, when it is near enough to be a typo (a third of its length). */
export function nearest(unknown: string, known: readonly string[]): string | undefined {
  let best: { key: string; distance: number } | undefined;
  for (const key of known) {
    const distance = editDistance(unknown.toLowerCase(), key.toLowerCase());
    if (!best || distance < best.distance) best = { key, distance };
  }
  return best && best.distance <= Math.max(1, Math.floor(unknown.length / 3)) ? best.key : undefined;
}

function editDistance(a: string, b: string): number {
  // Damerau (optimal string alignment): a swapped pair of letters is one edit, as typists make them
  const d = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      d[i][j] = Math.min(d[i - 1][j] + 1, d[i][j - 1] + 1, d[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1])
        d[i][j] = Math.min(d[i][j], d[i - 2][j - 2] + 1);
    }
  }
  return d[a.length][b.length];
}
