import type { VersionProfile } from '../oidc/versions.js';
import type Provider from 'oidc-provider';
import type { ClientConfig, Config, CredentialType, PidFlowConfig } from '../config/schema.js';
import type { Store } from '../store/types.js';
import type { WalletIssuer } from '../issuance/walletIssuer.js';
import type { Verifier } from '../verification/verifier.js';
import type { OtherProvider } from '../identity/otherProvider.js';
import type { ExternalFlows } from '../external/flows.js';
import type { HolderUi } from '../ui/ui.js';
import type { RateLimits } from '../http/rateLimits.js';
import type { Say } from '../i18n/catalogues.js';
import type { WalletStep, WalletSteps } from './steps.js';

/** What the prompt's handlers and its wallet step kinds work with: passed to each of them. */
export interface InteractionDeps {
  config: Config;
  store: Store;
  /** where the wallet-facing side keeps a succeeded step's claims (src/app.ts) */
  steps: WalletSteps;
  providers: Record<Version, Provider>;
  walletIssuer: WalletIssuer;
  verifier: Verifier;
  clients: ReadonlyMap<string, ClientConfig>;
  credentialTypes: ReadonlyMap<string, CredentialType>;
  external: ExternalFlows;
  /** D12: the identity-verification flows that are configured */
  identity: { pid?: PidFlowConfig; other?: OtherProvider };
  /** where each version's non-PAR requests are authorised: a journey continues there with context_id (D12) */
  authorizeUrls: Record<Version, string>;
  /** told of the flows that end at the prompt (metrics, src/metrics/flowEvents.ts) */
  flowEnds?: PromptFlowEnds;
  /** the holder's language and the operator's brand */
  ui?: HolderUi;
  /** `promptStatus` and `promptDcApi`: per address, before the step is read (src/http/rateLimits.ts) */
  rateLimits?: RateLimits;
}

/** The ends of a flow the prompt decides: a request refused before its wallet step started, and a step ended as expired. */
export interface PromptFlowEnds {
  refused(stepId: string, kind: 'issuance' | 'verification' | 'identity' | 'external', clientId: string): void;
  expired(stepId: string, step: WalletStep): void;
}

export type Version = VersionProfile['id'];

/** oidc-provider's interaction, as `interactionDetails` reads it from the browser's cookie. */
export type Interaction = Awaited<ReturnType<Provider['interactionDetails']>>;

/** A wallet step's progress, as its kind reads it (src/interaction/stepKinds.ts) and the page polls it. */
export type StepStatus = {
  status:
    'pending' | 'scanned' | 'stalled' | 'refused' | 'returning' | 'pin_retry' | 'done' | 'failed' | 'expired' | 'moved';
  message?: string;
  /** the message in catalogue words, worded in the holder's language when the page asks */
  say?: Say;
  /** failed: the relying party's error_description (kept from the browser) */
  description?: string;
  attemptsLeft?: number;
  next?: string;
  handover?: boolean;
};

/** The prompt's own URL for an interaction, or one of its steps (`/status`, `/continue`, ...). */
export const promptUrl = (config: Config, version: Version, uid: string, step = '') =>
  `${config.baseUrl}/interaction/${version}/${uid}${step}`;
