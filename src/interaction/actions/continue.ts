import type { Context } from 'koa';
import { promptUrl, type Interaction, type InteractionDeps, type StepStatus, type Version } from '../deps.js';
import { finishWithClaims, finishWithError, interactionOf } from '../interactionResult.js';
import { EXPIRED, HANDED_OVER, MOVED, messagePage } from '../pages.js';
import { STEP_KINDS, stepStatus } from '../stepKinds.js';
import { stepIdOf, type WalletStep } from '../steps.js';

/** The client's error_description for a step that ended unfinished (or ended as it should not have). */
function endedDescription(step: WalletStep, state: StepStatus): string {
  if (state.status === 'expired') return STEP_KINDS[step.kind].expiredDescription;
  if (state.status === 'failed') return state.description ?? state.message ?? 'the wallet step failed';
  return 'the wallet step could not be completed; start again';
}

/** D13: an External Client flow's browser is told that the app continues (or was told of the failure), never sent back to it. */
async function handOver(
  d: InteractionDeps,
  ctx: Context,
  interaction: Interaction,
  version: Version,
  uid: string,
  step: WalletStep,
  succeeded: boolean,
): Promise<void> {
  const client = d.clients.get(step.clientId)?.clientName ?? step.clientId;
  if (succeeded) return messagePage(ctx, 200, HANDED_OVER.done(client), interaction);
  const state = await stepStatus(d, stepIdOf(version, uid), step);
  if (state.status !== 'failed' && state.status !== 'expired') {
    ctx.redirect(promptUrl(d.config, version, uid));
    return;
  }
  messagePage(ctx, 200, HANDED_OVER.ended(client), interaction);
}

/** For pages without JavaScript, failures and expiry: finishes the interaction as the wallet step ended. */
export async function continueFlow(d: InteractionDeps, ctx: Context, version: Version, uid: string): Promise<void> {
  const stepId = stepIdOf(version, uid);
  const [found, { step, claims }] = await Promise.all([
    interactionOf(d, ctx, version, uid),
    d.steps.withClaims(stepId),
  ]);
  if (!found || !step) return messagePage(ctx, 400, EXPIRED, found);
  if (step.external) return handOver(d, ctx, found, version, uid, step, claims !== undefined);
  let returnTo = found.returnTo;
  if (!found.result) {
    if (claims) {
      returnTo = await finishWithClaims(d, ctx, version, found, step, claims);
    } else {
      let state = await stepStatus(d, stepId, step);
      // the wallet could not take the request and the holder does not ask for a fresh one: it fails here
      const giveUp = STEP_KINDS[step.kind].giveUp;
      if (state.status === 'refused' && giveUp) {
        await giveUp(d, stepId, step);
        state = await stepStatus(d, stepId, step);
      }
      // D12: a journey continued in another browser ends there; this one only hears it
      if (state.status === 'moved') return messagePage(ctx, 200, MOVED, found);
      if (state.status !== 'failed' && state.status !== 'expired' && state.status !== 'done') {
        ctx.redirect(promptUrl(d.config, version, uid));
        return;
      }
      // a failure was counted where it happened (the wallet's request); an expiry is seen here
      if (state.status === 'expired') d.flowEnds?.expired(stepId, step);
      return finishWithError(d, ctx, version, {
        error: 'access_denied',
        error_description: endedDescription(step, state),
      });
    }
  }
  ctx.status = 303;
  ctx.redirect(returnTo);
}
