import type { Store } from '../store/types.js';
import type { FlowClaims } from '../flow/flowClaims.js';

/**
 * What the prompt remembers about its wallet step, kept beside the interaction for the interaction's
 * lifetime. No attribute values: those stay with the offer until the credential is issued.
 */
export interface WalletStep {
  /** `identity`: a PID presented from a wallet; `identity_other`: a journey through another provider (D12) */
  kind: 'issuance' | 'verification' | 'identity' | 'identity_other';
  clientId: string;
  credentialTypes: string[];
  /** the wallet's link (offer, or the cross-device presentation request); none for a journey through another provider */
  walletUri?: string;
  /** a presentation request's link for a wallet on this device, which sends the browser back (OpenID4VP 1.0 §8.2) */
  sameDeviceUri?: string;
  /** identity_other, non-PAR: where another browser continues the journey (authorise with context_id) */
  resumeUri?: string;
  /** epoch ms */
  expiresAt: number;
  pinLength?: number;
  /** issuance: the names (never the values) of the attributes the hint carried, for the prompt's "Contains" */
  attributes?: string[];
  /** issuance: the offer's id (its status is kept under it) */
  offerId?: string;
  /** Version 1 non-PAR: the token response also carries the request's state (D3) */
  tokenExtras?: Record<string, string>;
  /** an External Client flow (D13): the client continues it; the browser never goes back to it */
  external?: boolean;
  /** a presentation's current verifier request after the holder asked for a fresh one: `<stepId>~<n>` (n >= 2) */
  requestId?: string;
}

/** A step's id: the interface version and the interaction's uid, e.g. `v2.Xyz`. */
export const stepIdOf = (version: string, uid: string) => `${version}.${uid}`;

/** The verifier request a presentation step waits on now: its own id until the holder asked for a fresh one. */
export const currentRequestId = (stepId: string, step: Pick<WalletStep, 'requestId'>) => step.requestId ?? stepId;

/** The `n`th verifier request of a step (n >= 2; the first has the step's id). */
export const attemptRequestId = (stepId: string, n: number) => `${stepId}~${n}`;

/** Which of its step's requests this is: 1 for the step's first. */
export const attemptOf = (requestId: string) => {
  const at = requestId.indexOf('~');
  return at === -1 ? 1 : Number(requestId.slice(at + 1)) || 1;
};

/** The step a verifier request belongs to: a fresh request's id names its step before the `~`. */
export const stepIdOfRequest = (requestId: string) => {
  const at = requestId.indexOf('~');
  return at === -1 ? requestId : requestId.slice(0, at);
};

// one hash tag per step: its record and its claims are read together
const stepKey = (stepId: string) => `step:{${stepId}}`;
const claimsKey = (stepId: string) => `step:{${stepId}}:claims`;

/** The wallet steps of the prompts in the shared store (D14): any instance serves any step. */
export class WalletSteps {
  constructor(private readonly store: Store) {}

  /** Keeps the step; false when the interaction has one already (a second tab started it first). */
  start(stepId: string, step: WalletStep, ttlSeconds: number): Promise<boolean> {
    return this.store.setIfAbsent(stepKey(stepId), step, ttlSeconds);
  }

  find(stepId: string): Promise<WalletStep | undefined> {
    return this.store.get<WalletStep>(stepKey(stepId));
  }

  /** The step and, once the wallet step succeeded, the ID token's claims it produced. */
  async withClaims(stepId: string): Promise<{ step?: WalletStep; claims?: FlowClaims }> {
    const [step, claims] = (await this.store.getMany([stepKey(stepId), claimsKey(stepId)])) as [
      WalletStep | undefined,
      FlowClaims | undefined,
    ];
    return { step, claims };
  }

  /** The step with its current request replaced (a fresh presentation request), for the rest of its lifetime. */
  replace(stepId: string, step: WalletStep, ttlSeconds: number): Promise<void> {
    return this.store.set(stepKey(stepId), step, ttlSeconds);
  }

  /** The wallet step succeeded: its claims wait for the holder's browser to finish the authorisation. */
  succeeded(stepId: string, claims: FlowClaims, ttlSeconds: number): Promise<void> {
    return this.store.set(claimsKey(stepId), claims, ttlSeconds);
  }

  /** The step's success taken back (the wallet got no credential after all): its claims are gone. */
  withdraw(stepId: string): Promise<void> {
    return this.store.delete(claimsKey(stepId));
  }

  /**
   * The holder's browser finished the interaction with the step's claims: the step and its claims are
   * kept only `ttlSeconds` more (a second poll before the browser returns to the provider still reads them).
   */
  finished(stepId: string, ttlSeconds: number): Promise<void> {
    return this.store.shorten([stepKey(stepId), claimsKey(stepId)], ttlSeconds);
  }
}
