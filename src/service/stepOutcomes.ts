import type { ClientConfig } from '../config/schema.js';
import type { ExternalFlows } from '../external/flows.js';
import { issuanceFlowClaims, verificationFlowClaims, type FlowClaims } from '../flow/flowClaims.js';
import { pidFlowClaims } from '../identity/pid.js';
import type { PairwiseSubjects } from '../identity/subject.js';
import { stepIdOfRequest, type WalletSteps } from '../interaction/steps.js';
import type { OfferRecord } from '../issuance/offers.js';
import type { IssuedCredential } from '../issuance/issueCredential.js';
import type { FlowEvents } from '../metrics/flowEvents.js';
import type { CredentialNotice } from '../issuance/notification.js';
import type { VerificationRecord, VerificationResult } from '../verification/record.js';

export interface StepOutcomesDeps {
  /** the holder's browser reads a succeeded step's claims from here (src/interaction/steps.ts) */
  steps: WalletSteps;
  /** D13: an External Client flow's client is told by webhook instead */
  external: ExternalFlows;
  /** each flow's end counted and audited once (src/metrics/flowEvents.ts) */
  flowEnds: FlowEvents;
  /** D12: pairwise subjects of the identity flows */
  subjects: PairwiseSubjects;
  clients: ReadonlyMap<string, ClientConfig>;
  /** how long a succeeded step's claims wait for the holder's browser (lifetimes.interaction) */
  interactionLifetime: number;
}

/**
 * What happens when a wallet step ends, in the wallet's own request (docs/architecture.md, "How the wallet
 * step finishes the interaction"): the step's ID-token claims kept for the holder's browser, an External
 * Client flow's outcome recorded (its webhook), and the flow's end counted. Built before the wallet issuer
 * and the verifier, which call it.
 */
export class StepOutcomes {
  constructor(private readonly d: StepOutcomesDeps) {}

  /**
   * A credential was signed for the offer, in the format the wallet picked: the ID token's ExpiresAt is that
   * credential's (an mdoc is shorter-lived than the type). Counted after: a credential whose step could not be
   * told is not issued (the offer is put back), and the claims a failed telling may have written are
   * withdrawn, so the holder's browser does not finish a flow whose wallet got no credential.
   */
  async issued(offer: OfferRecord, issued: IssuedCredential): Promise<void> {
    const claims = issuanceFlowClaims({ ...offer, credentialExpiresAt: issued.expiresAt });
    try {
      await this.#succeeded(offer.stepId, claims, offer.external);
    } catch (err) {
      await this.d.steps.withdraw(offer.stepId).catch(() => undefined);
      throw err;
    }
    this.d.flowEnds.issued(offer, issued);
  }

  /** The offer failed for good (its PIN attempts used up). */
  issuanceFailed(offer: OfferRecord, message: string): Promise<void> {
    this.d.flowEnds.issuanceFailed(offer);
    return this.#failed(offer.stepId, message, offer.external);
  }

  /** A presentation was verified: a PID's pairwise subject (D12), or the presented claims (D2). */
  async verified(record: VerificationRecord, result: VerificationResult): Promise<void> {
    const claims = record.identity
      ? pidFlowClaims(result, record.clientId!, this.d.subjects)
      : verificationFlowClaims(result, { issuerClaim: this.d.clients.get(record.clientId!)?.vcIssuerClaim });
    await this.#succeeded(stepIdOfRequest(record.requestId), claims, record.external);
    this.d.flowEnds.verified(record);
  }

  /** A presentation was refused, or declined by the wallet (reported as `denied`). */
  verificationFailed(record: VerificationRecord, failure: { description: string; declined?: boolean }): Promise<void> {
    const reported = this.d.flowEnds.verificationFailed(record, failure.declined === true);
    return this.#failed(stepIdOfRequest(record.requestId), failure.description, record.external, reported);
  }

  /** OpenID4VCI 1.0 §11: what the wallet did with the credential, audited and told to an External flow's client. */
  async credentialNotified(notice: CredentialNotice): Promise<void> {
    if (notice.external) await this.d.external.credentialNotified(notice.stepId, notice.event, notice.description);
    this.d.flowEnds.credentialNotified(notice);
  }

  async #succeeded(stepId: string, claims: FlowClaims, isExternal: boolean | undefined): Promise<void> {
    await this.d.steps.succeeded(stepId, claims, this.d.interactionLifetime);
    if (isExternal) await this.d.external.completed(stepId, claims);
  }

  #failed(
    stepId: string,
    message: string,
    isExternal: boolean | undefined,
    reported: 'failed' | 'denied' = 'failed',
  ): Promise<void> {
    return isExternal ? this.d.external.failed(stepId, message, reported) : Promise.resolve();
  }
}
