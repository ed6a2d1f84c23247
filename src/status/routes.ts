import type { Context, Middleware } from 'koa';
import { router } from '../http/router.js';
import type { StatusListService } from './listToken.js';

/** `GET /<path>/status/<list id>`: a Status List Token, 404 for a list that does not exist (or no longer does). */
export function statusListRoute(path: string, lists: StatusListService): Middleware {
  async function serve(ctx: Context, listId: string): Promise<void> {
    // verifiers in browsers may fetch it too (draft-ietf-oauth-status-list §11.5: no credentials involved)
    ctx.set('Access-Control-Allow-Origin', '*');
    if (await lists.serve(ctx, listId)) return;
    ctx.status = 404;
    ctx.set('Cache-Control', 'no-store');
    ctx.body = { error: 'not_found', error_description: 'no status list with this identifier' };
  }
  return router([
    { method: 'GET', path: new RegExp(`^/${path}/status/([^/]*)$`), handle: (ctx, [listId]) => serve(ctx, listId) },
  ]);
}
