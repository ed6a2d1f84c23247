import { randomBytes, randomInt } from 'node:crypto';
import { createDeflate, deflateSync } from 'node:zlib';
import { StatusList } from '@sd-jwt/jwt-status-list';
import { describe, expect, it } from 'vitest';
import {
  decodeStatusList,
  DEFAULT_MAX_ENTRIES,
  entryCount,
  StatusListDecodeError,
  statusAt,
  type StatusBits,
} from '../../../src/verification/statusListBytes.js';

/**
 * issue 31 §1: a Status List Token's `lst` is inflated with a bound and read by index from its bytes
 * (draft-ietf-oauth-status-list §4.1), never expanded into one value per entry.
 */

/** ZLIB of `size` zero bytes, deflated a MiB at a time: the test never holds the inflated size. */
async function zeroBomb(size: number): Promise<string> {
  const deflate = createDeflate({ level: 9 });
  const out: Buffer[] = [];
  deflate.on('data', (chunk: Buffer) => out.push(chunk));
  const done = new Promise((resolve, reject) => deflate.on('end', resolve).on('error', reject));
  const mib = Buffer.alloc(1024 * 1024);
  for (let written = 0; written < size; written += mib.length) {
    if (!deflate.write(mib)) await new Promise((resolve) => deflate.once('drain', resolve));
  }
  deflate.end();
  await done;
  return Buffer.concat(out).toString('base64url');
}

const lstOf = (bytes: Buffer) => deflateSync(bytes).toString('base64url');
const refused = (claim: unknown, maxEntries: number, message: RegExp) =>
  expect(decodeStatusList(claim, maxEntries)).rejects.toSatisfy(
    (err) => err instanceof StatusListDecodeError && message.test(err.message),
  );

describe('status list bytes (issue 31 §1)', () => {
  it('refuses a 128 MiB zero bomb (130 KB of lst) at the entry limit, without inflating it', async () => {
    const lst = await zeroBomb(128 * 1024 * 1024);
    expect(lst.length).toBeLessThan(200_000);
    for (const bits of [1, 8]) {
      const before = process.memoryUsage().arrayBuffers;
      await refused(
        { bits, lst },
        DEFAULT_MAX_ENTRIES,
        /the status list has more than 16777216 entries \(statusList\.maxEntries\)/,
      );
      // inflated in full it would be 128 MiB; bounded it stops at the limit (2 MiB at 1 bit, 16 MiB at 8)
      expect(process.memoryUsage().arrayBuffers - before).toBeLessThan(48 * 1024 * 1024);
    }
  });

  it('accepts a list of exactly maxEntries entries and refuses one byte more', async () => {
    // the default: 16 Mi entries of 1 bit are 2 MiB
    const full = await decodeStatusList(
      { bits: 1, lst: lstOf(Buffer.alloc(2 * 1024 * 1024, 0x80)) },
      DEFAULT_MAX_ENTRIES,
    );
    expect(entryCount(full)).toBe(DEFAULT_MAX_ENTRIES);
    expect(statusAt(full, DEFAULT_MAX_ENTRIES - 1)).toBe(1);
    expect(statusAt(full, DEFAULT_MAX_ENTRIES)).toBeUndefined();
    await refused(
      { bits: 1, lst: lstOf(Buffer.alloc(2 * 1024 * 1024 + 1)) },
      DEFAULT_MAX_ENTRIES,
      /more than 16777216 entries/,
    );
    // a limit that is not a whole number of bytes: 1001 entries of 2 bits fill 251 bytes, the last one padded
    expect(entryCount(await decodeStatusList({ bits: 2, lst: lstOf(Buffer.alloc(251)) }, 1001))).toBe(1004);
    await refused({ bits: 2, lst: lstOf(Buffer.alloc(252)) }, 1001, /more than 1001 entries/);
    // 8 bits: maxEntries bytes
    expect(entryCount(await decodeStatusList({ bits: 8, lst: lstOf(Buffer.alloc(4096)) }, 4096))).toBe(4096);
    await refused({ bits: 8, lst: lstOf(Buffer.alloc(4097)) }, 4096, /more than 4096 entries/);
  });

  it.each([1, 2, 4, 8] as StatusBits[])(
    'reads every entry of a %i-bit list as @sd-jwt/jwt-status-list encodes and decodes it',
    async (bits) => {
      for (const size of [1, 7, 1000, 4099]) {
        const values = Array.from({ length: size }, () => randomInt(2 ** bits));
        const lst = new StatusList(values, bits).compressStatusList();
        const ours = await decodeStatusList({ bits, lst }, DEFAULT_MAX_ENTRIES);
        const library = StatusList.decompressStatusList(lst, bits);
        const read = Array.from({ length: entryCount(ours) }, (_, i) => statusAt(ours, i));
        expect(read).toEqual(Array.from({ length: library.statusList.length }, (_, i) => library.getStatus(i)));
        expect(read.slice(0, size)).toEqual(values);
      }
    },
  );

  it("reads the draft's own examples (§4.1): LSB first", async () => {
    // 1 bit: bytes b9 a3 → entries 0..15 = 1 0 0 1 1 1 0 1, 1 1 0 0 0 1 0 1
    const one = await decodeStatusList({ bits: 1, lst: lstOf(Buffer.from([0xb9, 0xa3])) }, 1024);
    expect(Array.from({ length: 16 }, (_, i) => statusAt(one, i))).toEqual([
      1, 0, 0, 1, 1, 1, 0, 1, 1, 1, 0, 0, 0, 1, 0, 1,
    ]);
    // 2 bits: bytes c9 44 f9 → 1 2 0 3, 0 1 0 1, 1 2 3 3
    const two = await decodeStatusList({ bits: 2, lst: lstOf(Buffer.from([0xc9, 0x44, 0xf9])) }, 1024);
    expect(Array.from({ length: 12 }, (_, i) => statusAt(two, i))).toEqual([1, 2, 0, 3, 0, 1, 0, 1, 1, 2, 3, 3]);
  });

  it('has no entry at a negative, fractional or too large index', async () => {
    const list = await decodeStatusList({ bits: 4, lst: lstOf(randomBytes(8)) }, 1024);
    for (const idx of [-1, 0.5, 16, Number.MAX_SAFE_INTEGER, Number.NaN])
      expect(statusAt(list, idx), String(idx)).toBeUndefined();
  });

  it('refuses a claim that is not a status list, naming the rule', async () => {
    const lst = lstOf(Buffer.alloc(4));
    await refused(undefined, 1024, /has no status_list object/);
    await refused([lst], 1024, /has no status_list object/);
    await refused({ lst }, 1024, /status_list\.bits is not 1, 2, 4 or 8/);
    await refused({ bits: 3, lst }, 1024, /status_list\.bits is not 1, 2, 4 or 8/);
    await refused({ bits: 1 }, 1024, /status_list\.lst is not base64url/);
    await refused({ bits: 1, lst: `${lst}+/` }, 1024, /status_list\.lst is not base64url/);
    await refused(
      { bits: 1, lst: randomBytes(64).toString('base64url') },
      1024,
      /status_list\.lst is not ZLIB-compressed/,
    );
  });
});
