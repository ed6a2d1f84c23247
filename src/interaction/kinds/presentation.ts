import { pidClaimLabels, pidOptionalClaims } from '../../identity/pid.js';
import type { InteractionDeps } from '../deps.js';
import type { WalletStep } from '../steps.js';
import type { StepKind, StepStart } from '../stepKinds.js';
import { flowOf, tokenExtrasOf } from '../request.js';
import { configuredTypes, walletPrompt, type PromptTypes } from './walletPrompt.js';

/** What a presentation request asks the wallet for: credential types, or a PID (D12). */
type Asked =
  { credentialTypes: string[]; identity?: undefined } | { identity: 'VerifiedIdentity'; credentialTypes?: undefined };

/** OpenID4VP: a request through the verifier, for this client, with a same-device link that returns to the prompt. */
async function startPresentation(
  d: InteractionDeps,
  s: StepStart,
  kind: 'verification' | 'identity',
  asked: Asked,
): Promise<WalletStep> {
  const { external } = s.flow;
  const clientId = String(s.params.client_id);
  const request = await d.verifier.createRequest({
    requestId: s.stepId,
    ...asked,
    external,
    returnUri: s.returnUri,
    clientId,
    ...flowOf(s.params),
  });
  return {
    kind,
    clientId,
    credentialTypes: asked.credentialTypes ?? [],
    walletUri: request.walletUri,
    sameDeviceUri: request.sameDeviceUri,
    expiresAt: request.expiresAt * 1000,
    tokenExtras: tokenExtrasOf(s.params),
    ...(external ? { external } : {}),
  };
}

/** What a presentation's kinds share: the verifier reads the status, and completes a same-device return. */
const PRESENTATION = {
  status: (d: InteractionDeps, stepId: string) => d.verifier.requestStatus(stepId),
  completeReturn: (d: InteractionDeps, stepId: string, responseCode: string) =>
    d.verifier.completeReturn(stepId, responseCode),
  dcApi: {
    requests: (d: InteractionDeps, stepId: string) => d.verifier.dcApiRequests(stepId),
    answer: (d: InteractionDeps, stepId: string, answer: unknown, address: string) =>
      d.verifier.takeDcApiAnswer(stepId, answer, address),
  },
  externalKind: 'verification',
  expiredDescription: 'the presentation request expired before the wallet answered',
} as const satisfies Partial<StepKind>;

/** Credential types as scopes: the wallet presents them. */
export const VERIFICATION: StepKind = {
  ...PRESENTATION,
  takes: (flow) => flow.kind === 'verification',
  start: (d, s) => startPresentation(d, s, 'verification', { credentialTypes: s.flow.types }),
  view: walletPrompt('verification', configuredTypes),
};

/** D12: the PID flow's claims, named in the page's language; with no PID flow configured, the step's types. */
const pidTypes: PromptTypes = (d, texts, step) => {
  const pid = d.identity.pid;
  if (!pid) return configuredTypes(d, texts, step);
  const optional = pidOptionalClaims(pid);
  return [
    {
      name: 'VerifiedIdentity',
      displayName: texts.pick(pid.displayName),
      attributes: [...pid.claims],
      optional,
      labels: pidClaimLabels(pid, texts, [...pid.claims, ...optional]),
    },
  ];
};

/** D12, VerifiedIdentity: the wallet presents a PID, through the verifier, for this client's pairwise `sub`. */
export const PID: StepKind = {
  ...PRESENTATION,
  takes: (flow) => flow.identity === 'VerifiedIdentity',
  start: (d, s) => startPresentation(d, s, 'identity', { identity: 'VerifiedIdentity' }),
  view: walletPrompt('identity', pidTypes),
};
