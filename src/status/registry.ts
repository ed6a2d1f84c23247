import { createHash, randomInt } from 'node:crypto';
import { randomBase64url } from '../random.js';
import type { Store } from '../store/types.js';

/** Token Status List values (draft-ietf-oauth-status-list §7.1), with two bits per entry. */
export const STATUS_VALUES = { valid: 0, revoked: 1, suspended: 2 } as const;
export type CredentialStatus = keyof typeof STATUS_VALUES;
const STATUS_NAMES: Record<number, CredentialStatus> = { 0: 'valid', 1: 'revoked', 2: 'suspended' };

/** Where one credential's status lives. */
export interface StatusEntry {
  listId: string;
  idx: number;
}

/** How the credential of a SerialNumber was issued (one offer, one credential). */
export type CredentialFormat = 'dc+sd-jwt' | 'mso_mdoc';

interface SerialRecord extends StatusEntry {
  /** epoch seconds: the credential's expiry, which the record does not outlive */
  exp: number;
  /** an mdoc, which cannot name its entry (`allocate`); absent: an SD-JWT VC, which does */
  format?: 'mso_mdoc';
}

/** An issued mdoc, found by its MSO's digest (`msoDigest`): whose it is and which entry says its status. */
interface MdocRecord extends StatusEntry {
  serialNumber: string;
}

/**
 * The key an issued mdoc is found by: the SHA-256 of its MSO as signed (the issuerAuth's COSE_Sign1 payload,
 * ISO/IEC 18013-5 §9.1.2.4), which every presentation carries whatever it discloses, and which cannot be
 * spelled otherwise without breaking the issuer's signature (as the signature itself could, ECDSA being malleable).
 */
export const msoDigest = (msoBytes: Uint8Array): string => createHash('sha256').update(msoBytes).digest('base64url');

/** Random draws for a free index before a list counts as full (at 85 % used, 20 draws all miss 4 % of the time). */
const DRAWS = 20;
/** How long an instance keeps using the list it last allocated from before looking at the shared pointer again (seconds). */
const CURRENT_CACHE_MS = 10_000;
/** The shared pointer to the list new credentials go into lives this long after its last renewal. */
const CURRENT_TTL = 86_400;
const OPAQUE = /^[A-Za-z0-9_-]{1,64}$/;
/**
 * Seconds every record is kept past its credential's expiry: a verifier accepts a credential up to its clock
 * tolerance after it (ours: 30 s), and a revocation must not be forgotten while it still does.
 */
const AFTER_EXPIRY = 60;
const ttlUntil = (exp: number) => Math.max(1, exp - Math.floor(Date.now() / 1000)) + AFTER_EXPIRY;

/** The store keys of one issuer's lists; every key of one list shares its hash tag (one Redis Cluster slot). */
const keysOf = (ns: string) => ({
  current: `status:${ns}:current`,
  list: (l: string) => `status:${ns}:{${l}}:list`,
  count: (l: string) => `status:${ns}:{${l}}:count`,
  next: (l: string) => `status:${ns}:{${l}}:next`,
  index: (l: string, i: number) => `status:${ns}:{${l}}:i:${i}`,
  value: (l: string, i: number) => `status:${ns}:{${l}}:v:${i}`,
  revoked: (l: string, i: number) => `status:${ns}:{${l}}:r:${i}`,
  changed: (l: string) => `status:${ns}:{${l}}:changed`,
  version: (l: string) => `status:${ns}:{${l}}:version`,
  serial: (s: string) => `status:${ns}:serial:${s}`,
  mso: (digest: string) => `status:${ns}:mso:${digest}`,
});

export class UnknownCredential extends Error {}
export class RevocationIsFinal extends Error {}

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

  /**
   * Allocates the entry of a credential that expires at `exp` (epoch seconds) and remembers it under its
   * SerialNumber: the entry is taken in one atomic step (its list counted, the first free of a few random
   * indexes written, the list kept alive), then the SerialNumber's record is written.
   *
   * An mdoc gets its entry too, but cannot carry it: neither @owf/mdoc nor @auth0/mdl writes or reads a
   * `status` in the MSO (ISO/IEC 18013-5 second edition). Its entry is found by the MSO's digest instead
   * (`mdocStatus`), by this service's verifier alone; the record says so (`format`), so that the operator
   * is told (src/admin).
   */
  async allocate(serialNumber: string, exp: number, mdoc?: { msoDigest: string }): Promise<StatusEntry> {
    const ttl = ttlUntil(exp);
    for (let lists = 0; lists < 4; lists++) {
      const listId = await this.#currentList();
      const idx = await this.#claimIndex(listId, serialNumber, ttl);
      if (idx === undefined) {
        await this.#retire(listId);
        continue;
      }
      const record: SerialRecord = { listId, idx, exp, ...(mdoc ? { format: 'mso_mdoc' as const } : {}) };
      await Promise.all([
        this.#store.set(this.#k.serial(serialNumber), record, ttl),
        mdoc && this.#store.set(this.#k.mso(mdoc.msoDigest), { listId, idx, serialNumber } satisfies MdocRecord, ttl),
      ]);
      return { listId, idx };
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
   * Sets the credential's status. Revoking is final: reinstating or suspending a revoked credential throws
   * RevocationIsFinal. Returns whether anything changed, and how the credential was issued and until when
   * (an mdoc's change reaches only this service's verifier: `allocate`).
   */
  async change(
    serialNumber: string,
    to: CredentialStatus,
  ): Promise<{ changed: boolean; entry: StatusEntry; format: CredentialFormat; exp: number }> {
    const record = await this.#serial(serialNumber);
    if (!record) throw new UnknownCredential(serialNumber);
    const { listId, idx } = record;
    const ttl = ttlUntil(record.exp);
    const entry = { listId, idx };
    let changed: boolean;
    if (to === 'revoked') {
      changed = await this.#store.setIfAbsent(this.#k.revoked(listId, idx), 1, ttl);
    } else {
      if ((await this.#store.get(this.#k.revoked(listId, idx))) !== undefined)
        throw new RevocationIsFinal(serialNumber);
      const before = Number((await this.#store.get(this.#k.value(listId, idx))) ?? 0);
      changed = before !== STATUS_VALUES[to];
      if (changed) await this.#store.set(this.#k.value(listId, idx), STATUS_VALUES[to], ttl);
      // a revocation that landed meanwhile still wins: the list reads the revocation key first
    }
    if (changed) {
      await this.#store.addToSet(this.#k.changed(listId), String(idx), ttl);
      await this.#store.attempt(this.#k.version(listId), true, Number.MAX_SAFE_INTEGER, ttl);
    }
    return { changed, entry, format: formatOf(record), exp: record.exp };
  }

  async #serial(serialNumber: string): Promise<SerialRecord | undefined> {
    if (serialNumber.length === 0 || serialNumber.length > 200) return undefined;
    return this.#store.get<SerialRecord>(this.#k.serial(serialNumber));
  }
}

const formatOf = (record: SerialRecord): CredentialFormat => record.format ?? 'dc+sd-jwt';
