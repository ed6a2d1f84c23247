import { createHash } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import { calculateJwkThumbprint, EmbeddedJWK, jwtVerify, type JWK } from 'jose';
import type { Store } from '../store/types.js';
import { ClientAborted, readBody } from '../http/form.js';
import { noStore } from '../http/respond.js';
import { ProtocolError } from '../rules/errors.js';
import {
  NotificationBook,
  NotificationError,
  parseNotificationRequest,
  tokenHashOf,
  type CredentialNotice,
} from './notification.js';

/** The access token as the notification endpoint needs it: oidc-provider's AccessToken model (its documented members). */
export interface FoundAccessToken {
  jti: string;
  /** RFC 9449 §6: the thumbprint of the key a DPoP-bound token is bound to */
  jkt?: string;
}

export interface NotificationEndpointOptions {
  /** the endpoint's path as the wallet issuer's middleware sees it, e.g. `/wallet/notification` */
  path: string;
  /** its URL, which a DPoP proof's `htu` must name */
  url: string;
  notifications: NotificationBook;
  store: Store;
  /** oidc-provider's `provider.AccessToken.find`: the token's model while it is valid, else undefined */
  findAccessToken(value: string): Promise<FoundAccessToken | undefined>;
  /** the wallet's first notification for a credential (the relying party's event, the audit line) */
  onNotification?: (notice: CredentialNotice) => Promise<void>;
  /** the DPoP algorithms the provider accepts (walletProvider.ts `enabledJWA.dPoPSigningAlgValues`) */
  dpopAlgorithms: string[];
}

/** A notification is a small JSON object: anything larger is refused unread. */
export const MAX_NOTIFICATION_BYTES = 4096;
/**
 * How far a DPoP proof's `iat` may be from now (RFC 9449 §4.3 step 11), seconds: as oidc-provider's own
 * window for proofs without a server nonce. A proof's `jti` is remembered twice as long, so a replay
 * within the window is refused.
 */
export const DPOP_IAT_WINDOW = 300;

const ACCESS_TOKEN = /^[A-Za-z0-9\-._~+/]+=*$/;
const sha256 = (v: string) => createHash('sha256').update(v).digest('base64url');
const dpopReplayKey = (jkt: string, jti: string) => `wallet:dpop-jti:${sha256(`${jkt} ${jti}`)}`;

/**
 * OpenID4VCI 1.0 §11, the Notification Endpoint: POST JSON `{notification_id, event, event_description?}`
 * with the access token the credential was fetched with, as at the credential endpoint: `Bearer`, or
 * `DPoP` with a DPoP proof for a DPoP-bound token (RFC 9449 §7). 204 when accepted; 400
 * `invalid_notification_id` for an id that is unknown, expired or another token's; 400
 * `invalid_notification_request` for a body that is not the spec's; 401 `invalid_token` (RFC 6750 §3.1)
 * or `invalid_dpop_proof` (RFC 9449 §7.1) for a missing or wrong token or proof. A repeated notification
 * for an id is answered 204 and changes nothing: the first one is reflected.
 */
export function notificationEndpoint(o: NotificationEndpointOptions): Middleware {
  return async function notification(ctx, next) {
    if (ctx.path !== o.path) return next();
    if (ctx.method !== 'POST') {
      ctx.status = 405;
      ctx.set('Allow', 'POST');
      noStore(ctx);
      ctx.body = { error: 'invalid_request', error_description: 'the notification endpoint takes POST only' };
      return;
    }
    try {
      await handle(ctx, o);
    } catch (err) {
      if (!(err instanceof NotificationError)) throw err;
      ctx.status = err.status;
      noStore(ctx);
      if (err.status === 401) ctx.set('WWW-Authenticate', challenge(ctx, err, o.dpopAlgorithms));
      ctx.body = { error: err.error, error_description: err.message };
    }
  };
}

async function handle(ctx: Context, o: NotificationEndpointOptions): Promise<void> {
  const accessToken = await authenticate(ctx, o);

  if (!ctx.is('application/json'))
    throw new NotificationError('invalid_notification_request', 'the notification request must be application/json');
  let body: unknown;
  try {
    body = JSON.parse((await readBody(ctx, MAX_NOTIFICATION_BYTES)).toString('utf8'));
  } catch (err) {
    if (err instanceof ClientAborted) throw err;
    if (err instanceof ProtocolError) throw new NotificationError('invalid_notification_request', err.description);
    throw new NotificationError('invalid_notification_request', 'the notification request body is not JSON');
  }
  const request = parseNotificationRequest(body);

  const record = await o.notifications.find(request.notificationId);
  // one answer for unknown, expired and another token's ids, so that a guess learns nothing
  if (!record || record.token !== tokenHashOf(accessToken.jti)) {
    throw new NotificationError(
      'invalid_notification_id',
      'notification_id is unknown, expired, or was not issued with this access token',
    );
  }
  if (await o.notifications.decide(request.notificationId, record, request.event)) {
    try {
      await o.onNotification?.({
        stepId: record.stepId,
        ...(record.clientId !== undefined ? { clientId: record.clientId } : {}),
        ...(record.external ? { external: true } : {}),
        credentialType: record.credentialType,
        serialNumber: record.serialNumber,
        event: request.event,
        ...(request.description ? { description: request.description } : {}),
      });
    } catch (err) {
      await o.notifications.undecide(request.notificationId).catch(() => undefined);
      throw err;
    }
  }
  ctx.status = 204;
  noStore(ctx);
}

/**
 * The access token as at a resource server: `Authorization: Bearer <token>` for a token not bound to a
 * key, `Authorization: DPoP <token>` with a `DPoP` proof for a DPoP-bound one (RFC 9449 §7.1). The token
 * is found with oidc-provider's model (`AccessToken.find`), which returns it only while it is valid.
 */
async function authenticate(ctx: Context, o: NotificationEndpointOptions): Promise<FoundAccessToken> {
  const authorization = ctx.get('authorization');
  if (!authorization)
    throw new NotificationError(
      'invalid_token',
      'the notification request carries no access token (Authorization: Bearer or DPoP)',
      401,
    );
  const [scheme, value, ...rest] = authorization.split(' ');
  const kind = scheme.toLowerCase();
  if ((kind !== 'bearer' && kind !== 'dpop') || !value || rest.length > 0 || !ACCESS_TOKEN.test(value)) {
    throw new NotificationError(
      'invalid_token',
      'the Authorization header must be "Bearer <access token>" or "DPoP <access token>"',
      401,
    );
  }
  const token = await o.findAccessToken(value);
  if (!token) throw new NotificationError('invalid_token', 'the access token is unknown or expired', 401);
  const proof = ctx.get('dpop');
  if (!token.jkt) {
    if (kind === 'dpop' || proof)
      throw new NotificationError(
        'invalid_token',
        'the access token is not DPoP-bound: send it as Bearer, without a DPoP proof',
        401,
      );
    return token;
  }
  if (kind !== 'dpop')
    throw new NotificationError(
      'invalid_token',
      'the access token is DPoP-bound: send it as "Authorization: DPoP" with a DPoP proof',
      401,
    );
  if (!proof)
    throw new NotificationError(
      'invalid_dpop_proof',
      'the DPoP header with a DPoP proof is required for a DPoP-bound access token',
      401,
    );
  await checkDpopProof(proof, {
    htm: 'POST',
    htu: o.url,
    accessToken: value,
    jkt: token.jkt,
    algorithms: o.dpopAlgorithms,
    store: o.store,
  });
  return token;
}

/**
 * RFC 9449 §4.3 and §7.1, with jose: a `dpop+jwt` signed by the key in its `jwk` header (an asymmetric
 * algorithm the provider accepts), for this method and URL (`htm`, `htu` without query and fragment),
 * made now (`iat` within DPOP_IAT_WINDOW), for this token (`ath`), by the key the token is bound to
 * (`jkt`), and not seen before (`jti`, remembered with the store's `setIfAbsent`). A proof by another key
 * means the token is not the sender's: `invalid_token`.
 */
export async function checkDpopProof(
  proof: string,
  o: { htm: string; htu: string; accessToken: string; jkt: string; algorithms: string[]; store: Store; now?: number },
): Promise<void> {
  const fail = (description: string) => new NotificationError('invalid_dpop_proof', description, 401);
  let payload: Record<string, unknown>;
  let jwk: JWK;
  try {
    const verified = await jwtVerify(proof, EmbeddedJWK, { typ: 'dpop+jwt', algorithms: o.algorithms });
    payload = verified.payload as Record<string, unknown>;
    jwk = verified.protectedHeader.jwk as JWK;
  } catch {
    throw fail(`the DPoP proof must be a dpop+jwt signed (${o.algorithms.join(', ')}) by the key in its jwk header`);
  }
  if (typeof payload.jti !== 'string' || payload.jti === '' || payload.jti.length > 256)
    throw fail('the DPoP proof jti must be a non-empty string');
  if (payload.htm !== o.htm) throw fail(`the DPoP proof htm must be ${o.htm}`);
  if (typeof payload.htu !== 'string' || withoutQuery(payload.htu) !== withoutQuery(o.htu))
    throw fail(`the DPoP proof htu must be ${o.htu}`);
  const now = o.now ?? Math.floor(Date.now() / 1000);
  if (typeof payload.iat !== 'number' || Math.abs(now - payload.iat) > DPOP_IAT_WINDOW)
    throw fail(`the DPoP proof iat must be within ${DPOP_IAT_WINDOW} seconds of now`);
  if (payload.ath !== sha256(o.accessToken)) throw fail('the DPoP proof ath must be the hash of the access token');
  if ((await calculateJwkThumbprint(jwk)) !== o.jkt)
    throw new NotificationError(
      'invalid_token',
      'the access token is bound to another key than the DPoP proof is signed with',
      401,
    );
  if (!(await o.store.setIfAbsent(dpopReplayKey(o.jkt, payload.jti), 1, 2 * DPOP_IAT_WINDOW)))
    throw fail('the DPoP proof was used before (jti)');
}

function withoutQuery(url: string): string | undefined {
  try {
    const u = new URL(url);
    u.search = '';
    u.hash = '';
    return u.href;
  } catch {
    return undefined;
  }
}

/** RFC 6750 §3, RFC 9449 §7.1: the scheme the request used (both when it named none), with the error. */
function challenge(ctx: Context, err: NotificationError, algorithms: string[]): string {
  const scheme = ctx.get('authorization').split(' ')[0].toLowerCase();
  const dpop = `DPoP error="${err.error}", algs="${algorithms.join(' ')}"`;
  const bearer = `Bearer error="${err.error}"`;
  if (err.error === 'invalid_dpop_proof' || scheme === 'dpop') return dpop;
  if (scheme === 'bearer') return bearer;
  return `Bearer, DPoP algs="${algorithms.join(' ')}"`;
}
