import type { Context } from 'koa';
import { promptUrl, type InteractionDeps, type Version } from '../deps.js';
import { interactionOf } from '../interactionResult.js';
import { EXPIRED, messagePage, OTHER_SITE } from '../pages.js';
import { isSameOriginPost } from '../../http/sameOrigin.js';
import { secondsLeft } from '../request.js';
import { STEP_KINDS } from '../stepKinds.js';
import { stepIdOf } from '../steps.js';
import { stepStartOf } from './prompt.js';

/**
 * POST: the holder asks for a fresh request (a new QR code and link) after the wallet went silent or
 * could not take the request, within the same interaction. The kind decides whether the current request
 * can make way; either way the browser goes back to the prompt, which shows what holds now.
 */
export async function freshRequest(d: InteractionDeps, ctx: Context, version: Version, uid: string): Promise<void> {
  ctx.set('Cache-Control', 'no-store');
  // the prompt's own form only: another site's page could otherwise make the holder's browser (which sends
  // the interaction's cookie) retire the request the holder is about to answer
  const headers = { origin: ctx.get('Origin') || undefined, fetchSite: ctx.get('Sec-Fetch-Site') || undefined };
  if (!isSameOriginPost(headers, new URL(d.config.baseUrl).origin)) return messagePage(ctx, 403, OTHER_SITE);
  const stepId = stepIdOf(version, uid);
  const [found, { step, claims }] = await Promise.all([
    interactionOf(d, ctx, version, uid),
    d.steps.withClaims(stepId),
  ]);
  if (!found || !step) return messagePage(ctx, 400, EXPIRED, found);
  const fresh = STEP_KINDS[step.kind].fresh;
  if (fresh && !claims && !found.result) {
    const next = await fresh(d, { ...stepStartOf(d, found, version, stepId), step });
    if (next) await d.steps.replace(stepId, next, secondsLeft(found));
  }
  ctx.status = 303;
  ctx.redirect(promptUrl(d.config, version, uid));
}
