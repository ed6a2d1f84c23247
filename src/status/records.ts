import { createHash } from 'node:crypto';

/**
 * The records of D18's status registry (src/status/registry.ts): the values an entry takes, the records a
 * SerialNumber and an mdoc are found by, and the store keys they live under.
 */

/** Token Status List values (draft-ietf-oauth-status-list §7.1), with two bits per entry. */
export const STATUS_VALUES = { valid: 0, revoked: 1, suspended: 2 } as const;
export type CredentialStatus = keyof typeof STATUS_VALUES;
export const STATUS_NAMES: Record<number, CredentialStatus> = { 0: 'valid', 1: 'revoked', 2: 'suspended' };

/** Where one credential's status lives. */
export interface StatusEntry {
  listId: string;
  idx: number;
}

/** How the credential of a SerialNumber was issued (one offer, one credential). */
export type CredentialFormat = 'dc+sd-jwt' | 'mso_mdoc';

export interface SerialRecord extends StatusEntry {
  /** epoch seconds: the credential's expiry, which the record does not outlive */
  exp: number;
  /** an mdoc, which cannot name its entry (`allocate`); absent: an SD-JWT VC, which does */
  format?: 'mso_mdoc';
}

/** An issued mdoc, found by its MSO's digest (`msoDigest`): whose it is and which entry says its status. */
export interface MdocRecord extends StatusEntry {
  serialNumber: string;
}

/**
 * The key an issued mdoc is found by: the SHA-256 of its MSO as signed (the issuerAuth's COSE_Sign1 payload,
 * ISO/IEC 18013-5 §9.1.2.4), which every presentation carries whatever it discloses, and which cannot be
 * spelled otherwise without breaking the issuer's signature (as the signature itself could, ECDSA being malleable).
 */
export const msoDigest = (msoBytes: Uint8Array): string => createHash('sha256').update(msoBytes).digest('base64url');

/** Random draws for a free index before a list counts as full (at 85 % used, 20 draws all miss 4 % of the time). */
export const DRAWS = 20;
/** How long an instance keeps using the list it last allocated from before looking at the shared pointer again (seconds). */
export const CURRENT_CACHE_MS = 10_000;
/** The shared pointer to the list new credentials go into lives this long after its last renewal. */
export const CURRENT_TTL = 86_400;
export const OPAQUE = /^[A-Za-z0-9_-]{1,64}$/;

/**
 * Seconds every record is kept past its credential's expiry: a verifier accepts a credential up to its clock
 * tolerance after it (ours: 30 s), and a revocation must not be forgotten while it still does.
 */
export const AFTER_EXPIRY = 60;
export const ttlUntil = (exp: number) => Math.max(1, exp - Math.floor(Date.now() / 1000)) + AFTER_EXPIRY;

/** The store keys of one issuer's lists; every key of one list shares its hash tag (one Redis Cluster slot). */
export const keysOf = (ns: string) => ({
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
  /** every entry of a SerialNumber (a batch, and the batches re-issued under it), as `<listId>.<idx>` */
  entries: (s: string) => `status:${ns}:serial:{${s}}:entries`,
  /** the SerialNumber's own status, which entries allocated after a change take on (one slot: read together) */
  serialRevoked: (s: string) => `status:${ns}:serial:{${s}}:r`,
  serialValue: (s: string) => `status:${ns}:serial:{${s}}:v`,
  mso: (digest: string) => `status:${ns}:mso:${digest}`,
});

export class UnknownCredential extends Error {}
export class RevocationIsFinal extends Error {}

export const formatOf = (record: SerialRecord): CredentialFormat => record.format ?? 'dc+sd-jwt';

/** An entry as a member of a SerialNumber's set: `<listId>.<idx>` (a list id is base64url, without dots). */
export const memberOf = ({ listId, idx }: StatusEntry) => `${listId}.${idx}`;
const MEMBER = /^([A-Za-z0-9_-]{1,64})\.(\d{1,9})$/;
export const entryOf = (member: string): StatusEntry | undefined => {
  const m = MEMBER.exec(member);
  return m ? { listId: m[1], idx: Number(m[2]) } : undefined;
};
