import type { Middleware } from 'koa';
import type { JWK } from 'jose';
import type { Config } from '../config/schema.js';
import type { Store } from '../store/types.js';
import { demoDeps, type DemoRoutesOptions } from './deps.js';
import { home } from './pages/home.js';
import { start } from './pages/start.js';
import { callback } from './pages/callback.js';
import { waiting } from './pages/external.js';
import { webhook } from './pages/webhook.js';
import { changeCredentialStatus } from './pages/credentialStatus.js';

export type { DemoRoutesOptions } from './deps.js';

/**
 * A relying party built in, for trying the service in a browser (config `demo: true`, never in
 * production): it signs an id_token_hint with the demo client's secret, pushes the request, sends the
 * browser to authorise, and on the way back redeems the code and shows the verified ID token. It speaks
 * only HTTP to the service, like any relying party.
 *
 * With an External interface (D13) the browser does not come back: the demo's own webhook receiver
 * (POST /demo/webhook) verifies the signed event, continues at authorise with context_id, redeems the
 * code, and keeps the result in the store, where the demo's waiting page (/demo/external) finds it.
 *
 * Each page and endpoint is a handler of its own in `./pages/`, taking the dependencies it uses; this
 * mounts them.
 *
 * `idTokenJwks`: the ID-token keys published now (they change with a rotation, D20), as the JWKS endpoint serves them
 */
export function createDemoRoutes(
  config: Config,
  store: Store,
  idTokenJwks: () => { keys: JWK[] },
  opts: DemoRoutesOptions = {},
): Middleware {
  const d = demoDeps(config, store, idTokenJwks, opts);
  const { client, webhookSecrets } = d;
  // the External Client flow's receiver and waiting page exist only when the client's events come here
  const external = client && webhookSecrets ? { ...d, client, webhookSecrets } : undefined;
  return async function demo(ctx, next) {
    if (ctx.path === '/demo' && ctx.method === 'GET') return home(ctx, d);
    if (ctx.path === '/demo/start' && ctx.method === 'POST') return start(ctx, d);
    if (ctx.path === '/demo/callback' && ctx.method === 'GET') return callback(ctx, d);
    if (ctx.path === '/demo/external' && ctx.method === 'GET' && external) return waiting(ctx, external);
    if (ctx.path === '/demo/webhook' && ctx.method === 'POST' && external) return webhook(ctx, external);
    if (ctx.path === '/demo/credential-status' && ctx.method === 'POST' && d.changeStatus)
      return changeCredentialStatus(ctx, d);
    if (ctx.path === '/' && ctx.method === 'GET') return ctx.redirect(`${config.baseUrl}/demo`);
    return next();
  };
}
