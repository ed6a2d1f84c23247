import { isIP } from 'node:net';
import type { Middleware } from 'koa';
import {
  RateLimiterMemory,
  RateLimiterRedis,
  RateLimiterRes,
  RLWrapperTimeouts,
  type RateLimiterAbstract,
} from 'rate-limiter-flexible';
import type { Config, RateLimitEndpoint, RateLimitsConfig } from '../config/schema.js';
import type { Store } from '../store/types.js';
import { RedisStore } from '../store/redis.js';

/** Whose budget ran out: the relying party's (`client`) or the source address's. */
export type RateLimitKind = 'client' | 'address';

/**
 * A request over one of its budgets. The error boundary (src/app.ts) answers it: 429, `Retry-After`,
 * `Cache-Control: no-store`, `{"error":"temporarily_unavailable", ...}` (docs/decisions.md, "Rate limits").
 */
export class RateLimited extends Error {
  readonly endpoint: RateLimitEndpoint;
  readonly kind: RateLimitKind;
  /** whole seconds until the budget that refused the request has room again, at least 1 */
  readonly retryAfter: number;

  constructor(endpoint: RateLimitEndpoint, kind: RateLimitKind, retryAfter: number) {
    super(`too many requests from this ${kind}; retry after ${retryAfter} seconds`);
    this.name = 'RateLimited';
    this.endpoint = endpoint;
    this.kind = kind;
    this.retryAfter = retryAfter;
  }
}

/** Who a request counts against: each one given and configured is consumed. */
export interface RateLimitSubject {
  /** the relying party whose request (or flow) it is: only once it is known (authenticated, or its flow found) */
  client?: string;
  /** the source address, `ctx.ip` (trustedForwarding in src/app.ts: X-Forwarded-For only from trustedProxies) */
  address?: string;
}

export interface RateLimitsOptions {
  /** told of every refused request, e.g. the metrics' `vc_rate_limited_total{endpoint}` */
  onLimited?: (endpoint: RateLimitEndpoint) => void;
  /** Redis: the keys' prefix (the store's, `store.keyPrefix` in the config): `<prefix>rl:<endpoint>:client:<id>` */
  keyPrefix?: string;
}

/** The Redis key prefix a store configuration gives its keys (src/store/redis.ts: a URL alone means `vc:`). */
export function storeKeyPrefix(spec: Config['store']): string {
  return typeof spec === 'object' ? spec.keyPrefix : 'vc:';
}

/**
 * The key of a source address: an IPv4 address as it is (also when written IPv4-mapped, `::ffff:a.b.c.d`),
 * an IPv6 address by its /64, which one host or one subscriber commonly holds whole (so that cycling
 * through the addresses of one's own /64 does not multiply the budget).
 */
export function addressKey(ip: string): string {
  const address = ip.split('%')[0].toLowerCase(); // an IPv6 zone (fe80::1%eth0) is not part of the address
  if (isIP(address) !== 6) return address;
  const groups = (part: string) => (part === '' ? [] : part.split(':'));
  const width = (gs: string[]) => gs.reduce((n, g) => n + (g.includes('.') ? 2 : 1), 0);
  const double = address.indexOf('::');
  const head = groups(double === -1 ? address : address.slice(0, double));
  const tail = double === -1 ? [] : groups(address.slice(double + 2));
  const full = [...head, ...Array<string>(8 - width(head) - width(tail)).fill('0'), ...tail];
  const hex = full.map((g) => (g.includes('.') ? g : Number.parseInt(g, 16).toString(16)));
  // ::ffff:a.b.c.d (or written in hex): the IPv4 address it maps
  if (hex.slice(0, 5).every((g) => g === '0') && hex[5] === 'ffff') {
    const last = hex.slice(6);
    if (last.length === 1) return last[0];
    const [hi, lo] = last.map((g) => Number.parseInt(g, 16));
    return [hi >> 8, hi & 255, lo >> 8, lo & 255].join('.');
  }
  return `${hex.slice(0, 4).join(':')}::/64`;
}

const ENDPOINTS: readonly RateLimitEndpoint[] = ['par', 'token', 'userinfo', 'walletToken', 'credential', 'vpResponse'];

/**
 * How long a request waits for Redis to count it before the instance's memory decides instead: far above
 * a healthy Redis' round trip, far below the store's 2 s command timeout, which a hung Redis would
 * otherwise add to every request on top of the handler's own.
 */
export const REDIS_WAIT_MS = 250;

/**
 * How many of a budget's points one instance reserves in Redis at a time: a sixteenth of what is left of
 * it (of the whole budget at a window's start), at most 64, at least 1. A budget of 31 points or fewer,
 * and the last 31 points of any budget, are counted in Redis request by request.
 */
export function leaseSize(points: number, counted = 0): number {
  return Math.max(1, Math.min(64, Math.floor((points - counted) / 16)));
}

/** A request's outcome at one budget: undefined when it fits, else how long until the budget has room. */
type Refusal = { ms: number } | undefined;

interface Budget {
  /** decided at once when possible (no promise): the hot path of a request */
  take(key: string): Refusal | Promise<Refusal>;
}
type Budgets = Partial<Record<RateLimitKind, Budget>>;

/** What an instance holds of a key's budget in the current window. */
interface Lease {
  /** reserved points not yet used by this instance */
  left: number;
  /** epoch ms: the window's end as Redis reported it */
  until: number;
  /** the window's count in Redis at the last reservation (this instance's and the others') */
  counted: number;
  /** the budget is used up: refused here until the window ends, without asking Redis again */
  spent: boolean;
}

/**
 * A budget served from reservations. In Redis (shared by every instance): a request that finds no reserved
 * point left asks Redis for a lease of `leaseSize` points (one `consume(key, n)` of RateLimiterRedis, one
 * atomic script), takes one and leaves the rest to the requests after it in this instance. On the memory
 * store the same leases over RateLimiterMemory keep most requests off the library's promise path. So a budget is
 * never exceeded across instances (points are counted in Redis before they are used), the flood-guard
 * defaults cost one Redis command per 64 requests instead of one per request, and near its end a budget
 * is counted request by request. What an instance reserved and did not use by the window's end (at most
 * 63 points, a sixteenth of the budget) is lost to the others for that window. One reservation per key is
 * in flight at a time; concurrent requests wait for it.
 */
class LeasedBudget implements Budget {
  readonly #leases = new Map<string, Lease>();
  readonly #reserving = new Map<string, Promise<void>>();
  #sweptAt = 0;

  constructor(
    private readonly limiter: RateLimiterAbstract,
    private readonly points: number,
  ) {}

  take(key: string): Refusal | Promise<Refusal> {
    const now = Date.now();
    const lease = this.#leases.get(key);
    const current = lease !== undefined && lease.until > now;
    if (current && lease.spent) return { ms: lease.until - now };
    if (current && lease.left > 0) {
      lease.left -= 1;
      return undefined;
    }
    const reserving = this.#reserving.get(key);
    if (reserving) return reserving.then(() => this.take(key));
    const size = leaseSize(this.points, current ? lease.counted : 0);
    const outcome = this.limiter.consume(key, size).then(
      (res) => this.#reserved(key, size, res),
      // anything but a refusal (the insurance limiter makes that unlikely): the request goes on, see RateLimits
      (res: unknown) => (res instanceof RateLimiterRes ? this.#reserved(key, size, res) : undefined),
    );
    this.#reserving.set(
      key,
      outcome.then(() => void this.#reserving.delete(key)),
    );
    return outcome;
  }

  /** Redis counted `size` more points: those within the budget are this instance's, one for this request. */
  #reserved(key: string, size: number, res: RateLimiterRes): Refusal {
    const now = Date.now();
    const granted = Math.max(0, Math.min(size, this.points - (res.consumedPoints - size)));
    if (this.#leases.size >= 1000 && now - this.#sweptAt > 1000) this.#sweep(now);
    this.#leases.set(key, {
      left: Math.max(0, granted - 1),
      until: now + res.msBeforeNext,
      counted: res.consumedPoints,
      spent: granted === 0,
    });
    return granted === 0 ? { ms: res.msBeforeNext } : undefined;
  }

  /** Leases of windows that ended (keys of addresses seen once) go. */
  #sweep(now: number): void {
    this.#sweptAt = now;
    for (const [key, lease] of this.#leases) if (lease.until <= now) this.#leases.delete(key);
  }
}

/**
 * The rate limits (docs/operations.md "Rate limits"): per endpoint, a budget per client and one per
 * source address, in rate-limiter-flexible's terms (`points` requests per `duration` seconds, a fixed window
 * that starts with the key's first request). A budget the config leaves out is no limit.
 *
 * On the Redis store the counters live in that Redis (`RateLimiterRedis` on the store's own client, keys
 * `<prefix>rl:<endpoint>:client:<client_id>` and `...:addr:<address>`), so every instance draws on the same
 * budget, through reservations (LeasedBudget); on the memory store they are the process's own
 * (`RateLimiterMemory`, also through reservations).
 *
 * Redis failing inside the limiter (unreachable, erring, or not answering within REDIS_WAIT_MS) refuses
 * nothing by itself and never turns into an error: the request is decided by an in-memory limiter of the
 * same budget in this instance (rate-limiter-flexible's `insuranceLimiter`, behind `RLWrapperTimeouts`), so
 * a flood is still held per instance, and traffic within the budget goes on to the handler, whose store
 * operations answer 503 `temporarily_unavailable` while the outage lasts (StoreUnavailableError, as
 * everywhere else). A 429 stays an answer about the client's own traffic, never about the store, and a
 * limiter fault never becomes a 500. While Redis is not connected the limiter does not try it at all
 * (`rejectIfRedisNotReady`); while it hangs, a request waits REDIS_WAIT_MS here at most.
 *
 * Cost: a request's budgets are decided together; most requests are decided from the instance's
 * reservations without Redis, and those that need a reservation need one round trip for both budgets
 * (auto-pipelined). A key whose budget is used up is refused from memory until its window ends, so a flood
 * costs Redis nothing more. At the default budgets this is 2 to 3 µs of CPU per request on either store
 * (measured); a Redis command per budget and request, as RateLimiterRedis alone does it, cost ~20 µs, a
 * tenth of an edge-stored PAR's CPU, and PAR on Redis fell below 0.9 of bare oidc-provider.
 */
export class RateLimits {
  readonly #budgets: Record<RateLimitEndpoint, Budgets>;
  readonly #onLimited?: (endpoint: RateLimitEndpoint) => void;

  constructor(config: RateLimitsConfig, store: Store, opts: RateLimitsOptions = {}) {
    this.#onLimited = opts.onLimited;
    const redis = store instanceof RedisStore ? store.client : undefined;
    const budget = (endpoint: RateLimitEndpoint, kind: RateLimitKind): Budget | undefined => {
      const configured = kind === 'client' ? config[endpoint].perClient : config[endpoint].perAddress;
      if (!configured) return undefined;
      const keyPrefix = `rl:${endpoint}:${kind === 'client' ? 'client' : 'addr'}`; // the library adds ':' and the key
      const { points, duration } = configured;
      const inMemory = new RateLimiterMemory({ keyPrefix, points, duration });
      if (!redis) return new LeasedBudget(inMemory, points);
      const shared = new RLWrapperTimeouts({
        limiter: new RateLimiterRedis({
          storeClient: redis,
          keyPrefix: `${opts.keyPrefix ?? 'vc:'}${keyPrefix}`,
          points,
          duration,
          rejectIfRedisNotReady: true,
        }),
        // on the wrapper only: a call that times out and then fails is counted once
        insuranceLimiter: inMemory,
        timeoutMs: REDIS_WAIT_MS,
      });
      return new LeasedBudget(shared, points);
    };
    this.#budgets = Object.fromEntries(
      ENDPOINTS.map((e) => [e, { client: budget(e, 'client'), address: budget(e, 'address') }]),
    ) as Record<RateLimitEndpoint, Budgets>;
  }

  /**
   * One request at `endpoint`: consumes the client's and the address's budgets (those given and configured)
   * together. Throws `RateLimited` when either is exhausted, naming the one that frees up last (both
   * were consumed: a refused request counts as well).
   */
  async consume(endpoint: RateLimitEndpoint, subject: RateLimitSubject): Promise<void> {
    const budgets = this.#budgets[endpoint];
    let client = budgets.client && subject.client ? budgets.client.take(subject.client) : undefined;
    let address = budgets.address && subject.address ? budgets.address.take(addressKey(subject.address)) : undefined;
    if (client === undefined && address === undefined) return;
    [client, address] = await Promise.all([client, address]);
    if (client === undefined && address === undefined) return;
    this.#onLimited?.(endpoint);
    const [kind, ms] =
      address === undefined || (client !== undefined && client.ms >= address.ms)
        ? (['client', client!.ms] as const)
        : (['address', address.ms] as const);
    throw new RateLimited(endpoint, kind, Math.max(1, Math.ceil(ms / 1000)));
  }
}

/**
 * In front of a handler that knows no client cheaply before its own work (the credential endpoint: the
 * access token names the flow only once the provider has looked it up): every `method path` request
 * consumes `endpoint`'s per-address budget, and the 429 goes out before that work.
 */
export function limitByAddress(
  limits: RateLimits | undefined,
  endpoint: RateLimitEndpoint,
  method: string,
  path: string,
): Middleware {
  return async (ctx, next) => {
    if (limits && ctx.method === method && ctx.path === path) await limits.consume(endpoint, { address: ctx.ip });
    return next();
  };
}
