import { pidClaimLabels, pidOptionalClaims } from '../../identity/pid.js';
import type { InteractionDeps } from '../deps.js';
import { attemptOf, attemptRequestId, currentRequestId, type WalletStep } from '../steps.js';
import type { StepKind, StepStart } from '../stepKinds.js';
import { flowOf, tokenExtrasOf } from '../request.js';
import { configuredTypes, walletPrompt, type PromptTypes } from './walletPrompt.js';

/** What a presentation request asks the wallet for: credential types, or a PID (D12). */
type Asked =
  { credentialTypes: string[]; identity?: undefined } | { identity: 'VerifiedIdentity'; credentialTypes?: undefined };

/** How many requests a step may make: its first and a few fresh ones the holder asks for. */
export const MAX_REQUESTS_PER_STEP = 5;

/** OpenID4VP: a request through the verifier, for this client, with a same-device link that returns to the prompt. */
async function startPresentation(
  d: InteractionDeps,
  s: StepStart,
  kind: 'verification' | 'identity',
  asked: Asked,
  requestId = s.stepId,
): Promise<WalletStep> {
  const { external } = s.flow;
  const clientId = String(s.params.client_id);
  const request = await d.verifier.createRequest({
    requestId,
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
    ...(requestId !== s.stepId ? { requestId } : {}),
  };
}

/**
 * A fresh request in place of one the wallet held silently or could not take: the old one is retired first
 * (a wallet answering it now keeps it), so the flow still has one outcome.
 */
async function freshPresentation(
  d: InteractionDeps,
  s: StepStart & { step: WalletStep },
  kind: 'verification' | 'identity',
  asked: Asked,
): Promise<WalletStep | undefined> {
  const current = currentRequestId(s.stepId, s.step);
  const next = attemptOf(current) + 1;
  if (next > MAX_REQUESTS_PER_STEP || !(await d.verifier.retire(current))) return undefined;
  return startPresentation(d, s, kind, asked, attemptRequestId(s.stepId, next));
}

/** What a presentation's kinds share: the verifier reads the status of the step's current request, and completes a same-device return. */
const PRESENTATION = {
  status: (d: InteractionDeps, stepId: string, step: WalletStep) =>
    d.verifier.requestStatus(currentRequestId(stepId, step)),
  completeReturn: (d: InteractionDeps, stepId: string, step: WalletStep, responseCode: string) =>
    d.verifier.completeReturn(currentRequestId(stepId, step), responseCode),
  giveUp: (d: InteractionDeps, stepId: string, step: WalletStep) =>
    d.verifier.endRefused(currentRequestId(stepId, step)),
  finished: (d: InteractionDeps, stepId: string, step: WalletStep, ttlSeconds: number) =>
    d.verifier.finished(currentRequestId(stepId, step), ttlSeconds),
  // the Digital Credentials API answers the step's current request (its id: currentRequestId)
  dcApi: {
    requests: (d: InteractionDeps, requestId: string) => d.verifier.dcApiRequests(requestId),
    answer: (d: InteractionDeps, requestId: string, answer: unknown, address: string) =>
      d.verifier.takeDcApiAnswer(requestId, answer, address),
  },
  externalKind: 'verification',
  expiredDescription: 'the presentation request expired before the wallet answered',
} as const satisfies Partial<StepKind>;

/** Credential types as scopes: the wallet presents them. */
export const VERIFICATION: StepKind = {
  ...PRESENTATION,
  takes: (flow) => flow.kind === 'verification',
  start: (d, s) => startPresentation(d, s, 'verification', { credentialTypes: s.flow.types }),
  fresh: (d, s) => freshPresentation(d, s, 'verification', { credentialTypes: s.flow.types }),
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
  fresh: (d, s) => freshPresentation(d, s, 'identity', { identity: 'VerifiedIdentity' }),
  view: walletPrompt('identity', pidTypes),
};
