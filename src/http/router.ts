import type { Context, Middleware } from 'koa';
import { ProtocolError } from '../rules/errors.js';
import { sendError } from './respond.js';

export type Method = 'GET' | 'POST' | 'OPTIONS';

export interface Route {
  method: Method;
  /** an exact path, or a pattern whose groups are handed to the handler */
  path: string | RegExp;
  /** false: a GET route that HEAD must not reach (it uses something up) */
  head?: false;
  handle(ctx: Context, params: string[]): Promise<void> | void;
}

/**
 * The one small router of the service: exact paths and patterns, GET answering HEAD too (unless the
 * route says `head: false`), and one 405
 * behaviour (`Allow` and a JSON error) for a known path asked with another method. Paths it does not
 * know pass on to the next middleware. A ProtocolError thrown by a handler is answered as JSON (D4).
 */
export function router(routes: readonly Route[]): Middleware {
  // routes of one path (or one pattern) together: the methods it answers
  const exact = new Map<string, Route[]>();
  const patterns = new Map<string, { pattern: RegExp; candidates: Route[] }>();
  for (const route of routes) {
    if (typeof route.path === 'string') exact.set(route.path, [...(exact.get(route.path) ?? []), route]);
    else {
      const group = patterns.get(String(route.path)) ?? { pattern: route.path, candidates: [] };
      group.candidates.push(route);
      patterns.set(String(route.path), group);
    }
  }

  function match(path: string): { candidates: Route[]; params: string[] } | undefined {
    const found = exact.get(path);
    if (found) return { candidates: found, params: [] };
    for (const { pattern, candidates } of patterns.values()) {
      const m = pattern.exec(path);
      if (m) return { candidates, params: m.slice(1) };
    }
    return undefined;
  }

  return function routes(ctx, next) {
    const found = match(ctx.path);
    if (!found) return next();
    const route = found.candidates.find(
      (r) => r.method === ctx.method || (ctx.method === 'HEAD' && r.method === 'GET' && r.head !== false),
    );
    if (!route) {
      const allowed = found.candidates.map((r) => r.method).filter((m) => m !== 'OPTIONS');
      sendError(
        ctx,
        new ProtocolError('invalid_request', `${ctx.method} is not allowed here; use ${allowed.join(' or ')}`, 405),
        { Allow: allowed.join(', ') },
      );
      return Promise.resolve();
    }
    return run(ctx, route, found.params);
  };
}

async function run(ctx: Context, route: Route, params: string[]): Promise<void> {
  try {
    await route.handle(ctx, params);
  } catch (err) {
    if (err instanceof ProtocolError) return sendError(ctx, err);
    throw err;
  }
}
