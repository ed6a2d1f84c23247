import { randomFillSync } from 'node:crypto';

/** Bytes drawn from the CSPRNG at a time: one call serves many nonces and salts. */
const POOL_BYTES = 4096;
let pool = Buffer.alloc(0);
let used = 0;

/**
 * `bytes` fresh bytes from the operating system's CSPRNG (node:crypto), handed out once each from a pool
 * filled `POOL_BYTES` at a time, as node:crypto's own `randomUUID` does. A `randomBytes(16)` call costs
 * several microseconds under load whatever its size; a page nonce and each SD-JWT salt drew one.
 */
function take(bytes: number): Buffer {
  if (bytes > POOL_BYTES) return randomFillSync(Buffer.allocUnsafe(bytes));
  if (used + bytes > pool.length) {
    pool = randomFillSync(Buffer.allocUnsafe(POOL_BYTES));
    used = 0;
  }
  const out = pool.subarray(used, used + bytes);
  used += bytes;
  return out;
}

/** Encodes the bytes taken, then clears them in the pool: a value handed out is not kept there. */
function encoded(bytes: number, encoding: 'base64url' | 'base64'): string {
  const chunk = take(bytes);
  const text = chunk.toString(encoding);
  chunk.fill(0);
  return text;
}

/** `bytes` random bytes as base64url (no padding): 16 bytes are 128 bits in 22 characters. */
export const randomBase64url = (bytes: number): string => encoded(bytes, 'base64url');

/** `bytes` random bytes as standard base64 (a CSP nonce, RFC 7230 token characters and `+/=`). */
export const randomBase64 = (bytes: number): string => encoded(bytes, 'base64');
