import { sign, type KeyObject } from 'node:crypto';

/** An ES256 JWS signature (RFC 7518 §3.4: r || s, base64url) of `data` with a P-256 private key. */
export function signEs256(key: KeyObject, data: string): string {
  return sign('sha256', Buffer.from(data), { key, dsaEncoding: 'ieee-p1363' }).toString('base64url');
}
