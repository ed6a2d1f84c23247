import { createHash, randomBytes } from 'node:crypto';
import { readFile, rename, writeFile } from 'node:fs/promises';
import type { Store } from '../store/types.js';
import {
  KEY_STORE_KEYS,
  KINDS,
  newSigningKey,
  secretOf,
  type KeptJwk,
  type KeyOrigin,
  type SecretEntry,
} from './keys.js';
import { ROTATING, type KeepPeriods, type RotatingSet } from './keyRing.js';
import { viewSet, type KeyView } from './rotation.js';

type Entries = KeptJwk[] | SecretEntry[];

/** Where a set is kept, and how to read and (compare-and-)write it there. */
export interface Place {
  where: string;
  read(): Promise<unknown>;
  /** false when the set changed since it was read (another rotation): read again */
  write(before: unknown, after: unknown): Promise<boolean>;
}

export function placeOf(origin: KeyOrigin, store: Store | undefined): Place {
  if (origin.origin === 'store' || origin.origin === 'generated-store') {
    const key = KEY_STORE_KEYS[origin.set];
    if (!store) throw new Error(`the ${origin.set} keys are in the store, which this command has not opened`);
    return {
      where: `store key ${key}`,
      read: () => store.get(key),
      write: (before, after) => store.replacePermanent(key, before, after),
    };
  }
  const file = origin.file;
  return {
    where: file,
    read: async () => JSON.parse(await readFile(file, 'utf8')),
    // written beside and renamed over: an instance reloading it reads the old set or the new one, whole
    async write(before, after) {
      if (JSON.stringify(JSON.parse(await readFile(file, 'utf8'))) !== JSON.stringify(before)) return false;
      const temp = `${file}.${randomBytes(6).toString('hex')}.tmp`;
      await writeFile(temp, `${JSON.stringify(after, null, 2)}\n`, { mode: 0o600, flag: 'wx' });
      await rename(temp, file);
      return true;
    },
  };
}

const entriesOf = (set: RotatingSet, value: unknown): Entries =>
  set === 'cookies' ? (value as SecretEntry[]) : (value as { keys: KeptJwk[] }).keys;
const valueOf = (set: RotatingSet, entries: Entries): unknown => (set === 'cookies' ? entries : { keys: entries });

/** A key's name in listings: its kid, or for a secret a short fingerprint (never the secret). */
function nameOf(set: RotatingSet, entry: KeptJwk | SecretEntry): string {
  if (set !== 'cookies') return (entry as KeptJwk).kid ?? '(no kid)';
  return `sha256:${createHash('sha256')
    .update(secretOf(entry as SecretEntry))
    .digest('hex')
    .slice(0, 12)}`;
}

export interface KeyRow {
  set: RotatingSet;
  name: string;
  view: KeyView;
}

export interface RotationResult {
  where: string;
  added: string;
  activates: Date;
  removed: string[];
}

/**
 * `npm run keys -- rotate SET`: adds a new key, published at once and signing from now + activateAfter,
 * and removes keys past their keep period. Refused while a key of the set is still pending (a second
 * rotation would only queue another key behind it).
 */
export async function rotateKeySet(
  set: RotatingSet,
  origin: KeyOrigin,
  /** `certify`: with the local issuer CA, the new credential key's certificate chain (its JWK `x5c`) */
  o: {
    store?: Store;
    keep: KeepPeriods;
    activateAfterMs: number;
    now?: number;
    certify?: (jwk: KeptJwk) => Promise<string[]>;
  },
): Promise<RotationResult> {
  const place = placeOf(origin, o.store);
  for (let round = 0; round < 5; round++) {
    const now = o.now ?? Date.now();
    const before = await place.read();
    if (before === undefined) throw new Error(`${place.where}: the ${set} keys are not there`);
    const entries = entriesOf(set, KINDS[set].check(place.where, before));
    const view = viewSet(entries, now, o.keep[set]);
    const pending = view.keys.find((k) => k.state === 'pending');
    if (pending) {
      throw new RotationRefused(
        `${set}: ${nameOf(set, entries[pending.index])} is already pending (it signs from ${pending.activates!.toISOString()}); nothing was changed`,
      );
    }
    const rotation = {
      created: new Date(now).toISOString(),
      activates: new Date(now + o.activateAfterMs).toISOString(),
    };
    let added: KeptJwk | SecretEntry =
      set === 'cookies'
        ? { secret: (await KINDS.cookies.make())[0], rotation }
        : { ...(await newSigningKey(set === 'idToken' ? 'RS256' : 'ES256')), rotation };
    // the certificate rotates with the key: a new leaf for the new key, kept with it
    if (set === 'credential' && o.certify) added = { ...(added as KeptJwk), x5c: await o.certify(added as KeptJwk) };
    const kept = entries.filter((_, i) => view.keys[i].state !== 'expired');
    const removed = entries.filter((_, i) => view.keys[i].state === 'expired').map((e) => nameOf(set, e));
    const after = valueOf(set, [added, ...kept] as Entries);
    if (await place.write(before, after))
      return { where: place.where, added: nameOf(set, added), activates: new Date(rotation.activates), removed };
  }
  throw new Error(`${place.where}: the ${set} keys kept changing while this rotation ran; nothing was changed`);
}

/** A refusal that is the operator's to resolve (not a failure of the command). */
export class RotationRefused extends Error {}

/** `npm run keys -- list`: every key of the rotatable sets, its state and dates. */
export async function listKeys(
  origins: KeyOrigin[],
  o: { store?: Store; keep: KeepPeriods; now?: number },
): Promise<{ where: string; rows: KeyRow[] }[]> {
  const out: { where: string; rows: KeyRow[] }[] = [];
  for (const set of ROTATING) {
    const origin = origins.find((x) => x.set === set);
    if (!origin) continue;
    const place = placeOf(origin, o.store);
    const entries = entriesOf(set, KINDS[set].check(place.where, await place.read()));
    const view = viewSet(entries, o.now ?? Date.now(), o.keep[set]);
    out.push({ where: place.where, rows: entries.map((e, i) => ({ set, name: nameOf(set, e), view: view.keys[i] })) });
  }
  return out;
}
