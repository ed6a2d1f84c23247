import { createHash, timingSafeEqual } from 'node:crypto';
import type { Context, Middleware } from 'koa';
import { router, type Route } from '../http/router.js';
import type { Logger } from '../log.js';
import type { StatusRegistry } from '../status/registry.js';
import { ACTIONS, changeStatus, reachesOurVerifierOnly, withoutStatusDescription, type Action } from './credentials.js';

const sha256 = (value: string) => createHash('sha256').update(value).digest();
/** The 409 of a revocation or suspension that reaches this service's verifier only (an mdoc without status). */
const MDOC_WITHOUT_STATUS = 'mdoc_without_status';

/**
 * Every route of the API, and the only source the router is built from: test/integration/admin-api-doc.test.ts
 * checks each against docs/admin-api.yaml, so a route cannot be added without being documented.
 */
export const ADMIN_ROUTES = [
  {
    method: 'POST',
    path: new RegExp(`^/admin/credentials/([^/]+)/(${Object.keys(ACTIONS).join('|')})$`),
    handler: 'change',
  },
  { method: 'GET', path: /^\/admin\/credentials\/([^/]+)$/, handler: 'show' },
] as const satisfies readonly (Pick<Route, 'method' | 'path'> & { handler: string })[];

/** What the API's handlers work with. */
interface AdminDeps {
  /** the SHA-256 of admin.token */
  expected: Buffer;
  registry: StatusRegistry;
  logger: Logger;
}

type Handler = (ctx: Context, deps: AdminDeps, serialNumber: string, action?: string) => Promise<void>;

/**
 * The operator API (D18), only when `admin.token` is configured:
 * `POST /admin/credentials/{SerialNumber}/revoke|suspend|reinstate` and `GET /admin/credentials/{SerialNumber}`,
 * each with `Authorization: Bearer <admin.token>`. Answers JSON: `{serialNumber, status}`; 404 for an unknown
 * (or expired) SerialNumber; 409 for a change to a revoked credential (revocation is final), and for a
 * revocation or suspension of an mdoc, which only this service's verifier applies (it carries no status).
 */
export function adminRoutes(token: string, registry: StatusRegistry, logger: Logger): Middleware {
  const deps: AdminDeps = { expected: sha256(token), registry, logger };
  const handlers = { change, show } satisfies Record<(typeof ADMIN_ROUTES)[number]['handler'], Handler>;
  return router(
    ADMIN_ROUTES.map(({ method, path, handler }) => ({ method, path, handle: guarded(deps, handlers[handler]) })),
  );
}

// hashes of equal length: the comparison takes the same time whatever was sent (RFC 6750 bearer, constant time)
function authorised(ctx: Context, expected: Buffer): boolean {
  const header = ctx.get('authorization');
  const match = /^Bearer ([\x21-\x7E]+)$/i.exec(header);
  return match !== null && timingSafeEqual(sha256(match[1]), expected);
}

function refuse(
  ctx: Context,
  status: number,
  error: string,
  description: string,
  extra: Record<string, unknown> = {},
): void {
  ctx.status = status;
  ctx.body = { error, error_description: description, ...extra };
}

/**
 * The audit line of every request of the API (D17): the action, the SerialNumber (once the caller is
 * authorised), the outcome and when; never the token. A status change also writes its own line (changeStatus).
 */
function audit(ctx: Context, logger: Logger, action: string, serialNumber: string | undefined, outcome: string): void {
  logger.info(
    {
      audit: 'admin_action',
      action,
      ...(serialNumber !== undefined ? { serialNumber } : {}),
      outcome,
      ...(outcome !== 'error' ? { status: ctx.status } : {}),
      at: new Date().toISOString(),
    },
    'admin action',
  );
}

const OUTCOMES: Record<string, string> = {
  200: 'done',
  404: 'unknown',
  409: 'final',
  [MDOC_WITHOUT_STATUS]: 'without_status',
};
const outcomeOf = (ctx: Context) =>
  OUTCOMES[
    (ctx.body as { error?: string } | undefined)?.error === MDOC_WITHOUT_STATUS ? MDOC_WITHOUT_STATUS : ctx.status
  ];

/** A route's handler behind the bearer check and the SerialNumber's decoding, audited whatever the outcome. */
function guarded(deps: AdminDeps, handle: Handler) {
  return async (ctx: Context, [serial, action]: string[]) => {
    ctx.set('Cache-Control', 'no-store');
    const named = action ?? 'status';
    if (!authorised(ctx, deps.expected)) {
      ctx.set('WWW-Authenticate', ctx.get('authorization') ? 'Bearer error="invalid_token"' : 'Bearer');
      refuse(ctx, 401, 'invalid_token', 'Authorization: a Bearer token equal to admin.token is required');
      return audit(ctx, deps.logger, named, undefined, 'unauthorized');
    }
    let serialNumber: string;
    try {
      serialNumber = decodeURIComponent(serial);
    } catch {
      refuse(ctx, 400, 'invalid_request', 'SerialNumber: not a valid path segment');
      return audit(ctx, deps.logger, named, undefined, 'invalid');
    }
    try {
      await handle(ctx, deps, serialNumber, action);
    } catch (err) {
      audit(ctx, deps.logger, named, serialNumber, 'error');
      throw err;
    }
    audit(ctx, deps.logger, named, serialNumber, outcomeOf(ctx) ?? 'error');
  };
}

/** `POST /admin/credentials/{SerialNumber}/revoke|suspend|reinstate` */
async function change(ctx: Context, deps: AdminDeps, serialNumber: string, action?: string): Promise<void> {
  const outcome = await changeStatus(deps.registry, deps.logger, serialNumber, action as Action, 'api');
  if (outcome.kind === 'unknown')
    return refuse(
      ctx,
      404,
      'not_found',
      `SerialNumber: no credential ${serialNumber} is known (never issued here, or expired)`,
    );
  if (outcome.kind === 'final')
    return refuse(ctx, 409, 'conflict', `SerialNumber: credential ${serialNumber} is revoked, which is final`);
  const done = { serialNumber, status: outcome.status, changed: outcome.changed, format: outcome.format };
  // recorded (our verifier refuses the mdoc from now on), but other verifiers cannot see it: not what was asked
  if (reachesOurVerifierOnly(outcome))
    return refuse(ctx, 409, MDOC_WITHOUT_STATUS, withoutStatusDescription(serialNumber, outcome), {
      ...done,
      expiresAt: new Date(outcome.exp * 1000).toISOString(),
    });
  ctx.body = done;
}

/** `GET /admin/credentials/{SerialNumber}` */
async function show(ctx: Context, deps: AdminDeps, serialNumber: string): Promise<void> {
  const found = await deps.registry.status(serialNumber);
  if (!found)
    return refuse(
      ctx,
      404,
      'not_found',
      `SerialNumber: no credential ${serialNumber} is known (never issued here, or expired)`,
    );
  ctx.body = {
    serialNumber,
    status: found.status,
    expiresAt: new Date(found.exp * 1000).toISOString(),
    format: found.format,
  };
}
