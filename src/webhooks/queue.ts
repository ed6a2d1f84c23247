import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { Store } from '../store/types.js';
import type { ClientConfig } from '../config/schema.js';
import type { Logger } from '../log.js';
import { credentialExpiry } from '../rules/validity.js';
import { Poller } from '../store/poller.js';
import { currentFlow, inJobSpan, linkToFlow } from '../telemetry/spans.js';
import { post } from './post.js';

/** Where a client's events go, and the secrets that sign them (config: clients[].webhook). */
export interface WebhookTarget {
  url: string;
  secrets: readonly string[];
}

/** The queue's targets from the configured clients, by client id (one mapping for the service and the webhooks command). */
export function webhookTargets(clients: readonly ClientConfig[]): Map<string, WebhookTarget> {
  return new Map(
    clients.flatMap((c) =>
      c.webhook
        ? [[c.clientId, { url: c.webhook.url, secrets: c.webhook.secrets ?? [c.webhook.secret!] }] as const]
        : [],
    ),
  );
}

export interface WebhookSettings {
  /** seconds an attempt may take */
  timeout: number;
  /** seconds before the first retry */
  firstRetry: number;
  /** ISO 8601 duration: how long a delivery is retried */
  retryWindow: string;
}

/** One event for one client, and how its delivery goes. Kept in the store from before the first attempt. */
export interface Delivery {
  /** `webhook-id`: the same on every attempt, so receivers can deduplicate */
  id: string;
  clientId: string;
  type: string;
  /** the JSON body, as signed: every attempt sends these exact bytes */
  body: string;
  /** epoch ms */
  createdAt: number;
  attempts: number;
  state: 'pending' | 'delivered' | 'failed';
  /** the last attempt's HTTP status, or why it had none */
  last?: { at: number; status?: number; error?: string };
  /** epoch ms: the next attempt (pending) */
  nextAt?: number;
  /** the flow's root span context, when tracing is on: each attempt's span links to it */
  trace?: string;
}

/** How long deliveries that gave up stay listed. */
export const KEPT_FOR_MS = 7 * 86_400_000;
/** How long a delivered one is still kept (for `get`): its body holds a ContinuationContext, nobody needs it longer. */
const DELIVERED_KEPT_SECONDS = 3600;
/** Deliveries taken per poll, how often an instance polls, and the most `list` shows. */
const BATCH = 20;
const POLL_MS = 1_000;
const LIST_LIMIT = 500;

const recordKey = (id: string) => `webhook:{${id}}`;
/** pending deliveries, by their next attempt */
const DUE = 'webhooks:due';
/** deliveries that gave up, by when they did: what `list --failed` shows */
const GAVE_UP = 'webhooks:gave-up';

/**
 * D13's webhooks: delivered at least once, in the order of the Standard Webhooks specification. A
 * delivery is written to the store before its first attempt; every instance polls the store's schedule
 * and takes due deliveries with a lease (`claimDue`), so no two instances send the same attempt at once,
 * a restarted or another instance picks up what one left, and a delivery whose sender died is taken
 * again when its lease ends. 2xx is delivered, 410 stops for good, anything else is retried with
 * exponential backoff and jitter until the retry window has passed.
 */
export class WebhookQueue {
  readonly #poller: Poller;
  readonly #leaseMs: number;
  readonly #onAttempt: ((outcome: 'delivered' | 'retry' | 'failed') => void) | undefined;

  constructor(
    private readonly store: Store,
    private readonly targets: ReadonlyMap<string, WebhookTarget>,
    private readonly settings: WebhookSettings,
    private readonly logger: Logger,
    /**
     * poll: false, no periodic polling and no attempt unless `poll()` is called (a command's queue);
     * onAttempt: told how each attempt ended (metrics): delivered, retry (tried again later), failed (gave up)
     */
    opts: { poll?: boolean; onAttempt?: (outcome: 'delivered' | 'retry' | 'failed') => void } = {},
  ) {
    this.#onAttempt = opts.onAttempt;
    // an attempt ends within its timeout; the lease leaves room for the store writes after it
    this.#leaseMs = settings.timeout * 1000 * 2 + 5_000;
    this.#poller = new Poller(() => this.#pollOnce(), POLL_MS, opts.poll !== false);
  }

  #windowMs(from: number): number {
    return credentialExpiry(this.settings.retryWindow, new Date(from)).getTime() - from;
  }

  /** Seconds a pending delivery's record is kept: past its retry window, plus the time listed after it gave up. */
  #pendingSeconds(from: number): number {
    return Math.ceil((this.#windowMs(from) + KEPT_FOR_MS) / 1000);
  }

  /** Keeps an event for `clientId` and sends it soon; its `webhook-id`. */
  async enqueue(clientId: string, type: string, data: Record<string, unknown>, at = Date.now()): Promise<string> {
    const id = `msg_${randomUUID().replaceAll('-', '')}`;
    const body = JSON.stringify({ type, timestamp: new Date(at).toISOString(), data });
    const flow = currentFlow(); // the request that ended the flow was linked to it
    const delivery: Delivery = {
      id,
      clientId,
      type,
      body,
      createdAt: at,
      attempts: 0,
      state: 'pending',
      nextAt: at,
      ...(flow ? { trace: flow } : {}),
    };
    await this.store.set(recordKey(id), delivery, this.#pendingSeconds(at));
    await this.store.schedule(DUE, id, at, this.#pendingSeconds(at));
    this.#poller.kick();
    return id;
  }

  /**
   * Takes what is due and attempts it. Polls may overlap (each delivery is leased to one taker), so a
   * receiver that hangs until its timeout holds up only its own deliveries.
   */
  poll(): Promise<void> {
    return this.#poller.run();
  }

  async #pollOnce(): Promise<void> {
    let ids: string[];
    try {
      ids = await this.store.claimDue(DUE, Date.now(), this.#leaseMs, BATCH);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'webhooks: the store is unavailable; polling again');
      return;
    }
    await Promise.all(
      ids.map((id) =>
        inJobSpan('webhook delivery', () => this.#attempt(id)).catch((err: Error) =>
          this.logger.error({ webhookId: id, err: err.message }, 'webhooks: attempt failed'),
        ),
      ),
    );
  }

  async #attempt(id: string): Promise<void> {
    const delivery = await this.store.get<Delivery>(recordKey(id));
    if (!delivery || delivery.state !== 'pending') return this.store.unschedule(DUE, id);
    linkToFlow(delivery.trace);
    const target = this.targets.get(delivery.clientId);
    const started = Date.now();
    let result: { status?: number; error?: string };
    if (!target) {
      result = { error: 'the client has no webhook in the configuration' };
    } else {
      const timestamp = new Date(started);
      // one signature per secret (rotation): a receiver that knows either verifies it
      const signature = target.secrets
        .map((secret) => new Webhook(secret).sign(id, timestamp, delivery.body))
        .join(' ');
      result = await post(
        target.url,
        {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(started / 1000)),
          'webhook-signature': signature,
        },
        delivery.body,
        this.settings.timeout * 1000,
      );
    }
    const ms = Date.now() - started;
    delivery.attempts += 1;
    delivery.last = { at: started, ...result };
    const delivered = result.status !== undefined && result.status >= 200 && result.status < 300;
    const nextAt = started + this.#backoffMs(delivery.attempts);
    const gone = result.status === 410;
    const windowOver = nextAt > delivery.createdAt + this.#windowMs(delivery.createdAt);
    delivery.state = delivered ? 'delivered' : gone || windowOver || !target ? 'failed' : 'pending';
    delivery.nextAt = delivery.state === 'pending' ? nextAt : undefined;
    this.logger[delivered ? 'info' : 'warn'](
      {
        client: delivery.clientId,
        webhookId: id,
        type: delivery.type,
        attempt: delivery.attempts,
        status: result.status,
        error: result.error,
        ms,
        outcome: delivery.state,
      },
      'webhook attempt',
    );
    this.#onAttempt?.(delivery.state === 'pending' ? 'retry' : delivery.state);
    switch (delivery.state) {
      case 'pending':
        await this.store.set(recordKey(id), delivery, this.#pendingSeconds(delivery.createdAt));
        await this.store.schedule(DUE, id, nextAt, this.#pendingSeconds(delivery.createdAt));
        return;
      case 'delivered':
        await this.store.set(recordKey(id), delivery, DELIVERED_KEPT_SECONDS);
        await this.store.unschedule(DUE, id);
        return;
      case 'failed':
        await this.store.set(recordKey(id), delivery, KEPT_FOR_MS / 1000);
        await this.store.schedule(GAVE_UP, id, started, KEPT_FOR_MS / 1000);
        await this.store.unschedule(DUE, id);
        await this.#forgetOldFailures(started);
    }
  }

  /** The list of deliveries that gave up keeps 7 days: older entries (their records gone too) leave it. */
  async #forgetOldFailures(now: number): Promise<void> {
    const old = await this.store.scheduled(GAVE_UP, 0, now - KEPT_FOR_MS);
    await Promise.all(old.map((e) => this.store.unschedule(GAVE_UP, e.member)));
  }

  /** firstRetry, then about twice as late each time (±20 % jitter, so retries of many deliveries spread). */
  #backoffMs(attempts: number): number {
    const base = this.settings.firstRetry * 1000 * 2 ** (attempts - 1);
    return Math.round(base * (0.8 + Math.random() * 0.4));
  }

  /** One delivery, while it is kept (pending; failed for 7 days; delivered for an hour). */
  get(id: string): Promise<Delivery | undefined> {
    return this.store.get<Delivery>(recordKey(id));
  }

  /**
   * What an operator looks at, newest first: the pending deliveries and those that gave up in the last 7
   * days (`failed`: only the latter), at most 500.
   */
  async list(opts: { failed?: boolean } = {}): Promise<Delivery[]> {
    const now = Date.now();
    const entries = [
      ...(opts.failed ? [] : await this.store.scheduled(DUE, 0, Number.MAX_SAFE_INTEGER)),
      ...(await this.store.scheduled(GAVE_UP, now - KEPT_FOR_MS, Number.MAX_SAFE_INTEGER)),
    ];
    const ids = [...new Set(entries.map((e) => e.member))];
    const found = await Promise.all(ids.slice(-LIST_LIMIT).map((id) => this.get(id)));
    return found
      .filter((d): d is Delivery => d !== undefined && (!opts.failed || d.state === 'failed'))
      .sort((a, b) => b.createdAt - a.createdAt);
  }

  /**
   * Sends a delivery that gave up (or was delivered) again, with its webhook-id and body and a fresh
   * retry window. False when it is unknown; a pending one is already being retried and is left as it is.
   */
  async resend(id: string): Promise<'queued' | 'unknown' | 'pending'> {
    const delivery = await this.get(id);
    if (!delivery) return 'unknown';
    if (delivery.state === 'pending') return 'pending';
    const now = Date.now();
    Object.assign(delivery, { state: 'pending', createdAt: now, nextAt: now, attempts: 0 });
    await this.store.set(recordKey(id), delivery, this.#pendingSeconds(now));
    await this.store.schedule(DUE, id, now, this.#pendingSeconds(now));
    await this.store.unschedule(GAVE_UP, id);
    this.#poller.kick();
    return 'queued';
  }

  /** Stops polling and waits for the attempts under way. */
  close(): Promise<void> {
    return this.#poller.close();
  }
}
