import type { Context } from 'koa';
import { ProtocolError, invalidRequest } from '../rules/errors.js';
import { singleValued } from '../rules/authorizationParams.js';
import { BodyError, readFormBody, replayBody } from '../http/formBody.js';

const FORM = 'application/x-www-form-urlencoded';

/** A form body as read: its parameters, and the bytes the client sent. */
export interface ReadForm {
  params: Record<string, string>;
  body: Buffer;
  /** the parameters are exactly the body's: no empty value was dropped (so the body can be handed on as it is) */
  exact: boolean;
}

/**
 * Reads an `application/x-www-form-urlencoded` body (spec: Endpoints, "All request bodies are ...")
 * within `limit` bytes, refusing other content types and repeated parameters (RFC 6749 §3.1).
 */
export async function readFormWithBody(ctx: Context, limit: number): Promise<ReadForm> {
  if (!ctx.is(FORM)) {
    throw invalidRequest(`request body must be ${FORM}${ctx.get('content-type') ? `, not ${ctx.get('content-type').split(';')[0]}` : ''}`);
  }
  let body: Buffer;
  try {
    body = await readFormBody(ctx, limit);
  } catch (err) {
    if (err instanceof BodyError) throw invalidRequest(err.message);
    throw err;
  }
  const entries = [...new URLSearchParams(body.toString('utf8'))];
  const params = singleValued(entries);
  return { params, body, exact: Object.keys(params).length === entries.length };
}

export async function readForm(ctx: Context, limit: number): Promise<Record<string, string>> {
  return (await readFormWithBody(ctx, limit)).params;
}

/** Hands oidc-provider the parameters the edge decided on, as a form body it reads itself. */
export function forwardForm(ctx: Context, params: Record<string, string>): void {
  replayBody(ctx, Buffer.from(new URLSearchParams(params).toString()));
}

/** Hands oidc-provider the client's own body, unchanged (the edge read it, so the stream is spent). */
export function forwardBody(ctx: Context, body: Buffer): void {
  replayBody(ctx, body);
}

export function readQuery(ctx: Context): Record<string, string> {
  return singleValued(new URLSearchParams(ctx.querystring));
}

export function noStore(ctx: Context): void {
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Pragma', 'no-cache');
}

/** Direct error answer (D4): JSON `{error, error_description}`, never a stack trace. */
export function sendError(ctx: Context, err: ProtocolError, extraHeaders: Record<string, string> = {}): void {
  ctx.status = err.status;
  noStore(ctx);
  for (const [k, v] of Object.entries(extraHeaders)) ctx.set(k, v);
  ctx.body = err.toJSON();
}

/** Redirected error (RFC 6749 §4.1.2.1, D4): `error`, `error_description`, `state`, and `iss` (RFC 9207). */
export function redirectError(ctx: Context, redirectUri: string, err: ProtocolError, state: string | undefined, issuer: string): void {
  const url = new URL(redirectUri);
  url.searchParams.set('error', err.error);
  url.searchParams.set('error_description', err.description);
  if (state !== undefined) url.searchParams.set('state', state);
  url.searchParams.set('iss', issuer);
  noStore(ctx);
  ctx.status = 302;
  ctx.redirect(url.href);
}

export function asProtocolError(err: unknown): ProtocolError | undefined {
  return err instanceof ProtocolError ? err : undefined;
}
