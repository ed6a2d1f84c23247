import type { Context } from 'koa';
import { ProtocolError, invalidRequest } from '../rules/errors.js';
import { singleValued } from '../rules/authorizationParams.js';

const FORM = 'application/x-www-form-urlencoded';

/**
 * Reads an `application/x-www-form-urlencoded` body (spec: Endpoints, "All request bodies are ...")
 * within `limit` bytes, refusing other content types and repeated parameters (RFC 6749 §3.1).
 */
export async function readForm(ctx: Context, limit: number): Promise<Record<string, string>> {
  if (!ctx.is(FORM)) {
    throw invalidRequest(`request body must be ${FORM}${ctx.get('content-type') ? `, not ${ctx.get('content-type').split(';')[0]}` : ''}`);
  }
  const declared = ctx.request.length;
  if (declared !== undefined && declared > limit) throw invalidRequest(`request body exceeds ${limit} bytes`);
  const chunks: Buffer[] = [];
  let received = 0;
  for await (const chunk of ctx.req) {
    received += (chunk as Buffer).length;
    if (received > limit) {
      ctx.req.resume(); // drain without keeping it, then answer
      throw invalidRequest(`request body exceeds ${limit} bytes`);
    }
    chunks.push(chunk as Buffer);
  }
  const text = Buffer.concat(chunks, received).toString('utf8');
  return singleValued(new URLSearchParams(text));
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
