import type { Context } from 'koa';
import { promptUrl, type InteractionDeps, type Version } from '../deps.js';
import { interactionOf } from '../interactionResult.js';
import { EXPIRED, messagePage } from '../pages.js';
import { stepIdOf } from '../steps.js';

/** D12, VerifiedIdentity_Other: the prompt's button sends its browser to the other provider. */
export async function toOtherProvider(d: InteractionDeps, ctx: Context, version: Version, uid: string): Promise<void> {
  const other = d.identity.other;
  const found = await interactionOf(d, ctx, version, uid);
  const stepId = stepIdOf(version, uid);
  const step = found && other ? await d.steps.find(stepId) : undefined;
  if (!other || !step || step.kind !== 'identity_other') return messagePage(ctx, 400, EXPIRED, found);
  const { status: state, journey } = await other.journeys.current(stepId);
  // ended, expired or continued elsewhere: the continue step says which
  if (!journey || (state.status !== 'pending' && state.status !== 'at_provider'))
    return ctx.redirect(promptUrl(d.config, version, uid, '/continue'));
  const url = await other.start(ctx, journey);
  ctx.set('Cache-Control', 'no-store');
  ctx.status = 303;
  ctx.redirect(url ?? promptUrl(d.config, version, uid, '/continue'));
}
