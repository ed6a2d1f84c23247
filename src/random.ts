import { randomBytes } from 'node:crypto';

/** `bytes` random bytes from the CSPRNG as base64url (no padding): 16 bytes are 128 bits in 22 characters. */
export const randomBase64url = (bytes: number): string => randomBytes(bytes).toString('base64url');

/** `bytes` random bytes from the CSPRNG as standard base64 (a CSP nonce: RFC 7230 token characters and `+/=`). */
export const randomBase64 = (bytes: number): string => randomBytes(bytes).toString('base64');
