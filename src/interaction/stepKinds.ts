import type { ExternalRequest } from '../external/flows.js';
import type { Texts } from '../i18n/catalogues.js';
import type { BrandView } from './views/layout.js';
import type { WalletStep } from './steps.js';
import type { Interaction, InteractionDeps, StepStatus, Version } from './deps.js';
import type { RequestedFlow } from './request.js';
import type { DcApiOutcome, DcApiRequest } from '../verification/verifier.js';
import { ISSUANCE } from './kinds/issuance.js';
import { PID, VERIFICATION } from './kinds/presentation.js';
import { OTHER_PROVIDER } from './kinds/otherProvider.js';

/** What a kind's start is given: the interaction, its step's id, and what its request asks for. */
export interface StepStart {
  interaction: Interaction;
  version: Version;
  stepId: string;
  params: Record<string, unknown>;
  flow: RequestedFlow;
  /** OpenID4VP 1.0 §8.2: where a wallet on this device sends the browser back */
  returnUri: string;
}

/** What a kind's view is given: the page's words and who asks. */
export interface StepView {
  texts: Texts;
  brand?: BrandView;
  clientLogoHref?: string;
  clientName: string;
  /** the prompt's URL; its steps (`/status`, `/continue`, ...) are below it */
  base: string;
  step: WalletStep;
}

/** One kind of wallet step: which requests it serves, how it starts, how its status reads, which view shows it. */
export interface StepKind {
  /** the request's scope asks for this kind */
  takes(flow: RequestedFlow): boolean;
  start(d: InteractionDeps, s: StepStart): Promise<WalletStep>;
  status(d: InteractionDeps, stepId: string, step: WalletStep): Promise<StepStatus>;
  /** the prompt page, rendered with the page's nonce */
  view(d: InteractionDeps, v: StepView): (nonce: string) => Buffer;
  /** D13: what an External Client flow of this kind is recorded as */
  externalKind: ExternalRequest['kind'];
  /** the client's error_description when the step expired unfinished */
  expiredDescription: string;
  /** values the holder's status messages name besides their own */
  statusValues?(d: InteractionDeps, texts: Texts): Record<string, string> | undefined;
  /** OpenID4VP 1.0 §8.2: the browser came back from a wallet on this device with a response code */
  completeReturn?(d: InteractionDeps, stepId: string, step: WalletStep, responseCode: string): Promise<unknown>;
  /**
   * The holder asks for a fresh request after the wallet went silent or could not take it: the step with
   * its new request, or undefined when the current one cannot make way (it is being answered, or over).
   */
  fresh?(d: InteractionDeps, s: StepStart & { step: WalletStep }): Promise<WalletStep | undefined>;
  /** The holder's browser finished the interaction with the step's outcome: what the step's own records keep of it may go soon. */
  finished?(d: InteractionDeps, stepId: string, step: WalletStep, ttlSeconds: number): Promise<void>;
  /** The holder gives up on a step the wallet could not take: it ends as a failure. */
  giveUp?(d: InteractionDeps, stepId: string, step: WalletStep): Promise<void>;
  /** OpenID4VP 1.0 Appendix A: the step is answered through the W3C Digital Credentials API too (src/interaction/actions/dcApi.ts) */
  dcApi?: {
    requests(d: InteractionDeps, requestId: string): Promise<DcApiRequest[] | undefined>;
    answer(d: InteractionDeps, requestId: string, answer: unknown, address: string): Promise<DcApiOutcome>;
  };
}

/** The kinds of wallet step, by `WalletStep.kind`. A new kind is one entry here and its file in `kinds/`. */
export const STEP_KINDS: Record<WalletStep['kind'], StepKind> = {
  issuance: ISSUANCE,
  verification: VERIFICATION,
  identity: PID,
  identity_other: OTHER_PROVIDER,
};

/** The kind of step a request asks for. */
export function stepKindFor(flow: RequestedFlow): StepKind {
  const kind = Object.values(STEP_KINDS).find((k) => k.takes(flow));
  if (!kind) throw new Error(`no wallet step serves the scope ${flow.kind}`); // requestedFlow's kinds are all served
  return kind;
}

/** The step's progress, as its kind reads it. */
export const stepStatus = (d: InteractionDeps, stepId: string, step: WalletStep): Promise<StepStatus> =>
  STEP_KINDS[step.kind].status(d, stepId, step);
