import { createHash } from 'node:crypto';
import type Provider from 'oidc-provider';
import type { CredentialType } from '../config/schema.js';
import type { StatusRegistry } from '../status/registry.js';
import type { Store } from '../store/types.js';
import type { ReissueEdgeDeps } from './tokenEdge.js';

/**
 * What a re-issuance needs (HAIP 1.0 §4, ARF ISSU_42): the credential as it was first issued. Kept from the
 * first issuance of a type with `reissue` until the credential expires, under the wallet's grant, which its
 * refresh tokens and their access tokens name. Never logged (D17): it carries the attributes.
 */
export interface ReissueRecord {
  serialNumber: string;
  credentialType: string;
  /** the configuration the wallet took first: a refresh gives the same (one SerialNumber, one format) */
  configurationId: string;
  attributes: Record<string, unknown>;
  /** epoch seconds: the credential's expiry, which no re-issued credential passes */
  credentialExpiresAt: number;
  /** the relying party whose flow issued it (rate limits, audit) */
  clientId?: string;
}

/** How long after the winner another use of one refresh token counts as a race (refused without revoking). */
export const REFRESH_RACE_SECONDS = 5;
const DAY = 86_400;
const now = () => Math.floor(Date.now() / 1000);
/** Kept a minute past the credential's expiry, as its status records are (src/status/registry.ts). */
const ttlUntil = (exp: number) => Math.max(1, exp - now()) + 60;
const hashOf = (value: string) => createHash('sha256').update(value).digest('base64url');

// one grant's keys share its hash tag (one Redis Cluster slot)
const recordKey = (grantId: string) => `wallet:reissue:{${grantId}}`;
const tokenKey = (grantId: string, jti: string) => `wallet:reissue:{${grantId}}:token:${jti}`;
const refreshKey = (grantId: string, refreshToken: string) =>
  `wallet:reissue:{${grantId}}:refresh:${hashOf(refreshToken)}`;
const countKey = (serialNumber: string) => `wallet:reissue:count:${hashOf(serialNumber)}`;

/** The credentials that may be re-issued, and what bounds a re-issuance: one batch per access token, a daily limit. */
export class ReissueBook {
  constructor(
    private readonly store: Store,
    /** the refreshes one credential's wallet may make per day (config `issuance.reissuesPerDay`) */
    readonly perDay: number,
  ) {}

  async remember(grantId: string, record: ReissueRecord): Promise<void> {
    await this.store.set(recordKey(grantId), record, ttlUntil(record.credentialExpiresAt));
  }

  find(grantId: string): Promise<ReissueRecord | undefined> {
    return this.store.get<ReissueRecord>(recordKey(grantId));
  }

  async forget(grantId: string): Promise<void> {
    await this.store.delete(recordKey(grantId));
  }

  /** One batch per access token (`jti`): true for the one request that may issue with it. */
  claimToken(grantId: string, jti: string, ttlSeconds: number): Promise<boolean> {
    return this.store.setIfAbsent(tokenKey(grantId, jti), 1, Math.max(1, ttlSeconds));
  }

  async releaseToken(grantId: string, jti: string): Promise<void> {
    await this.store.delete(tokenKey(grantId, jti));
  }

  /**
   * One use of a refresh token at a time (as a pre-authorized code's redemption, D14): the provider reads a
   * refresh token, then consumes it, so two requests sent together would both rotate it. The claim outlasts a
   * win by `REFRESH_RACE_SECONDS`; a later use reaches the provider, which refuses it and revokes the grant.
   */
  claimRefresh(grantId: string, refreshToken: string): Promise<boolean> {
    return this.store.setIfAbsent(refreshKey(grantId, refreshToken), 'refreshing', 60);
  }

  async refreshed(grantId: string, refreshToken: string): Promise<void> {
    await this.store.set(refreshKey(grantId, refreshToken), 'refreshed', REFRESH_RACE_SECONDS);
  }

  async releaseRefresh(grantId: string, refreshToken: string): Promise<void> {
    await this.store.delete(refreshKey(grantId, refreshToken));
  }

  /** Whether the credential's wallet may refresh again today (a refresh that bought a token counts: `counted`). */
  async withinDailyLimit(serialNumber: string): Promise<boolean> {
    return (await this.store.attempt(countKey(serialNumber), false, this.perDay, DAY)).allowed;
  }

  /** A refresh bought a token: it counts against the credential's daily limit (a day from its first refresh). */
  async counted(serialNumber: string): Promise<void> {
    await this.store.attempt(countKey(serialNumber), true, this.perDay, DAY);
  }
}

/** What the token edge needs to answer a refresh: the credential behind a refresh token, and its status. */
export function reissueEdgeDeps(
  book: ReissueBook,
  types: Map<string, CredentialType>,
  statuses: StatusRegistry,
  provider: Provider,
): ReissueEdgeDeps {
  return {
    book,
    reissuable: (name) => types.get(name)?.reissue === true,
    grantOf: async (refreshToken) => (await provider.RefreshToken.find(refreshToken))?.grantId,
    statusOf: async (serialNumber) => (await statuses.status(serialNumber))?.status,
  };
}
