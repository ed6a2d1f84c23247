import type { Context } from 'koa';
import { readBody } from '../../http/form.js';
import { RESPONSE_BODY_LIMIT } from '../../verification/response.js';
import type { Interaction, InteractionDeps, Version } from '../deps.js';
import { finishWithClaims, interactionOf } from '../interactionResult.js';
import { STEP_KINDS, type StepKind } from '../stepKinds.js';
import { currentRequestId, stepIdOf } from '../steps.js';

/** The step of this browser's interaction, when its kind answers through the Digital Credentials API and it is not over. */
async function openStep(
  d: InteractionDeps,
  ctx: Context,
  version: Version,
  uid: string,
): Promise<
  { stepId: string; requestId: string; dcApi: NonNullable<StepKind['dcApi']>; interaction: Interaction } | undefined
> {
  const stepId = stepIdOf(version, uid);
  const [found, { step, claims }] = await Promise.all([
    interactionOf(d, ctx, version, uid),
    d.steps.withClaims(stepId),
  ]);
  const dcApi = step && STEP_KINDS[step.kind].dcApi;
  if (!found || !dcApi || claims || found.result) return undefined;
  return { stepId, requestId: currentRequestId(stepId, step), dcApi, interaction: found };
}

const gone = (ctx: Context) => {
  ctx.status = 404;
  ctx.body = { status: 'expired' };
};

/**
 * OpenID4VP 1.0 Appendix A: the `requests` the prompt's page hands to `navigator.credentials.get`, fetched
 * ahead of the holder's click so that the call keeps the click's activation. Only the browser holding the
 * interaction's cookie gets them.
 */
export async function dcApiRequests(d: InteractionDeps, ctx: Context, version: Version, uid: string): Promise<void> {
  ctx.set('Cache-Control', 'no-store');
  // each call signs a request object: over the budget, the error boundary answers 429 before anything is read
  await d.rateLimits?.consume('promptDcApi', { address: ctx.ip });
  const open = await openStep(d, ctx, version, uid);
  const requests = open && (await open.dcApi.requests(d, open.requestId));
  if (!requests) return gone(ctx);
  ctx.body = { requests };
}

/**
 * The credential the page got (`{ protocol, data }` as JSON), checked by the step's kind; nothing else from
 * the page is trusted. A JSON body from this origin only: another site's page cannot post here without a
 * preflight, and its Origin is not ours. The page hears only how it ended (and, verified, where the browser
 * resumes); its words come from `/status`.
 */
export async function dcApiAnswer(d: InteractionDeps, ctx: Context, version: Version, uid: string): Promise<void> {
  ctx.set('Cache-Control', 'no-store');
  const origin = ctx.get('origin');
  if (!ctx.is('application/json') || (origin !== '' && origin !== new URL(d.config.baseUrl).origin)) {
    ctx.status = 403;
    ctx.body = { error: 'invalid_request', error_description: 'a JSON answer from the prompt page only' };
    return;
  }
  const open = await openStep(d, ctx, version, uid);
  if (!open) return gone(ctx);
  let answer: unknown;
  try {
    answer = JSON.parse((await readBody(ctx, RESPONSE_BODY_LIMIT)).toString('utf8'));
  } catch (err) {
    if (!(err instanceof SyntaxError)) throw err;
    answer = undefined; // refused as malformed, which ends the request
  }
  const ended = await open.dcApi.answer(d, open.requestId, answer, ctx.ip);
  if (ended.outcome === 'gone') return gone(ctx);
  if (ended.outcome === 'refused') {
    ctx.status = 400;
    ctx.body = { status: 'failed' };
    return;
  }
  // the wallet could not take the request: the page's polling offers a fresh one, as after a QR code's refusal
  if (ended.outcome === 'unanswered') {
    ctx.body = { status: 'refused' };
    return;
  }
  // verified: this browser finishes the interaction at once, as its next poll would (D13: not an External Client's)
  const { step, claims } = await d.steps.withClaims(open.stepId);
  ctx.body =
    step && claims && !step.external
      ? { status: 'done', next: await finishWithClaims(d, ctx, version, open.interaction, step, claims) }
      : { status: 'done' };
}
