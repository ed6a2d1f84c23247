import type { Context } from 'koa';
import type { Texts } from '../../i18n/catalogues.js';
import { pageTexts } from '../../ui/ui.js';
import type { InteractionDeps, StepStatus, Version } from '../deps.js';
import { finishWithClaims, interactionOf } from '../interactionResult.js';
import { STEP_KINDS, stepStatus } from '../stepKinds.js';
import { stepIdOf, type WalletStep } from '../steps.js';

/**
 * A step's status as the holder's page reads it, its message in the holder's language: the relying
 * party's description stays on the server.
 */
export function forBrowser(
  d: InteractionDeps,
  { description: _, say, ...status }: StepStatus,
  texts: Texts,
  step: WalletStep,
): StepStatus {
  if (status.status === 'expired') {
    // the page's title says it has expired; a message saying so again (and how to start over) would be a second
    const { message: _said, ...rest } = status;
    return rest;
  }
  if (!say) {
    // an English message from before the catalogues: the page's own words for how it ended, nothing otherwise
    const { message, ...rest } = status;
    if (message === undefined) return status;
    return status.status === 'failed' ? { ...rest, message: texts.t('progress.failedText') } : rest;
  }
  const named = STEP_KINDS[step.kind].statusValues?.(d, texts);
  const values = named ? { ...say.values, ...named } : say.values;
  return { ...status, message: texts.t(say.id, values) };
}

/**
 * The page's progress. Once the wallet step has succeeded, the poll (which carries the interaction's
 * cookie) finishes the authorisation and names the provider's resume URL, so the browser goes there
 * directly.
 */
export async function status(d: InteractionDeps, ctx: Context, version: Version, uid: string): Promise<void> {
  ctx.set('Cache-Control', 'no-store');
  // over the budget, the error boundary answers 429 before anything is read
  await d.rateLimits?.consume('promptStatus', { address: ctx.ip });
  const stepId = stepIdOf(version, uid);
  const [interaction, { step, claims }] = await Promise.all([
    interactionOf(d, ctx, version, uid),
    d.steps.withClaims(stepId),
  ]);
  const { texts } = pageTexts(ctx, interaction?.params.ui_locales);
  if (!interaction || !step) {
    ctx.status = 404;
    ctx.body = { status: 'expired' };
    return;
  }
  // D13: the client continues an External Client flow; this browser only hears how the step ended
  if (step.external) {
    ctx.body = claims
      ? { status: 'done', handover: true }
      : { ...forBrowser(d, await stepStatus(d, stepId, step), texts, step), handover: true };
    return;
  }
  const result = interaction.result as { wallet?: unknown } | undefined;
  if (result?.wallet) ctx.body = { status: 'done', next: interaction.returnTo };
  else if (result) ctx.body = { status: 'failed', message: texts.t('progress.notCompleted') };
  else if (claims)
    ctx.body = { status: 'done', next: await finishWithClaims(d, ctx, version, interaction, step, claims) };
  else ctx.body = forBrowser(d, await stepStatus(d, stepId, step), texts, step);
}
