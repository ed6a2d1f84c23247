import { randomUUID } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import type { Store } from '../store/types.js';
import type { Logger } from '../log.js';
import { credentialExpiry } from '../issuance/validity.js';

/** Where a client's events go, and the secrets that sign them (config: clients[].webhook). */
export interface WebhookTarget {
  url: string;
  secrets: readonly string[];
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
}

/** How long deliveries stay listed after they gave up (and delivered ones, for `list`). */
export const KEPT_FOR_MS = 7 * 86_400_000;
/** The most of a receiver's answer that is read. */
const MAX_ANSWER_BYTES = 64 * 1024;
/** Deliveries taken per poll, and how often an instance polls. */
const BATCH = 20;
const POLL_MS = 1_000;

const recordKey = (id: string) => `webhook:{${id}}`;
/** due deliveries, by their next attempt */
const DUE = 'webhooks:due';
/** every delivery, by creation: what `list` shows */
const INDEX = 'webhooks:index';

/** A redirect is an answer like any other that is not 2xx: retried, never followed. */
async function post(url: string, headers: Record<string, string>, body: string, timeoutMs: number): Promise<{ status?: number; error?: string }> {
  try {
    const response = await fetch(url, { method: 'POST', headers, body, redirect: 'manual', signal: AbortSignal.timeout(timeoutMs) });
    // read at most 64 KiB of the answer, then let the connection go
    const reader = response.body?.getReader();
    let read = 0;
    while (reader && read < MAX_ANSWER_BYTES) {
      const chunk = await reader.read();
      if (chunk.done) break;
      read += chunk.value.byteLength;
    }
    await reader?.cancel().catch(() => undefined);
    return { status: response.status };
  } catch (err) {
    const e = err as Error & { cause?: { code?: string } };
    return { error: e.name === 'TimeoutError' ? `no answer within ${timeoutMs / 1000} s` : (e.cause?.code ?? e.message) };
  }
}

/**
 * D13's webhooks: delivered at least once, in the order of the Standard Webhooks specification. A
 * delivery is written to the store before its first attempt; every instance polls the store's schedule
 * and takes due deliveries with a lease (`claimDue`), so no two instances send the same attempt at once,
 * a restarted or another instance picks up what one left, and a delivery whose sender died is taken
 * again when its lease ends. 2xx is delivered, 410 stops for good, anything else is retried with
 * exponential backoff and jitter until the retry window has passed.
 */
export class WebhookQueue {
  readonly #timer: NodeJS.Timeout | undefined;
  readonly #inFlight = new Set<Promise<void>>();
  #closed = false;
  readonly #leaseMs: number;
  readonly #keepSeconds: number;

  constructor(
    private readonly store: Store,
    private readonly targets: ReadonlyMap<string, WebhookTarget>,
    private readonly settings: WebhookSettings,
    private readonly logger: Logger,
    opts: { poll?: boolean } = {},
  ) {
    // an attempt ends within its timeout; the lease leaves room for the store writes after it
    this.#leaseMs = settings.timeout * 1000 * 2 + 5_000;
    this.#keepSeconds = Math.ceil((this.#windowMs(0) + KEPT_FOR_MS) / 1000);
    if (opts.poll !== false) {
      this.#timer = setInterval(() => void this.poll(), POLL_MS);
      this.#timer.unref();
    }
  }

  #windowMs(from: number): number {
    return credentialExpiry(this.settings.retryWindow, new Date(from)).getTime() - from;
  }

  /** Keeps an event for `clientId` and sends it soon; its `webhook-id`. */
  async enqueue(clientId: string, type: string, data: Record<string, unknown>, at = Date.now()): Promise<string> {
    const id = `msg_${randomUUID().replaceAll('-', '')}`;
    const body = JSON.stringify({ type, timestamp: new Date(at).toISOString(), data });
    const delivery: Delivery = { id, clientId, type, body, createdAt: at, attempts: 0, state: 'pending', nextAt: at };
    await this.store.set(recordKey(id), delivery, this.#keepSeconds);
    await Promise.all([this.store.schedule(INDEX, id, at, this.#keepSeconds), this.store.schedule(DUE, id, at, this.#keepSeconds)]);
    queueMicrotask(() => void this.poll());
    return id;
  }

  /**
   * Takes what is due and attempts it. Polls may overlap (each delivery is leased to one taker), so a
   * receiver that hangs until its timeout holds up only its own deliveries.
   */
  poll(): Promise<void> {
    if (this.#closed) return Promise.resolve();
    const run = this.#pollOnce().finally(() => this.#inFlight.delete(run));
    this.#inFlight.add(run);
    return run;
  }

  async #pollOnce(): Promise<void> {
    let ids: string[];
    try {
      ids = await this.store.claimDue(DUE, Date.now(), this.#leaseMs, BATCH);
    } catch (err) {
      this.logger.warn({ err: (err as Error).message }, 'webhooks: the store is unavailable; polling again');
      return;
    }
    await Promise.all(ids.map((id) => this.#attempt(id).catch((err: Error) => this.logger.error({ webhookId: id, err: err.message }, 'webhooks: attempt failed'))));
  }

  async #attempt(id: string): Promise<void> {
    const delivery = await this.store.get<Delivery>(recordKey(id));
    if (!delivery || delivery.state !== 'pending') return this.store.unschedule(DUE, id);
    const target = this.targets.get(delivery.clientId);
    const started = Date.now();
    let result: { status?: number; error?: string };
    if (!target) {
      result = { error: 'the client has no webhook in the configuration' };
    } else {
      const timestamp = new Date(started);
      // one signature per secret (rotation): a receiver that knows either verifies it
      const signature = target.secrets.map((secret) => new Webhook(secret).sign(id, timestamp, delivery.body)).join(' ');
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
      { client: delivery.clientId, webhookId: id, type: delivery.type, attempt: delivery.attempts, status: result.status, error: result.error, ms, outcome: delivery.state },
      'webhook attempt',
    );
    await this.store.set(recordKey(id), delivery, this.#keepSeconds);
    await (delivery.state === 'pending' ? this.store.schedule(DUE, id, nextAt, this.#keepSeconds) : this.store.unschedule(DUE, id));
  }

  /** firstRetry, then about twice as late each time (±20 % jitter, so retries of many deliveries spread). */
  #backoffMs(attempts: number): number {
    const base = this.settings.firstRetry * 1000 * 2 ** (attempts - 1);
    return Math.round(base * (0.8 + Math.random() * 0.4));
  }

  /** Deliveries created in the last 7 days, newest first; `failed` only those that gave up. */
  async list(opts: { failed?: boolean } = {}): Promise<Delivery[]> {
    const now = Date.now();
    const entries = await this.store.scheduled(INDEX, now - KEPT_FOR_MS, now + 60_000);
    const found = await Promise.all(entries.map((e) => this.store.get<Delivery>(recordKey(e.member))));
    return found.filter((d): d is Delivery => d !== undefined && (!opts.failed || d.state === 'failed')).reverse();
  }

  /** Sends a delivery again (same webhook-id and body), with a fresh retry window; false when unknown. */
  async resend(id: string): Promise<boolean> {
    const delivery = await this.store.get<Delivery>(recordKey(id));
    if (!delivery) return false;
    const now = Date.now();
    Object.assign(delivery, { state: 'pending', createdAt: now, nextAt: now });
    await this.store.set(recordKey(id), delivery, this.#keepSeconds);
    await this.store.schedule(DUE, id, now, this.#keepSeconds);
    queueMicrotask(() => void this.poll());
    return true;
  }

  /** Stops polling and waits for the attempts under way. */
  async close(): Promise<void> {
    this.#closed = true;
    if (this.#timer) clearInterval(this.#timer);
    await Promise.all(this.#inFlight);
  }
}
