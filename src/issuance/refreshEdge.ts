import type { Context } from 'koa';
import { sendError } from '../http/respond.js';
import type { RateLimits } from '../http/rateLimits.js';
import { reissueRefusal } from '../rules/batch.js';
import { ProtocolError } from '../rules/errors.js';
import type { ReissueBook } from './reissues.js';

/** What the edge needs to answer a refresh (re-issuance, HAIP 1.0 §4). */
export interface ReissueEdgeDeps {
  book: ReissueBook;
  /** whether the type's token response carries a refresh token */
  reissuable(credentialType: string): boolean;
  /** the grant a refresh token names, when the provider knows the token (oidc-provider's `RefreshToken.find`) */
  grantOf(refreshToken: string): Promise<string | undefined>;
  /** the SerialNumber's status (D18), undefined when unknown */
  statusOf(serialNumber: string): Promise<'valid' | 'revoked' | 'suspended' | undefined>;
}

/** Where the edge leaves until when a refresh token it lets the provider issue lives (`reissueUntil`). */
const REISSUE_STATE = 'walletReissueUntil';

/** Until when (epoch seconds) the refresh token of the request being answered lives; undefined: it gets none. */
export function reissueUntil(ctx: unknown): number | undefined {
  const until = (ctx as { state?: Record<string, unknown> } | undefined)?.state?.[REISSUE_STATE];
  return typeof until === 'number' ? until : undefined;
}

/** Leaves on the request until when the refresh token the provider issues for it lives. */
export function refreshTokenUntil(ctx: Context, until: number): void {
  ctx.state[REISSUE_STATE] = until;
}

const refuse = (ctx: Context, description: string) => sendError(ctx, new ProtocolError('invalid_grant', description));

/**
 * A refresh of a re-issuable credential (HAIP 1.0 §4, ARF ISSU_42): refused here, before the provider rotates
 * the token, once the credential has expired, its SerialNumber is revoked or suspended, or its daily limit of
 * refreshes is used (429); one use of a refresh token at a time (`claimRefresh`). The rotated refresh token
 * lives until the credential expires. What the provider refuses (an unknown, used, expired or foreign token, a
 * DPoP proof of another key) it answers itself, and a used token presented again revokes the grant.
 */
export async function refresh(
  ctx: Context,
  next: () => Promise<void>,
  reissue: ReissueEdgeDeps & { rateLimits?: RateLimits; walletClientId: string },
  params: Record<string, string>,
): Promise<void> {
  const token = params.refresh_token;
  const grantId = token ? await reissue.grantOf(token) : undefined;
  const record = grantId ? await reissue.book.find(grantId) : undefined;
  await reissue.rateLimits?.consume('walletToken', { client: record?.clientId, address: ctx.ip });
  if (!hasClientAuthentication(ctx, params)) params.client_id = reissue.walletClientId;
  if (!token || !grantId) return next(); // the provider answers: missing, or not found
  if (!record) return refuse(ctx, 'refresh_token: no credential was issued with this grant');
  const refusal = reissueRefusal(record.credentialExpiresAt, await reissue.statusOf(record.serialNumber));
  if (refusal) return refuse(ctx, refusal);
  if (!(await reissue.book.claimRefresh(grantId, token)))
    return refuse(ctx, 'refresh_token is being or was just used by a concurrent request');
  if (!(await reissue.book.withinDailyLimit(record.serialNumber))) {
    await reissue.book.releaseRefresh(grantId, token);
    ctx.set('Retry-After', '3600');
    return sendError(
      ctx,
      new ProtocolError(
        'temporarily_unavailable',
        `refresh_token: at most ${reissue.book.perDay} re-issuances of one credential per day`,
        429,
      ),
    );
  }
  refreshTokenUntil(ctx, record.credentialExpiresAt);
  try {
    await next();
  } catch (err) {
    await reissue.book.releaseRefresh(grantId, token);
    throw err;
  }
  if (ctx.status !== 200) return reissue.book.releaseRefresh(grantId, token);
  // the wallet has its token: the bookkeeping must not fail the answer
  await Promise.all([reissue.book.refreshed(grantId, token), reissue.book.counted(record.serialNumber)]).catch(
    () => undefined,
  );
}

/** RFC 6749 §2.3: any client authentication the provider would look at. */
export function hasClientAuthentication(ctx: Context, params: Record<string, string>): boolean {
  return (
    params.client_id !== undefined ||
    params.client_assertion !== undefined ||
    ctx.get('authorization') !== '' ||
    ctx.get('oauth-client-attestation') !== ''
  );
}
