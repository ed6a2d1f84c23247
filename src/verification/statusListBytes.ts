import { inflate, type InputType, type ZlibOptions } from 'node:zlib';

/** draft-ietf-oauth-status-list §4.1: the bits per entry a list may use. */
export type StatusBits = 1 | 2 | 4 | 8;
const BITS: readonly number[] = [1, 2, 4, 8];
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** `statusList.maxEntries`' default: room for any real list (16 Mi entries is 2 MiB at 1 bit). */
export const DEFAULT_MAX_ENTRIES = 16 * 1024 * 1024;

/** A list's entries as the issuer packed them: never expanded, each read from the bytes when asked for. */
export interface StatusListBytes {
  readonly bits: StatusBits;
  readonly bytes: Uint8Array;
}

/** The `status_list` claim is not a list this service reads; the message names the rule. */
export class StatusListDecodeError extends Error {}

const inflateBounded = (input: InputType, options: ZlibOptions) =>
  new Promise<Buffer>((resolve, reject) => inflate(input, options, (err, out) => (err ? reject(err) : resolve(out))));

/**
 * The `status_list` claim of a Status List Token (draft-ietf-oauth-status-list §4.2): `bits` and `lst`, the
 * ZLIB-compressed (RFC 1950) byte array. A list of more than `maxEntries` entries is refused while it is
 * inflated: zlib stops at the byte count such a list would have, so a small `lst` that inflates to gigabytes
 * costs no more than that. Inflated off the event loop (zlib's thread pool), so other requests go on.
 */
export async function decodeStatusList(claim: unknown, maxEntries: number): Promise<StatusListBytes> {
  if (typeof claim !== 'object' || claim === null || Array.isArray(claim))
    throw new StatusListDecodeError('the status list has no status_list object');
  const { bits, lst } = claim as Record<string, unknown>;
  if (typeof bits !== 'number' || !BITS.includes(bits))
    throw new StatusListDecodeError('status_list.bits is not 1, 2, 4 or 8');
  if (typeof lst !== 'string' || !BASE64URL.test(lst))
    throw new StatusListDecodeError('status_list.lst is not base64url');
  // a list of exactly maxEntries entries fills this many bytes (the last one padded)
  const maxBytes = Math.ceil((maxEntries * bits) / 8);
  let bytes: Buffer;
  try {
    bytes = await inflateBounded(Buffer.from(lst, 'base64url'), { maxOutputLength: maxBytes });
  } catch (err) {
    if ((err as { code?: string }).code === 'ERR_BUFFER_TOO_LARGE') {
      throw new StatusListDecodeError(`the status list has more than ${maxEntries} entries (statusList.maxEntries)`);
    }
    throw new StatusListDecodeError('status_list.lst is not ZLIB-compressed (RFC 1950)');
  }
  return { bits: bits as StatusBits, bytes };
}

/** How many entries the bytes hold (the padding of the last byte included, as the draft's readers count). */
export function entryCount(list: StatusListBytes): number {
  return (list.bytes.length * 8) / list.bits;
}

/**
 * Entry `idx` (§4.1): at byte floor(idx·bits/8), from bit (idx·bits) mod 8 counted from the least
 * significant; `undefined` outside the list.
 */
export function statusAt(list: StatusListBytes, idx: number): number | undefined {
  if (!Number.isSafeInteger(idx) || idx < 0 || idx >= entryCount(list)) return undefined;
  const offset = idx * list.bits;
  return (list.bytes[Math.floor(offset / 8)] >> (offset % 8)) & ((1 << list.bits) - 1);
}
