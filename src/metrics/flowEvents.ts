import type { Logger } from '../log.js';
import type { OfferRecord } from '../issuance/offers.js';
import type { IssuedCredential } from '../issuance/issueCredential.js';
import type { VerificationRecord } from '../verification/record.js';
import type { WalletStep } from '../interaction/steps.js';
import type { Journey } from '../identity/journeys.js';
import type { ExternalRequest } from '../external/flows.js';
import type { CredentialNotice } from '../issuance/notification.js';
import type { FlowKind, FlowOutcome, FlowVersion, Metrics } from './metrics.js';

/** A step id's interface version: `v1.<uid>` or `v2.<uid>` (src/interaction/steps.ts). */
export const versionOfStep = (stepId: string): FlowVersion => (stepId.startsWith('v1.') ? 'v1' : 'v2');

/**
 * Where flows end: each flow is counted once in `vc_flows_total`, and its end written as one
 * audit line (D17: client, flow, SerialNumber or request id, outcome; never an attribute value, PIN, token
 * or secret). The callers are the places that decide a flow's end once (src/app.ts):
 * - an issued credential (the offer taken once) and an offer failed for good (its last wrong PIN);
 * - a verified or refused presentation (the request's state consumed once), `denied` when the wallet
 *   answered access_denied;
 * - a VerifiedIdentity_Other journey's one outcome (`denied` when the provider answered access_denied);
 * - an External Client flow's one outcome, as the webhook announces it (kind `external`); its wallet
 *   step's audit line is written as for any flow, with `external: true`;
 * - `expired`: the prompt's `/continue` ending an expired step (the holder's page goes there when it sees
 *   the expiry); an External Client flow's expiry watch;
 * - `failed` also: a request the prompt refused before its wallet step started (template, images, hint).
 * A wallet's notification about an issued credential (OpenID4VCI 1.0 §11) is audited on a line of its own;
 * it is not a flow's end and is not counted.
 */
export class FlowEvents {
  constructor(
    private readonly metrics: Metrics,
    private readonly logger: Logger,
  ) {}

  #audit(line: Record<string, unknown>, message: string): void {
    this.logger.info({ ...line, at: new Date().toISOString() }, message);
  }

  /** The credential of `offer` was signed and handed to the wallet, in the format it picked. */
  issued(offer: OfferRecord, issued: IssuedCredential): void {
    if (!offer.external) this.metrics.flow('issuance', versionOfStep(offer.stepId), 'completed', offer.clientId);
    this.#audit(
      {
        audit: 'credential_issuance',
        client: offer.clientId,
        flow: 'issuance',
        ...(offer.external ? { external: true } : {}),
        requestId: offer.stepId,
        credentialType: offer.credentialType,
        serialNumber: offer.serialNumber,
        format: issued.format,
        // how many credentials one request bought (a batch: one per key the wallet proved)
        credentials: issued.count,
        expiresAt: new Date(issued.expiresAt * 1000).toISOString(),
        outcome: 'issued',
      },
      'credential issued',
    );
  }

  /** The offer failed for good: its PIN attempts are used up. */
  issuanceFailed(offer: OfferRecord): void {
    if (!offer.external) this.metrics.flow('issuance', versionOfStep(offer.stepId), 'failed', offer.clientId);
    this.#audit(
      {
        audit: 'credential_issuance',
        client: offer.clientId,
        flow: 'issuance',
        ...(offer.external ? { external: true } : {}),
        requestId: offer.stepId,
        credentialType: offer.credentialType,
        serialNumber: offer.serialNumber,
        outcome: 'failed',
        reason: 'pin_attempts_exhausted',
      },
      'credential not issued',
    );
  }

  /**
   * The wallet's first notification about an issued credential: `credential_accepted`, `credential_failure`
   * or `credential_deleted`. The wallet's description is not logged (D17: only what the audit line names).
   */
  credentialNotified(notice: CredentialNotice): void {
    this.#audit(
      {
        audit: 'credential_notification',
        client: notice.clientId,
        flow: 'issuance',
        ...(notice.external ? { external: true } : {}),
        requestId: notice.stepId,
        credentialType: notice.credentialType,
        serialNumber: notice.serialNumber,
        event: notice.event,
      },
      notice.event === 'credential_accepted'
        ? 'credential accepted by the wallet'
        : 'credential not kept by the wallet',
    );
  }

  /** A presentation was verified (verification, or VerifiedIdentity's PID). */
  verified(record: VerificationRecord): void {
    this.#presentation(record, 'completed');
  }

  /** A presentation request ended without one: refused, or declined in the wallet (`denied`). */
  verificationFailed(record: VerificationRecord, declined: boolean): 'failed' | 'denied' {
    const outcome = declined ? 'denied' : 'failed';
    this.#presentation(record, outcome);
    return outcome;
  }

  #presentation(record: VerificationRecord, outcome: FlowOutcome): void {
    const kind: FlowKind = record.identity ? 'identity' : 'verification';
    if (!record.external) this.metrics.flow(kind, versionOfStep(record.requestId), outcome, record.clientId);
    this.#audit(
      {
        audit: 'presentation_verification',
        client: record.clientId,
        flow: kind,
        ...(record.external ? { external: true } : {}),
        requestId: record.requestId,
        credentialTypes: record.identity ? [record.identity] : record.credentialTypes,
        outcome,
      },
      outcome === 'completed' ? 'presentation verified' : 'presentation not verified',
    );
  }

  /** A VerifiedIdentity_Other journey ended (its one outcome). */
  journeyEnded(journey: Journey, outcome: 'completed' | 'failed' | 'denied'): void {
    this.metrics.flow('identity', journey.version, outcome, journey.clientId);
    this.#audit(
      {
        audit: 'identity_verification',
        client: journey.clientId,
        flow: 'identity',
        requestId: journey.stepId,
        outcome,
      },
      outcome === 'completed' ? 'identity verified' : 'identity not verified',
    );
  }

  /** An External Client flow's one outcome was announced to its client. */
  externalEnded(stepId: string, request: ExternalRequest, outcome: FlowOutcome): void {
    this.metrics.flow('external', request.version, outcome, request.clientId);
    this.#audit(
      {
        audit: 'external_flow',
        client: request.clientId,
        flow: request.kind,
        external: true,
        requestId: stepId,
        outcome,
      },
      'external flow ended',
    );
  }

  /** The prompt's `/continue` ended an expired wallet step (not an External Client flow's: its watch does). */
  expired(stepId: string, step: WalletStep): void {
    this.metrics.flow(kindOf(step.kind), versionOfStep(stepId), 'expired', step.clientId);
  }

  /** The prompt refused the request before its wallet step started (the spec's checks at authorise). */
  refused(stepId: string, kind: FlowKind, clientId: string): void {
    this.metrics.flow(kind, versionOfStep(stepId), 'failed', clientId);
  }
}

const kindOf = (kind: WalletStep['kind']): FlowKind =>
  kind === 'issuance' ? 'issuance' : kind === 'verification' ? 'verification' : 'identity';
