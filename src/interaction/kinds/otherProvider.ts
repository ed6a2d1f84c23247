import type { Journey } from '../../identity/journeys.js';
import type { InteractionDeps, StepStatus } from '../deps.js';
import type { WalletStep } from '../steps.js';
import type { StepKind, StepStart, StepView } from '../stepKinds.js';
import { continuationParams, tokenExtrasOf } from '../request.js';
import { renderIdentityJourneyBytes } from '../views/identityJourney.js';
import { qrSvg } from '../views/qrSvg.js';

/**
 * D12, VerifiedIdentity_Other: a journey through the other provider, as long as the interaction lasts.
 * A non-PAR journey (spec: authorise `context_id`) can be continued in another browser.
 */
async function startJourney(
  d: InteractionDeps,
  { interaction, version, stepId, params }: StepStart,
): Promise<WalletStep> {
  const other = d.identity.other!;
  const clientId = String(params.client_id);
  const journey: Journey = {
    stepId,
    version,
    clientId,
    params: continuationParams(params),
    tokenExtras: tokenExtrasOf(params),
    expiresAt: interaction.exp * 1000,
  };
  const pushed = params.vc_site === 'par';
  const contextId = await other.journeys.begin(journey, !pushed);
  return {
    kind: 'identity_other',
    clientId,
    credentialTypes: [],
    expiresAt: journey.expiresAt,
    ...(contextId
      ? {
          resumeUri: `${d.authorizeUrls[version]}?${new URLSearchParams({ client_id: clientId, context_id: contextId })}`,
        }
      : {}),
  };
}

async function journeyStatus(d: InteractionDeps, stepId: string): Promise<StepStatus> {
  const journey = await d.identity.other!.journeys.status(stepId);
  // the page shows one "waiting" state, at the provider or not
  return journey.status === 'at_provider' ? { status: 'pending' } : (journey as StepStatus);
}

/** The journey's prompt: a button to the provider, and for a non-PAR journey a link to continue in another browser. */
function journeyView(d: InteractionDeps, { texts, brand, clientLogoHref, clientName, base, step }: StepView) {
  const resumeQrSvg = step.resumeUri ? qrSvg(step.resumeUri) : undefined;
  return (nonce: string) =>
    renderIdentityJourneyBytes({
      nonce,
      texts,
      brand,
      clientLogoHref,
      clientName,
      providerName: texts.pick(d.identity.other!.displayName)!,
      startUrl: `${base}/identity`,
      resumeUri: step.resumeUri,
      resumeQrSvg,
      statusUrl: `${base}/status`,
      continueUrl: `${base}/continue`,
      expiresAt: step.expiresAt,
    });
}

/** D12, VerifiedIdentity_Other: no wallet, a journey through another OpenID Connect provider. */
export const OTHER_PROVIDER: StepKind = {
  takes: (flow) => flow.identity === 'VerifiedIdentity_Other',
  start: startJourney,
  status: journeyStatus,
  view: journeyView,
  externalKind: 'verification',
  expiredDescription: 'the identity check expired before it was finished',
  // a journey's messages name the provider in the page's language
  statusValues: (d, texts) => (d.identity.other ? { provider: texts.pick(d.identity.other.displayName)! } : undefined),
};
