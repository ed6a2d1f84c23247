import { randomInt } from 'node:crypto';
import { randomBase64url } from '../random.js';
import type { Store } from '../store/types.js';
import {
  CURRENT_CACHE_MS,
  CURRENT_TTL,
  DRAWS,
  entryOf,
  formatOf,
  keysOf,
  memberOf,
  OPAQUE,
  STATUS_NAMES,
  STATUS_VALUES,
  ttlUntil,
  RevocationIsFinal,
  UnknownCredential,
  type CredentialFormat,
  type CredentialStatus,
  type MdocRecord,
  type SerialRecord,
  type StatusEntry,
} from './records.js';

export {
  msoDigest,
  RevocationIsFinal,
  STATUS_VALUES,
  UnknownCredential,
  type CredentialFormat,
  type CredentialStatus,
  type StatusEntry,
} from './records.js';

/**
 * D18: which credential (by SerialNumber) has which entry of which Token Status List, and each entry's
 * value, in the store every instance shares. Indexes are drawn at random from the unused ones of the
 * current list, so an index says nothing about when a credential was issued. Every record lives as long
 * as the credential it describes; a list lives as long as its longest-lived credential.
 *
 * A revocation is written under its own key with `setIfAbsent` and outranks any other value: a
 * reinstatement racing a revocation can never undo it.
 */
export class StatusRegistry {
  readonly #store: Store;
  readonly #size: number;
  readonly #k: ReturnType<typeof keysOf>;
  #current: { listId: string; until: number } | undefined;

  /** `namespace`: the issuer's (its path), so that two issuers on one store keep apart */
  constructor(store: Store, size: number, namespace: string) {
    this.#store = store;
    this.#size = size;
    this.#k = keysOf(namespace);
  }

  get size(): number {
    return this.#size;
  }

  /** The entry of one credential that expires at `exp` (epoch seconds), its SerialNumber's first (`allocateMany`). */
  async allocate(serialNumber: string, exp: number, mdoc?: { msoDigest: string }): Promise<StatusEntry> {
    const [entry] = await this.allocateMany(serialNumber, exp, 1, mdoc && [mdoc.msoDigest], true);
    return entry;
  }

  /**
   * Allocates `count` entries for the credentials of one issuance (a batch: one per credential, each at its own
   * random index, so that no two share a value a relying party could compare), all named by one SerialNumber.
   * Each entry is taken in one atomic step (its list counted, the first free of a few random indexes written,
   * the list kept alive); then the SerialNumber's record and its set of entries are written. Entries allocated
   * after the SerialNumber was suspended or revoked (a re-issuance racing the operator) take that status on.
   * `first`: the SerialNumber's first issuance (an offer's), which has no record or status to read yet.
   *
   * An mdoc gets its entry too, but cannot carry it: neither @owf/mdoc nor @auth0/mdl writes or reads a
   * `status` in the MSO (ISO/IEC 18013-5 second edition). Its entry is found by the MSO's digest (`mdocDigests`,
   * one per entry; `mdocStatus`), by this service's verifier alone; the record says so (`format`), so that the
   * operator is told (src/admin).
   */
  async allocateMany(
    serialNumber: string,
    exp: number,
    count: number,
    mdocDigests?: string[],
    first = false,
  ): Promise<StatusEntry[]> {
    const ttl = ttlUntil(exp);
    const entries = await Promise.all(Array.from({ length: count }, () => this.#allocateOne(serialNumber, ttl)));
    const before = first ? undefined : await this.#serial(serialNumber);
    const named = before ?? entries[0];
    const record: SerialRecord = {
      listId: named.listId,
      idx: named.idx,
      exp: Math.max(exp, before?.exp ?? 0),
      ...(mdocDigests ? { format: 'mso_mdoc' as const } : {}),
    };
    await Promise.all([
      this.#store.set(this.#k.serial(serialNumber), record, ttlUntil(record.exp)),
      ...entries.map((e) => this.#store.addToSet(this.#k.entries(serialNumber), memberOf(e), ttlUntil(record.exp))),
      ...(mdocDigests ?? []).map((digest, i) =>
        this.#store.set(this.#k.mso(digest), { ...entries[i], serialNumber } satisfies MdocRecord, ttl),
      ),
    ]);
    // an operator cannot change a SerialNumber before its first issuance (it is unknown until then)
    if (first) return entries;
    // written after the entries are listed: a change that listed them before sets them itself, and one that
    // listed them after wrote its own status first, which is read here
    const [revoked, value] = await this.#store.getMany([
      this.#k.serialRevoked(serialNumber),
      this.#k.serialValue(serialNumber),
    ]);
    const inherited: CredentialStatus | undefined =
      revoked !== undefined ? 'revoked' : Number(value ?? 0) === STATUS_VALUES.suspended ? 'suspended' : undefined;
    if (inherited) for (const e of entries) await this.#changeEntry(e, inherited, ttl).catch(() => false);
    return entries;
  }

  /**
   * Takes back the entries of an issuance that was not completed (all or nothing: a batch that could not be
   * signed or recorded): their indexes are free again, the SerialNumber no longer lists them, and a record
   * naming no entry left is removed. A list's count of allocations stays (a counter, not a credential).
   */
  async release(serialNumber: string, entries: StatusEntry[], mdocDigests: string[] = []): Promise<void> {
    await Promise.all([
      ...entries.map((e) => this.#store.delete(this.#k.index(e.listId, e.idx))),
      ...mdocDigests.map((d) => this.#store.delete(this.#k.mso(d))),
    ]);
    const gone = new Set(entries.map(memberOf));
    const left = (await this.#store.members(this.#k.entries(serialNumber))).filter((m) => !gone.has(m));
    if (left.length === 0) {
      await this.#store.delete(this.#k.serial(serialNumber), this.#k.entries(serialNumber));
      return;
    }
    // the record names the SerialNumber's first entry, never one of a later issuance released here; a set
    // cannot lose members in this store: the remaining ones are written afresh
    const record = await this.#serial(serialNumber);
    await this.#store.delete(this.#k.entries(serialNumber));
    for (const m of left) await this.#store.addToSet(this.#k.entries(serialNumber), m, ttlUntil(record?.exp ?? 0));
  }

  async #allocateOne(serialNumber: string, ttl: number): Promise<StatusEntry> {
    for (let lists = 0; lists < 4; lists++) {
      const listId = await this.#currentList();
      const idx = await this.#claimIndex(listId, serialNumber, ttl);
      if (idx !== undefined) return { listId, idx };
      await this.#retire(listId);
    }
    throw new Error('no status list entry could be allocated');
  }

  /** A free index of the list, or undefined when the list is full (or every draw hit a used index). */
  async #claimIndex(listId: string, serialNumber: string, ttl: number): Promise<number | undefined> {
    const draws = Array.from({ length: DRAWS }, () => randomInt(this.#size));
    const { taken } = await this.#store.takeFree(
      this.#k.count(listId),
      this.#size,
      draws.map((i) => this.#k.index(listId, i)),
      serialNumber,
      ttl,
      this.#k.list(listId),
    );
    return taken === undefined ? undefined : draws[taken];
  }

  async #currentList(): Promise<string> {
    if (this.#current && this.#current.until > Date.now()) return this.#current.listId;
    let listId = await this.#store.get<string>(this.#k.current);
    if (typeof listId !== 'string') {
      const fresh = randomBase64url(12);
      listId = (await this.#store.setIfAbsent(this.#k.current, fresh, CURRENT_TTL))
        ? fresh
        : ((await this.#store.get<string>(this.#k.current)) ?? fresh);
    }
    this.#current = { listId, until: Date.now() + CURRENT_CACHE_MS };
    return listId;
  }

  /** The list is full: of the instances that notice, the first names its successor, and all move to that one. */
  async #retire(listId: string): Promise<void> {
    const fresh = randomBase64url(12);
    const next = (await this.#store.setIfAbsent(this.#k.next(listId), fresh, CURRENT_TTL))
      ? fresh
      : ((await this.#store.get<string>(this.#k.next(listId))) ?? fresh);
    await this.#store.set(this.#k.current, next, CURRENT_TTL);
    this.#current = { listId: next, until: Date.now() + CURRENT_CACHE_MS };
  }

  /** Whether the list exists (some credential in it may still be valid). */
  async exists(listId: string): Promise<boolean> {
    if (!OPAQUE.test(listId)) return false;
    return (await this.#store.members(this.#k.list(listId))).length > 0;
  }

  /** Bumped by every change: a served Status List Token is signed again when it moves. */
  async version(listId: string): Promise<number> {
    return (await this.#store.get<number>(this.#k.version(listId))) ?? 0;
  }

  /** Every entry whose value is not 0, as [index, value]. */
  async changedEntries(listId: string): Promise<[number, number][]> {
    const indexes = (await this.#store.members(this.#k.changed(listId)))
      .map(Number)
      .filter((i) => Number.isInteger(i) && i >= 0 && i < this.#size);
    if (indexes.length === 0) return [];
    const values = await this.#store.getMany(
      indexes.flatMap((i) => [this.#k.revoked(listId, i), this.#k.value(listId, i)]),
    );
    const out: [number, number][] = [];
    indexes.forEach((idx, n) => {
      const value = values[2 * n] !== undefined ? STATUS_VALUES.revoked : Number(values[2 * n + 1] ?? 0);
      if (value) out.push([idx, value]);
    });
    return out;
  }

  /** The credential's status, or undefined when the SerialNumber is unknown (never issued, or expired). */
  async status(
    serialNumber: string,
  ): Promise<{ status: CredentialStatus; entry: StatusEntry; exp: number; format: CredentialFormat } | undefined> {
    const record = await this.#serial(serialNumber);
    if (!record) return undefined;
    const status = await this.#valueOf(record);
    return { status, entry: { listId: record.listId, idx: record.idx }, exp: record.exp, format: formatOf(record) };
  }

  /** The status of an mdoc this service issued, by its `msoDigest`; undefined for any other mdoc (or an expired one). */
  async mdocStatus(digest: string): Promise<CredentialStatus | undefined> {
    const record = await this.#store.get<MdocRecord>(this.#k.mso(digest));
    return record && this.#valueOf(record);
  }

  async #valueOf({ listId, idx }: StatusEntry): Promise<CredentialStatus> {
    const [revoked, value] = await this.#store.getMany([this.#k.revoked(listId, idx), this.#k.value(listId, idx)]);
    return revoked !== undefined ? 'revoked' : (STATUS_NAMES[Number(value ?? 0)] ?? 'valid');
  }

  /**
   * Sets the status of every credential issued under the SerialNumber (each entry of its batches, D18): the
   * SerialNumber's own status first, which entries allocated later take on, then each entry. Revoking is final:
   * reinstating or suspending a revoked credential throws RevocationIsFinal. Returns whether anything changed,
   * and how the credentials were issued and until when (an mdoc's change reaches only this service's verifier:
   * `allocate`), and how many credentials the SerialNumber names.
   */
  async change(
    serialNumber: string,
    to: CredentialStatus,
  ): Promise<{ changed: boolean; entry: StatusEntry; format: CredentialFormat; exp: number; credentials: number }> {
    const record = await this.#serial(serialNumber);
    if (!record) throw new UnknownCredential(serialNumber);
    const ttl = ttlUntil(record.exp);
    const entry = { listId: record.listId, idx: record.idx };
    if (to === 'revoked') {
      await this.#store.setIfAbsent(this.#k.serialRevoked(serialNumber), 1, ttl);
    } else {
      const revoked =
        (await this.#store.get(this.#k.serialRevoked(serialNumber))) !== undefined ||
        (await this.#store.get(this.#k.revoked(entry.listId, entry.idx))) !== undefined;
      if (revoked) throw new RevocationIsFinal(serialNumber);
      await this.#store.set(this.#k.serialValue(serialNumber), STATUS_VALUES[to], ttl);
    }
    const entries = await this.#entriesOf(serialNumber, record);
    let changed = false;
    for (const e of entries) changed = (await this.#changeEntry(e, to, ttl)) || changed;
    return { changed, entry, format: formatOf(record), exp: record.exp, credentials: entries.length };
  }

  /** Every entry the SerialNumber names: its set, and the record's own entry (a record written before sets). */
  async #entriesOf(serialNumber: string, record: SerialRecord): Promise<StatusEntry[]> {
    const members = new Set(await this.#store.members(this.#k.entries(serialNumber)));
    members.add(memberOf(record));
    return [...members].flatMap((m) => entryOf(m) ?? []);
  }

  /** One entry's status; false when it already had it. RevocationIsFinal for a revoked entry asked to change. */
  async #changeEntry({ listId, idx }: StatusEntry, to: CredentialStatus, ttl: number): Promise<boolean> {
    let changed: boolean;
    if (to === 'revoked') {
      changed = await this.#store.setIfAbsent(this.#k.revoked(listId, idx), 1, ttl);
    } else {
      if ((await this.#store.get(this.#k.revoked(listId, idx))) !== undefined) throw new RevocationIsFinal(listId);
      const before = Number((await this.#store.get(this.#k.value(listId, idx))) ?? 0);
      changed = before !== STATUS_VALUES[to];
      if (changed) await this.#store.set(this.#k.value(listId, idx), STATUS_VALUES[to], ttl);
      // a revocation that landed meanwhile still wins: the list reads the revocation key first
    }
    if (changed) {
      await this.#store.addToSet(this.#k.changed(listId), String(idx), ttl);
      await this.#store.attempt(this.#k.version(listId), true, Number.MAX_SAFE_INTEGER, ttl);
    }
    return changed;
  }

  async #serial(serialNumber: string): Promise<SerialRecord | undefined> {
    if (serialNumber.length === 0 || serialNumber.length > 200) return undefined;
    return this.#store.get<SerialRecord>(this.#k.serial(serialNumber));
  }
}
