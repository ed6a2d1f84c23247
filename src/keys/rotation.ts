/**
 * D20, key rotation: the state of each key of a set at a moment, from dates the set itself carries.
 *
 * A rotated key carries `rotation: {created, activates}` (ISO 8601). It is published (and verifies) from
 * the moment every instance loads it, and signs from `activates` on, so that every client's JWKS cache
 * has it before anything signed with it arrives. The newest key whose `activates` has passed signs; a
 * key superseded by a newer one is retired at that one's activation and stays published for `keep`
 * (as long as anything it signed may still be checked), then it is gone. A key without dates (a key file
 * an operator wrote, or a generated set) is older than any rotated key; among those, the first signs,
 * and a later one is kept until it is removed by hand.
 */

export interface Rotation {
  created: string;
  activates: string;
}

export type KeyState = 'pending' | 'active' | 'retired' | 'expired';

export interface KeyView {
  /** the entry's position in the set */
  index: number;
  state: KeyState;
  created?: Date;
  activates?: Date;
  /** when a newer key took over (unknown for keys without dates superseded by another without dates) */
  retired?: Date;
  /** when it stops being published */
  removed?: Date;
}

export interface SetView {
  /** per entry, in the set's order */
  keys: KeyView[];
  /** the entry that signs */
  signing: number;
  /** the next moment a state changes (a pending key activates, a retired one is removed), or Infinity */
  until: number;
}

function dateOf(value: unknown): number | undefined {
  if (typeof value !== 'string') return undefined;
  const t = Date.parse(value);
  return Number.isFinite(t) ? t : undefined;
}

/** The rotation dates of an entry, when it has well-formed ones. */
export function rotationOf(entry: unknown): { created: number; activates: number } | undefined {
  const r = (entry as { rotation?: unknown } | null)?.rotation as Record<string, unknown> | undefined;
  if (!r || typeof r !== 'object') return undefined;
  const created = dateOf(r.created);
  const activates = dateOf(r.activates);
  return created !== undefined && activates !== undefined ? { created, activates } : undefined;
}

/** The state of every entry at `now` (epoch ms); `keepMs`: how long a retired key stays published. */
export function viewSet(entries: readonly unknown[], now: number, keepMs: number): SetView {
  if (entries.length === 0) throw new Error('a key set needs at least one key');
  const dates = entries.map(rotationOf);
  // newest first: by activation, undated keys (−∞) last, among them the earlier position first
  const order = entries
    .map((_, i) => i)
    .sort((a, b) => (dates[b]?.activates ?? -Infinity) - (dates[a]?.activates ?? -Infinity) || a - b);
  const activated = order.filter((i) => (dates[i]?.activates ?? -Infinity) <= now);
  // only pending keys (an operator's hand edit): the earliest to activate signs rather than nothing
  const signing = activated[0] ?? order[order.length - 1];
  let until = Infinity;
  const keys: KeyView[] = entries.map((_, index) => {
    const d = dates[index];
    const base = { index, created: d && new Date(d.created), activates: d && new Date(d.activates) };
    if (index === signing) return { ...base, state: 'active' };
    const pos = activated.indexOf(index);
    if (pos < 0) {
      until = Math.min(until, d!.activates);
      return { ...base, state: 'pending' };
    }
    const successor = dates[activated[pos - 1]]?.activates;
    if (successor === undefined) return { ...base, state: 'retired' }; // undated, superseded by an undated key
    const removed = successor + keepMs;
    if (removed > now) until = Math.min(until, removed);
    return {
      ...base,
      state: removed > now ? 'retired' : 'expired',
      retired: new Date(successor),
      removed: new Date(removed),
    };
  });
  return { keys, signing, until };
}
