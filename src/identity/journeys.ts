import { createHash, randomBytes } from 'node:crypto';
import type { Store } from '../store/types.js';
import { invalidRequest } from '../rules/errors.js';
import type { Say } from '../i18n/catalogues.js';
import type { VersionProfile } from '../oidc/versions.js';

/**
 * D12, VerifiedIdentity_Other: one holder's journey through the other provider. It belongs to one
 * interaction (its step id), and keeps what ending it in another browser takes: the original request's
 * parameters (a code is minted for them, as for a continued External Client flow).
 */
export interface Journey {
  stepId: string;
  version: VersionProfile['id'];
  clientId: string;
  /** the request's parameters as the provider holds them (client_id, redirect_uri, scope, state, nonce, PKCE) */
  params: Record<string, string>;
  /** Version 1 non-PAR: the token response also carries the request's state (D3) */
  tokenExtras?: Record<string, string>;
  /** epoch ms: the interaction's end, after which the journey cannot end */
  expiresAt: number;
}

/** Where a journey stands, for the holder's prompt and its /continue step. */
export type JourneyStatus =
  | { status: 'pending' | 'at_provider' | 'moved' | 'done' }
  | { status: 'failed'; message: string; say?: Say; description: string };

/** One trip to the provider: what its answer is checked against (openid-client), and which browser made it. */
export interface Login {
  state: string;
  nonce: string;
  codeVerifier: string;
  /** sha256 of the browser's binding cookie: the answer must come back to the browser that left */
  binding: string;
  /** made by a browser that continued the journey with context_id (it has no interaction of its own) */
  resumed: boolean;
}

const sha256 = (value: string) => createHash('sha256').update(value).digest('base64url');

// one hash tag per journey; a context_id (and a login's state) is a bearer value: only its hash names a key
const journeyKey = (stepId: string) => `idv:{${stepId}}`;
const statusKey = (stepId: string) => `idv:{${stepId}}:status`;
const outcomeKey = (stepId: string) => `idv:{${stepId}}:outcome`;
const loginKey = (stepId: string, state: string) => `idv:{${stepId}}:login:${sha256(state)}`;
const contextKey = (contextId: string) => `idv-context:${sha256(contextId)}`;

/** 256 random bits, base64url: a context_id (D12) */
const CONTEXT_ID = /^[A-Za-z0-9_-]{43}$/;
/** How long `failed`, `moved` and `done` stay readable after the journey's end. */
const GRACE_SECONDS = 300;

export const UNKNOWN_CONTEXT = 'context_id is unknown, expired or already used, or was issued to another client';

const secondsUntil = (ms: number) => Math.max(1, Math.ceil((ms - Date.now()) / 1000));

/** The journeys in the shared store (D14): any instance serves any step of one. */
export class Journeys {
  constructor(
    private readonly store: Store,
    private readonly lifetimes: { continuation: number },
  ) {}

  /**
   * Keeps a new journey; with `resumable`, also a context_id for continuing it in another browser, which
   * lives `lifetimes.continuation` seconds (at most as long as the journey). Returns the context_id.
   */
  async begin(journey: Journey, resumable: boolean): Promise<string | undefined> {
    const ttl = secondsUntil(journey.expiresAt);
    if (!(await this.store.setIfAbsent(journeyKey(journey.stepId), journey, ttl))) return undefined;
    const contextId = resumable ? randomBytes(32).toString('base64url') : undefined;
    await Promise.all([
      this.store.set(statusKey(journey.stepId), { status: 'pending' } satisfies JourneyStatus, ttl + GRACE_SECONDS),
      contextId && this.store.set(contextKey(contextId), journey.stepId, Math.min(this.lifetimes.continuation, ttl)),
    ]);
    return contextId;
  }

  find(stepId: string): Promise<Journey | undefined> {
    return this.store.get<Journey>(journeyKey(stepId));
  }

  /** Where the journey stands (one round trip): `expired` once it can no longer end, and the journey while it is kept. */
  async current(stepId: string): Promise<{ status: JourneyStatus | { status: 'expired' }; journey?: Journey }> {
    const [status, journey] = (await this.store.getMany([statusKey(stepId), journeyKey(stepId)])) as [
      JourneyStatus | undefined,
      Journey | undefined,
    ];
    if (status && (status.status === 'failed' || status.status === 'done' || status.status === 'moved'))
      return { status, journey };
    if (!status || !journey || journey.expiresAt <= Date.now()) return { status: { status: 'expired' }, journey };
    return { status, journey };
  }

  async status(stepId: string): Promise<JourneyStatus | { status: 'expired' }> {
    return (await this.current(stepId)).status;
  }

  /** A browser leaves for the provider: its login is kept (keyed by its state) until the journey ends. */
  async leave(journey: Journey, login: Login): Promise<void> {
    const ttl = secondsUntil(journey.expiresAt);
    const [, current] = await Promise.all([
      this.store.set(loginKey(journey.stepId, login.state), login, ttl),
      login.resumed ? undefined : this.store.get<JourneyStatus>(statusKey(journey.stepId)),
    ]);
    // the prompt says the holder is at the provider, unless another status came first
    if (current?.status === 'pending')
      await this.store.set(
        statusKey(journey.stepId),
        { status: 'at_provider' } satisfies JourneyStatus,
        ttl + GRACE_SECONDS,
      );
  }

  /** The login an answer's state names, without taking it: the answer must first prove it is this browser's. */
  findLogin(stepId: string, state: string): Promise<Login | undefined> {
    return this.store.get<Login>(loginKey(stepId, state));
  }

  /** The provider's answer names its state: the login it belongs to, once (single use). */
  takeLogin(stepId: string, state: string): Promise<Login | undefined> {
    return this.store.consume<Login>(loginKey(stepId, state));
  }

  /** The journey a context_id names, while it can be continued; undefined for any other value (an External Client flow's, D13). */
  async contextStep(contextId: string): Promise<string | undefined> {
    return CONTEXT_ID.test(contextId) ? this.store.get<string>(contextKey(contextId)) : undefined;
  }

  /**
   * Continues the journey `contextStep` named in another browser (D12): the context_id is single use (of
   * concurrent takers one wins), bound to its client and its interaction's version. `check` sees the
   * journey first and may refuse; a context refused, or named by another client, stays usable by its own
   * client. The journey is then the new browser's: its first browser can no longer end it.
   */
  async resume(
    contextId: string,
    stepId: string,
    clientId: string,
    version: string,
    check: (journey: Journey) => void,
  ): Promise<Journey> {
    const { status, journey } = await this.current(stepId);
    if (!journey || journey.clientId !== clientId || journey.version !== version) throw invalidRequest(UNKNOWN_CONTEXT);
    check(journey);
    if ((await this.store.consume<string>(contextKey(contextId))) === undefined) throw invalidRequest(UNKNOWN_CONTEXT);
    if (status.status !== 'pending' && status.status !== 'at_provider')
      throw invalidRequest('context_id: this journey has already ended; start again from the app');
    await this.store.set(
      statusKey(journey.stepId),
      { status: 'moved' } satisfies JourneyStatus,
      secondsUntil(journey.expiresAt) + GRACE_SECONDS,
    );
    return journey;
  }

  /**
   * Decides the journey's one outcome: true for the caller that ends it (done or failed), false when
   * another came first. `then` runs once the outcome is this caller's, before the status announces it
   * (the prompt reads `done` only with its claims there). A continued journey's status stays `moved`: its
   * first browser only ever hears that.
   */
  async end(journey: Journey, status: JourneyStatus, resumed: boolean, then?: () => Promise<void>): Promise<boolean> {
    const ttl = secondsUntil(journey.expiresAt) + GRACE_SECONDS;
    if (!(await this.store.setIfAbsent(outcomeKey(journey.stepId), status.status, ttl))) return false;
    await then?.();
    if (!resumed) await this.store.set(statusKey(journey.stepId), status, ttl);
    return true;
  }
}
