import type { IncomingMessage } from 'node:http';
import type { Middleware } from 'koa';
import type Provider from 'oidc-provider';

/**
 * The provider and its pages under the issuer URL's path (next() for anything else), for use inside a Koa
 * app whose requests arrive with the full path (e.g. /demo/idv/...), without koa-mount.
 */
export function mountProvider(provider: Provider, issuerPath: string): Middleware {
  // Koa composes an app's middleware when its callback is made: made again when provider.use (the
  // documented pre- and post-middleware) added one since, so that it takes part
  let handle = provider.callback();
  let composed = provider.middleware.length;
  return async (ctx, next) => {
    const fullPath = ctx.originalUrl.split('?')[0];
    if (fullPath !== issuerPath && !fullPath.startsWith(`${issuerPath}/`)) return next();
    // oidc-provider's documented mounting for frameworks that hand it the raw request: the path under
    // the issuer as req.url, the full one as req.originalUrl (from which it builds its own URLs). It
    // answers on the raw response, with its own cookie keys and proxy setting.
    const req = ctx.req as IncomingMessage & { originalUrl?: string };
    const saved = { url: req.url, originalUrl: req.originalUrl };
    req.originalUrl = `${fullPath}${ctx.search}`;
    req.url = `${fullPath.slice(issuerPath.length) || '/'}${ctx.search}`;
    ctx.respond = false;
    if (provider.middleware.length !== composed) {
      handle = provider.callback();
      composed = provider.middleware.length;
    }
    try {
      await handle(req, ctx.res);
    } finally {
      req.url = saved.url;
      if (saved.originalUrl === undefined) delete req.originalUrl;
      else req.originalUrl = saved.originalUrl;
    }
  };
}
