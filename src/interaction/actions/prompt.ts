import type { Context } from 'koa';
import { ProtocolError } from '../../rules/errors.js';
import { pageTexts } from '../../ui/ui.js';
import { promptUrl, type Interaction, type InteractionDeps, type Version } from '../deps.js';
import { finishWithError, interactionOf } from '../interactionResult.js';
import { EXPIRED, messagePage, page } from '../pages.js';
import { externalRequest, requestedFlow, secondsLeft } from '../request.js';
import { STEP_KINDS, stepKindFor, type StepStart } from '../stepKinds.js';
import { stepIdOf, type WalletStep } from '../steps.js';

/** What starting (or freshly requesting) the interaction's wallet step is given: its request, read again. */
export function stepStartOf(d: InteractionDeps, interaction: Interaction, version: Version, stepId: string): StepStart {
  const params = interaction.params as Record<string, unknown>;
  const flow = requestedFlow(String(params.scope ?? ''));
  // OpenID4VP 1.0 §8.2: where a wallet on this device sends the browser back
  const returnUri = promptUrl(d.config, version, interaction.uid, '/return');
  return { interaction, version, stepId, params, flow, returnUri };
}

/** Starts the interaction's wallet step as its kind starts; a step another tab started first wins. */
export async function startStep(
  d: InteractionDeps,
  interaction: Interaction,
  version: Version,
  stepId: string,
): Promise<WalletStep> {
  const start = stepStartOf(d, interaction, version, stepId);
  const { flow, params } = start;
  const kind = stepKindFor(flow);
  const step = await kind.start(d, start);
  if (await d.steps.start(stepId, step, secondsLeft(interaction))) {
    // before the holder sees the wallet link: the flow's end is announced from here on
    if (flow.external)
      await d.external.begin(stepId, externalRequest(version, kind.externalKind, params), step.expiresAt);
    return step;
  }
  return (await d.steps.find(stepId)) ?? step;
}

/**
 * The prompt (D10): the authorise step's interaction. Its first visit makes the checks the spec places
 * at authorise (template and images: PAR authorise errors, TokenHint rows) and starts the wallet step; a
 * refused request goes back to the client with the error. The page shows the step as its kind's view.
 */
export async function showPrompt(d: InteractionDeps, ctx: Context, version: Version, uid: string): Promise<void> {
  const stepId = stepIdOf(version, uid);
  // read together (one round trip): the step is used only once the interaction is found to be this one
  const [found, started] = await Promise.all([interactionOf(d, ctx, version, uid), d.steps.find(stepId)]);
  if (!found) return messagePage(ctx, 400, EXPIRED);
  let step = started;
  if (!step) {
    try {
      step = await startStep(d, found, version, stepId);
    } catch (err) {
      if (err instanceof ProtocolError) {
        const { kind, external } = requestedFlow(String(found.params.scope ?? ''));
        d.flowEnds?.refused(stepId, external ? 'external' : kind, String(found.params.client_id));
        return finishWithError(d, ctx, version, { error: err.error, error_description: err.description });
      }
      throw err;
    }
  }
  const clientName = d.clients.get(step.clientId)?.clientName ?? step.clientId;
  const { texts, brand } = pageTexts(ctx, found.params.ui_locales);
  const clientLogoHref = d.ui?.clientLogo(step.clientId);
  const base = promptUrl(d.config, version, uid);
  page(ctx, 200, STEP_KINDS[step.kind].view(d, { texts, brand, clientLogoHref, clientName, base, step }));
}
