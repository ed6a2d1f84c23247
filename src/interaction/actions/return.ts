import type { Context } from 'koa';
import { readQuery } from '../../http/form.js';
import { promptUrl, type InteractionDeps, type Version } from '../deps.js';
import { interactionOf } from '../interactionResult.js';
import { EXPIRED, messagePage } from '../pages.js';
import { STEP_KINDS, stepStatus } from '../stepKinds.js';
import { stepIdOf } from '../steps.js';
import { continueFlow } from './continue.js';

/**
 * Same-device (OpenID4VP 1.0 §8.2): the wallet sent this browser back with a response code. Only the
 * browser holding the interaction's cookie gets here; the code completes the step (of a kind a wallet on
 * this device returns from), and the flow ends as `/continue` ends it.
 */
export async function returnFromWallet(d: InteractionDeps, ctx: Context, version: Version, uid: string): Promise<void> {
  ctx.set('Cache-Control', 'no-store');
  const code = readQuery(ctx).response_code;
  const stepId = stepIdOf(version, uid);
  const [found, { step, claims }] = await Promise.all([
    interactionOf(d, ctx, version, uid),
    d.steps.withClaims(stepId),
  ]);
  if (!found || !step) return messagePage(ctx, 400, EXPIRED, found);
  const completeReturn = STEP_KINDS[step.kind].completeReturn;
  if (code !== undefined && !claims && !found.result && completeReturn) await completeReturn(d, stepId, step, code);
  // the wallet could not take the request and sent the browser back: the prompt offers a fresh one
  if (code === undefined && !claims && !found.result && (await stepStatus(d, stepId, step)).status === 'refused') {
    ctx.redirect(promptUrl(d.config, version, uid));
    return;
  }
  return continueFlow(d, ctx, version, uid);
}
