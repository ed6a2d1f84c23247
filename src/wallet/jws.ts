import { decodeJwt, decodeProtectedHeader } from 'jose';
import { WalletError } from './errors.js';

/** A compact JWS's header and payload, unverified (the caller verifies); `failure` says what it should have been. */
export function decodeJws(
  jwt: string,
  failure: string,
): { header: Record<string, unknown>; payload: Record<string, unknown> } {
  try {
    return {
      header: decodeProtectedHeader(jwt) as Record<string, unknown>,
      payload: decodeJwt(jwt) as Record<string, unknown>,
    };
  } catch {
    throw new WalletError(failure);
  }
}
