import type { Context } from 'koa';
import type { ProtocolError } from '../rules/errors.js';
import { safeErrorDescription } from './errorDescription.js';

/** RFC 6749 §5.1: token responses, and every answer carrying an error or a secret, are not cached. */
export function noStore(ctx: Context): void {
  ctx.set('Cache-Control', 'no-store');
  ctx.set('Pragma', 'no-cache');
}

/** The one direct error answer (D4): JSON `{error, error_description}`, uncached, never a stack trace. */
export function sendError(ctx: Context, err: ProtocolError, headers: Record<string, string> = {}): void {
  ctx.status = err.status;
  noStore(ctx);
  ctx.set(headers);
  ctx.body = { error: err.error, error_description: safeErrorDescription(err.description) };
}

/** The redirect URI with an error (RFC 6749 §4.1.2.1, D4): `error`, `error_description`, `state`, and `iss` (RFC 9207). */
export function errorRedirectUrl(
  redirectUri: string,
  err: ProtocolError,
  state: string | undefined,
  issuer: string,
): string {
  const url = new URL(redirectUri);
  url.searchParams.set('error', err.error);
  url.searchParams.set('error_description', safeErrorDescription(err.description));
  if (state !== undefined) url.searchParams.set('state', state);
  url.searchParams.set('iss', issuer);
  return url.href;
}

/** Redirected error: 302 to `errorRedirectUrl`, uncached. */
export function redirectError(
  ctx: Context,
  redirectUri: string,
  err: ProtocolError,
  state: string | undefined,
  issuer: string,
): void {
  noStore(ctx);
  ctx.status = 302;
  ctx.redirect(errorRedirectUrl(redirectUri, err, state, issuer));
}

/** The answer for a path the service does not serve (the last middleware, and other spellings of its paths). */
export function notFound(ctx: Context): void {
  ctx.status = 404;
  ctx.body = { error: 'not_found', error_description: `no endpoint at ${ctx.method} ${ctx.path}` };
}
