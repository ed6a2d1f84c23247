import { createHash, randomBytes } from 'node:crypto';
import type { Store } from '../store/types.js';
import type { Logger } from '../log.js';
import type { FlowClaims } from '../flow/flowClaims.js';
import type { WebhookQueue } from '../webhooks/queue.js';
import type { VersionProfile } from '../oidc/versions.js';
import { invalidRequest } from '../rules/errors.js';
import { Poller } from '../store/poller.js';
import { safeErrorDescription } from '../http/errorDescription.js';

/** What an External Client flow's request was: what its continuation must match, and what the code is minted from. */
export interface ExternalRequest {
  version: VersionProfile['id'];
  clientId: string;
  kind: 'issuance' | 'verification';
  /** whether it was pushed (PAR): its continuation then names a request_uri */
  pushed: boolean;
  /** the request's parameters as the provider holds them (client_id, redirect_uri, scope, state, ...), `request_uri` for a PAR flow */
  params: Record<string, string>;
}

/** A ContinuationContext's record: the request and the claims its ID token carries. */
export interface Continuation {
  request: ExternalRequest;
  claims: FlowClaims;
}

/** How a flow's end is counted: its outcome, or `denied` for a failure the holder chose. */
type FlowEnd = 'completed' | 'failed' | 'expired' | 'denied';

/** Seconds after the wallet step's own expiry before the flow is declared expired: a wallet's last request may still be under way. */
const EXPIRY_GRACE_SECONDS = 5;
const POLL_MS = 1_000;

const flowKey = (stepId: string) => `external:{${stepId}}`;
/** The flow's one outcome (completed, failed or expired): whoever writes it first sends the event. */
const outcomeKey = (stepId: string) => `external:{${stepId}}:outcome`;
/** External flows by when they expire, for the expiry watch. */
const EXPIRING = 'external:expiring';
// a ContinuationContext is a bearer value: only its hash names a key
const continuationKey = (contextId: string) =>
  `continuation:${createHash('sha256').update(contextId).digest('base64url')}`;

/** 256 random bits (D13), base64url. */
const CONTEXT_ID = /^[A-Za-z0-9_-]{43}$/;

const UNKNOWN_CONTEXT = 'context_id is unknown, expired or already used, or was issued to another client';

/**
 * D13: the External Client flow's side of the service. When the flow's wallet step ends, the client is
 * told by webhook (flow.completed with a ContinuationContext, flow.failed, or flow.expired once the step
 * timed out) instead of the holder's browser going back to it. Exactly one of the three is sent per flow;
 * an issuance flow's wallet may then tell what became of the credential (credential.accepted or
 * credential.failed, at most one per flow).
 */
export class ExternalFlows {
  readonly #poller: Poller;
  readonly #openUntil: ((stepId: string) => Promise<number | undefined>) | undefined;
  readonly #onEnded: ((stepId: string, request: ExternalRequest, outcome: FlowEnd) => void) | undefined;

  constructor(
    private readonly store: Store,
    private readonly webhooks: WebhookQueue,
    private readonly lifetimes: { continuation: number; interaction: number },
    private readonly logger: Logger,
    opts: {
      poll?: boolean;
      /**
       * Until when (epoch ms) a step past its expiry may still end: an offer whose code the wallet
       * redeemed in time can still be issued while the wallet's access token lasts. Undefined: it cannot.
       */
      openUntil?: (stepId: string) => Promise<number | undefined>;
      /** told of each flow's one outcome once it is announced (metrics, audit) */
      onEnded?: (stepId: string, request: ExternalRequest, outcome: FlowEnd) => void;
    } = {},
  ) {
    this.#openUntil = opts.openUntil;
    this.#onEnded = opts.onEnded;
    this.#poller = new Poller(() => this.#expireDue(), POLL_MS, opts.poll !== false);
  }

  /** The flow's wallet step has started: remember its request until it can no longer end, and watch its expiry. */
  async begin(stepId: string, request: ExternalRequest, expiresAtMs: number): Promise<void> {
    const keep = this.#keepSeconds(expiresAtMs);
    await Promise.all([
      this.store.set(flowKey(stepId), request, keep),
      this.store.schedule(EXPIRING, stepId, expiresAtMs + EXPIRY_GRACE_SECONDS * 1000, keep),
    ]);
  }

  #keepSeconds(expiresAtMs: number): number {
    return Math.max(
      1,
      Math.ceil((expiresAtMs - Date.now()) / 1000) + EXPIRY_GRACE_SECONDS + this.lifetimes.interaction,
    );
  }

  /** The wallet step succeeded: a ContinuationContext for the client, and flow.completed. */
  async completed(stepId: string, claims: FlowClaims): Promise<void> {
    await this.#end(stepId, 'completed', async (request) => {
      const contextId = randomBytes(32).toString('base64url');
      const continuation: Continuation = { request, claims };
      await this.store.set(continuationKey(contextId), continuation, this.lifetimes.continuation);
      await this.#announce(request, 'flow.completed', { ContinuationContext: contextId });
    });
  }

  /**
   * The wallet step failed (wallet declined, PIN attempts used up, presentation refused): flow.failed.
   * `reported`: how the flow's end is counted (`denied`: the holder declined in the wallet).
   */
  async failed(stepId: string, description: string, reported: 'failed' | 'denied' = 'failed'): Promise<void> {
    await this.#end(
      stepId,
      'failed',
      (request) => this.#announce(request, 'flow.failed', { error: 'access_denied', error_description: description }),
      reported,
    );
  }

  /**
   * The wallet told the issuer what became of the flow's credential (OpenID4VCI 1.0 §11), after
   * flow.completed: `credential.accepted` for `credential_accepted`, `credential.failed` for
   * `credential_failure` and `credential_deleted`; `data.wallet_event` names the wallet's event and
   * `data.event_description` carries its description when it sent one. The first notification per
   * credential is announced (src/issuance/notification.ts). False when the flow is no longer kept.
   */
  async credentialNotified(
    stepId: string,
    event: 'credential_accepted' | 'credential_failure' | 'credential_deleted',
    description?: string,
  ): Promise<boolean> {
    const request = await this.store.get<ExternalRequest>(flowKey(stepId));
    if (!request) return false;
    await this.webhooks.enqueue(
      request.clientId,
      event === 'credential_accepted' ? 'credential.accepted' : 'credential.failed',
      {
        state: request.params.state,
        client_id: request.clientId,
        flow: request.kind,
        wallet_event: event,
        ...(description ? { event_description: safeErrorDescription(description) } : {}),
      },
    );
    return true;
  }

  /**
   * Decides the flow's outcome, then announces it. Should announcing fail (the store), the outcome is
   * taken back, so that the wallet's retry (an offer stays redeemable when issuing fails) announces it.
   */
  async #end(
    stepId: string,
    outcome: 'completed' | 'failed' | 'expired',
    announce: (request: ExternalRequest) => Promise<void>,
    reported: FlowEnd = outcome,
  ): Promise<void> {
    const request = await this.#decide(stepId, outcome);
    if (!request) return;
    try {
      await announce(request);
      // a watch that fails to go is harmless: the outcome is written, an expiry finds it
      await this.store.unschedule(EXPIRING, stepId).catch(() => undefined);
    } catch (err) {
      await this.store.delete(outcomeKey(stepId)).catch(() => undefined);
      throw err;
    }
    this.#onEnded?.(stepId, request, reported);
  }

  /** The expiry watch: flows whose step timed out without an outcome get flow.expired. */
  expireDue(): Promise<void> {
    return this.#poller.run();
  }

  async #expireDue(): Promise<void> {
    let due: string[];
    try {
      due = await this.store.claimDue(EXPIRING, Date.now(), 30_000, 50);
    } catch {
      return; // the store is unavailable: the next poll tries again
    }
    for (const stepId of due) {
      try {
        const later = await this.#openUntil?.(stepId);
        if (later !== undefined && later > Date.now()) {
          await this.store.schedule(EXPIRING, stepId, later + EXPIRY_GRACE_SECONDS * 1000, this.#keepSeconds(later));
          continue;
        }
        await this.#end(stepId, 'expired', (request) =>
          this.#announce(request, 'flow.expired', {
            error: 'access_denied',
            error_description: 'the wallet step expired before the wallet answered',
          }),
        );
      } catch (err) {
        this.logger.error({ err: (err as Error).message }, 'external flows: expiry watch failed');
      }
    }
  }

  /** Writes the flow's outcome once: its request when this call decided it, undefined when another outcome came first. */
  async #decide(stepId: string, outcome: 'completed' | 'failed' | 'expired'): Promise<ExternalRequest | undefined> {
    const request = await this.store.get<ExternalRequest>(flowKey(stepId));
    if (!request) return undefined;
    if (!(await this.store.setIfAbsent(outcomeKey(stepId), outcome, this.#keepSeconds(Date.now())))) return undefined;
    return request;
  }

  async #announce(request: ExternalRequest, type: string, data: Record<string, string>): Promise<void> {
    // the event's description is the client's error_description (RFC 6749 §4.1.2.1 characters, bounded)
    const described =
      data.error_description === undefined
        ? data
        : { ...data, error_description: safeErrorDescription(data.error_description) };
    await this.webhooks.enqueue(request.clientId, type, {
      state: request.params.state,
      client_id: request.clientId,
      flow: request.kind,
      ...described,
    });
  }

  /**
   * Takes a ContinuationContext for `clientId` at the authorise endpoint of `version`: single use (of
   * concurrent takers one wins), bound to its client. `check` sees it first and may refuse it; a context
   * refused, or named by another client, stays usable by its own client.
   */
  async take(
    contextId: string,
    clientId: string,
    version: string,
    check: (c: Continuation) => void,
  ): Promise<Continuation> {
    const key = CONTEXT_ID.test(contextId) ? continuationKey(contextId) : undefined;
    const found = key ? await this.store.get<Continuation>(key) : undefined;
    if (!found || found.request.clientId !== clientId || found.request.version !== version)
      throw invalidRequest(UNKNOWN_CONTEXT);
    check(found);
    const taken = await this.store.consume<Continuation>(key!);
    if (!taken) throw invalidRequest(UNKNOWN_CONTEXT);
    return taken;
  }

  close(): Promise<void> {
    return this.#poller.close();
  }
}
