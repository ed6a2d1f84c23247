import { randomUUID } from 'node:crypto';
import { BlockList, isIP } from 'node:net';
import Koa, { type Context } from 'koa';
import mount from 'koa-mount';
import type { Config } from '../config/schema.js';
import type { CookieKeys } from '../http/cookieKeys.js';
import type { Metrics } from '../metrics/metrics.js';
import { tracingOn } from '../telemetry/tracing.js';
import { requestSpans } from '../telemetry/spans.js';
import { routeTemplates } from '../telemetry/routes.js';
import { StoreUnavailableError } from '../store/redis.js';
import { renderMessage } from '../interaction/views/message.js';
import { pageTexts } from '../ui/ui.js';
import { loggablePath, type Logger } from '../log.js';
import { ClientAborted } from '../http/form.js';
import { RateLimited } from '../http/rateLimits.js';
import { sendPage } from '../http/page.js';
import { sendError } from '../http/respond.js';
import { ProtocolError } from '../rules/errors.js';

/**
 * The outermost edge, once: nothing the service publishes or builds comes from request headers.
 * - `Forwarded` and every `X-Forwarded-*` header are dropped, except `X-Forwarded-For` from a connection
 *   whose address is in `trustedProxies` (config; none by default). The client address (`ctx.ip`, in the
 *   request log) is the rightmost `X-Forwarded-For` entry that is not itself a trusted proxy, or the
 *   connection's address.
 * - `Host`, `X-Forwarded-Host` and `X-Forwarded-Proto` are set from `baseUrl`. The apps keep `proxy` on,
 *   so Koa and oidc-provider (which builds its URLs from the request's origin, e.g. the wallet issuer's
 *   metadata) see baseUrl's host and scheme, and cookies are `Secure` when baseUrl is `https://`.
 */
export function trustedForwarding(baseUrl: string, trustedProxies: readonly string[]): Koa.Middleware {
  const base = new URL(baseUrl);
  const proto = base.protocol.slice(0, -1);
  const trusted = new BlockList();
  for (const entry of trustedProxies) {
    const [address, prefix] = entry.split('/');
    const family = isIP(address) === 6 ? 'ipv6' : 'ipv4';
    if (prefix === undefined) trusted.addAddress(address, family);
    else trusted.addSubnet(address, Number(prefix), family);
  }
  // BlockList matches IPv4-mapped IPv6 addresses (::ffff:10.0.0.1) against IPv4 rules and back
  const isTrusted = (address: string | undefined): boolean => {
    if (trustedProxies.length === 0) return false; // the default: no proxy is trusted
    const family = address ? isIP(address) : 0;
    return family !== 0 && trusted.check(address!, family === 6 ? 'ipv6' : 'ipv4');
  };
  return function forwarding(ctx, next) {
    const headers = ctx.req.headers;
    const peer = ctx.req.socket.remoteAddress;
    const forwardedFor = isTrusted(peer) ? headers['x-forwarded-for'] : undefined;
    for (const name in headers) {
      if (name === 'forwarded' || name.startsWith('x-forwarded-')) delete headers[name];
    }
    let client = peer ?? '';
    if (forwardedFor !== undefined) {
      headers['x-forwarded-for'] = forwardedFor;
      // each entry was appended by the hop to its right: walk left while that hop is a trusted proxy
      const hops = String(forwardedFor)
        .split(',')
        .map((h) => h.trim());
      for (let i = hops.length - 1; i >= 0; i--) {
        if (!isIP(hops[i])) break;
        client = hops[i];
        if (!isTrusted(client)) break;
      }
    }
    ctx.request.ip = client;
    headers.host = base.host;
    headers['x-forwarded-host'] = base.host;
    headers['x-forwarded-proto'] = proto;
    return next();
  };
}

/** Headers every answer carries. */
export function securityHeaders(ctx: Context, next: Koa.Next): Promise<void> {
  ctx.set('X-Content-Type-Options', 'nosniff');
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('X-Frame-Options', 'DENY');
  return next();
}

/**
 * The last line: a client that went away before its body ended is an aborted request (logged at info by
 * the request log, never a 500); a ProtocolError is answered with its own status and JSON (D4); anything
 * unexpected becomes a 500 with a generic body and is logged with a reference (never the request's
 * secrets); Node's own HTTP errors (bad JSON, oversized) keep their status. Pages carry the CSP of every
 * page (src/http/page.ts).
 */
export function errorBoundary(logger: Logger) {
  return async (ctx: Context, next: Koa.Next) => {
    try {
      await next();
    } catch (err) {
      const e = err as { status?: number; expose?: boolean; message?: string };
      if (err instanceof ClientAborted) {
        // nobody is left to read an answer; should one still go out, it is a 400
        ctx.state.clientAborted = true;
        sendError(ctx, new ProtocolError('invalid_request', err.message));
        return;
      }
      if (err instanceof StoreUnavailableError) {
        if (ctx.accepts('json', 'html') === 'html') {
          const { texts, brand } = pageTexts(ctx);
          sendPage(ctx, 503, (nonce) =>
            renderMessage({
              nonce,
              texts,
              brand,
              title: texts.t('message.unavailableTitle'),
              message: texts.t('message.unavailable'),
              status: 503,
              saysWhatToDo: true,
            }),
          );
        } else {
          ctx.status = 503;
          ctx.set('Cache-Control', 'no-store');
          ctx.body = { error: 'temporarily_unavailable', error_description: err.error_description };
        }
        ctx.set('Retry-After', '2');
        return;
      }
      if (err instanceof RateLimited) {
        // docs/decisions.md, "Rate limits": a registered code that clients retry, and when
        sendError(ctx, new ProtocolError('temporarily_unavailable', err.message, 429), {
          'Retry-After': String(err.retryAfter),
        });
        return;
      }
      if (err instanceof ProtocolError) {
        sendError(ctx, err);
        return;
      }
      if (e.status && e.status < 500 && e.expose) {
        ctx.status = e.status;
        ctx.body = { error: 'invalid_request', error_description: e.message };
        return;
      }
      const ref = randomUUID();
      logger.error(
        {
          ref,
          path: loggablePath(ctx.path),
          err: { name: (err as Error).name, message: (err as Error).message, stack: (err as Error).stack },
        },
        'unexpected error',
      );
      ctx.status = 500;
      ctx.set('Cache-Control', 'no-store');
      if (ctx.accepts('json', 'html') === 'html') {
        const { texts, brand } = pageTexts(ctx);
        sendPage(ctx, 500, (nonce) =>
          renderMessage({
            nonce,
            texts,
            brand,
            title: texts.t('message.errorTitle'),
            message: texts.t('message.error', { ref }),
            status: 500,
            saysWhatToDo: true,
          }),
        );
      } else {
        ctx.body = { error: 'server_error', error_description: `unexpected error, reference ${ref}` };
      }
    }
  };
}

const PROGRESS_POLL = /^\/interaction\/[^/]+\/[^/]+\/status$/;

export function requestLog(logger: Logger) {
  return async (ctx: Context, next: Koa.Next) => {
    if (!logger.isLevelEnabled('error')) return next(); // a silent logger: nothing to time or describe
    const start = process.hrtime.bigint();
    try {
      await next();
    } finally {
      const ms = Number(process.hrtime.bigint() - start) / 1e6;
      // a client that went away before its body ended: an aborted request, at info, never an error
      const aborted = ctx.state.clientAborted === true;
      // the prompt asks for its progress every few seconds per holder: answered polls only at debug
      const level =
        ctx.status >= 500 && !aborted ? 'error' : ctx.status < 400 && PROGRESS_POLL.test(ctx.path) ? 'debug' : 'info';
      // ip: the connection's address, or X-Forwarded-For's client from a trusted proxy (trustedForwarding)
      const line = {
        method: ctx.method,
        path: loggablePath(ctx.path),
        status: ctx.status,
        ms: Math.round(ms * 10) / 10,
        ip: ctx.ip,
        error: (ctx.body as { error?: string } | undefined)?.error,
      };
      logger[level](aborted ? { ...line, aborted: true } : line, aborted ? 'request aborted' : 'request');
    }
  };
}

/**
 * The outermost app: the edge every request passes first (forwarding headers, a span, security headers,
 * the request log, metrics, the error boundary), then the service's own app at the base URL's path.
 */
export function outerApp(
  d: {
    config: Config;
    logger: Logger;
    metrics: Metrics;
    cookieKeys: CookieKeys;
    issuerPaths: string[];
    basePath: string;
  },
  inner: Koa,
): Koa {
  const { config, logger, metrics } = d;
  const app = new Koa();
  app.keys = d.cookieKeys;
  // on, so that Koa and oidc-provider read host and scheme from the X-Forwarded-* headers trustedForwarding
  // sets from baseUrl (and nothing a client sent)
  app.proxy = true;
  app.silent = true;
  app.use(trustedForwarding(config.baseUrl, config.trustedProxies));
  // a span per request, named by its route template (src/telemetry/spans.ts), only with tracing on
  if (tracingOn()) app.use(requestSpans(routeTemplates(d.issuerPaths, d.basePath)));
  app.use(securityHeaders);
  app.use(requestLog(logger));
  // inside the request log, outside the error boundary: it sees the status every answer goes out with
  if (metrics.enabled) app.use(metrics.middleware);
  app.use(errorBoundary(logger));
  app.use(d.basePath ? mount(d.basePath, inner) : mount(inner));
  return app;
}
