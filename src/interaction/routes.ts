import type { Context, Middleware } from 'koa';
import { router, type Route } from '../http/router.js';
import { CALLBACK_PATH } from '../identity/otherProvider.js';
import type { InteractionDeps, Version } from './deps.js';
import { showPrompt } from './actions/prompt.js';
import { status } from './actions/status.js';
import { continueFlow } from './actions/continue.js';
import { returnFromWallet } from './actions/return.js';
import { freshRequest } from './actions/fresh.js';
import { toOtherProvider } from './actions/identity.js';
import { otherProviderCallback } from './actions/identityCallback.js';
import { dcApiAnswer, dcApiRequests } from './actions/dcApi.js';

export type { InteractionDeps, PromptFlowEnds } from './deps.js';

/** A handler of one of the prompt's paths, `/interaction/<version>/<uid>[/step]`. */
type PromptAction = (d: InteractionDeps, ctx: Context, version: Version, uid: string) => Promise<void>;

const UID = '([A-Za-z0-9_-]{1,64})';
const promptPath = (step: string) => new RegExp(`^/interaction/(v1|v2)/${UID}${step}$`);

/**
 * The prompt (D10) and its steps, one handler each (src/interaction/actions/): the page that starts and
 * shows the wallet step, its progress, and its end. When the wallet step is over, the holder's browser
 * (the only one holding the interaction's cookie) finishes the interaction with oidc-provider's
 * `interactionResult` and goes back to the provider, which redirects to the client with a code, or with
 * the error.
 */
export function createInteractionRoutes(d: InteractionDeps): Middleware {
  const mount = (step: string, action: PromptAction): Route => ({
    method: 'GET',
    path: promptPath(step),
    handle: (ctx, [v, id]) => action(d, ctx, v as Version, id),
  });
  const other = d.identity.other;
  const otherRoutes: Route[] = other
    ? [
        mount('/identity', toOtherProvider),
        {
          method: 'GET',
          path: CALLBACK_PATH,
          handle: (ctx) => otherProviderCallback({ config: d.config, other }, ctx),
        },
      ]
    : [];
  return router([
    ...otherRoutes,
    mount('', showPrompt),
    mount('/status', status),
    mount('/continue', continueFlow),
    mount('/return', returnFromWallet),
    { method: 'POST', path: promptPath('/fresh'), handle: (ctx, [v, id]) => freshRequest(d, ctx, v as Version, id) },
    // OpenID4VP 1.0 Appendix A: the page's requests for the Digital Credentials API, and its answer
    mount('/dc-api', dcApiRequests),
    { ...mount('/dc-api', dcApiAnswer), method: 'POST' },
  ]);
}
