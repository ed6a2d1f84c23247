import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Middleware } from 'koa';
import { collectDefaultMetrics, Counter, Histogram, Registry } from 'prom-client';
import type { MetricsConfig, RateLimitEndpoint } from '../config/schema.js';
import { routeNamer, statusClass } from './routes.js';
import type { VersionProfile } from '../oidc/versions.js';

export type FlowKind = 'issuance' | 'verification' | 'identity' | 'external';
export type FlowVersion = VersionProfile['id'];
export type FlowOutcome = 'completed' | 'failed' | 'expired' | 'denied';
/** one webhook attempt: delivered (2xx), retry (to be tried again), failed (gave up) */
export type WebhookOutcome = 'delivered' | 'retry' | 'failed';

const KINDS: readonly FlowKind[] = ['issuance', 'verification', 'identity', 'external'];
const VERSIONS: readonly FlowVersion[] = ['v1', 'v2'];
const OUTCOMES: readonly FlowOutcome[] = ['completed', 'failed', 'expired', 'denied'];
const WEBHOOK_OUTCOMES: readonly WebhookOutcome[] = ['delivered', 'retry', 'failed'];
const RATE_LIMITED: readonly RateLimitEndpoint[] = [
  'par',
  'token',
  'userinfo',
  'walletToken',
  'credential',
  'vpResponse',
];

export interface MetricsOptions {
  /** the configured clients' ids: with `perClient`, their flow series exist from the start (at 0) */
  clients?: readonly string[];
  /** the wallet-facing issuers' paths (config walletPath, the demo's PID issuer), for the route names */
  issuerPaths?: readonly string[];
  /** the base URL's path (`/vc` for https://host/vc), which requests carry before the service's own paths */
  basePath?: string;
}

/**
 * The service's Prometheus metrics, on a registry of its own: several services may run in one
 * process (tests). Label values are from fixed sets, route templates and (only with `metrics.perClient`)
 * configured client ids: never a raw path, a secret or an attribute value (D17).
 *
 * With `metrics.port` set, `listen()` serves `GET /metrics` on a listener of its own at
 * `metrics.host:metrics.port`, never on the public port, and the process's default metrics are collected;
 * without it, nothing listens and the counters are only kept.
 */
export class Metrics {
  readonly register = new Registry();
  readonly enabled: boolean;
  readonly #config: MetricsConfig;
  readonly #flows: Counter<string>;
  readonly #duration: Histogram<'route' | 'status_class'>;
  readonly #pinFailures: Counter;
  readonly #webhooks: Counter<'outcome'>;
  readonly #storeErrors: Counter;
  readonly #rateLimited: Counter<'endpoint'>;
  /** one histogram child per route and status class: a request costs a map lookup, not a label hash */
  readonly #observers = new Map<string, { observe(value: number): void }>();
  readonly #routeOf: (path: string, status: number) => string;
  readonly #basePath: string;
  #server: Server | undefined;
  #url: string | undefined;

  constructor(config: MetricsConfig, opts: MetricsOptions = {}) {
    this.#config = config;
    this.enabled = config.port !== undefined;
    this.#routeOf = routeNamer(opts.issuerPaths);
    this.#basePath = opts.basePath ?? '';
    const registers = [this.register];
    const flowLabels = config.perClient ? ['kind', 'version', 'outcome', 'client_id'] : ['kind', 'version', 'outcome'];
    this.#flows = new Counter({
      name: 'vc_flows_total',
      help: 'Flows that ended, by kind, interface version and outcome',
      labelNames: flowLabels,
      registers,
    });
    this.#duration = new Histogram({
      name: 'http_request_duration_seconds',
      help: 'Time to answer a request on the public port, by route template and status class',
      labelNames: ['route', 'status_class'],
      registers,
    });
    this.#pinFailures = new Counter({
      name: 'vc_pin_failures_total',
      help: 'Wrong PINs (tx_code) at the wallet token endpoint',
      registers,
    });
    this.#webhooks = new Counter({
      name: 'vc_webhook_deliveries_total',
      help: 'Webhook delivery attempts, by outcome',
      labelNames: ['outcome'],
      registers,
    });
    this.#storeErrors = new Counter({
      name: 'vc_store_errors_total',
      help: 'Store operations that failed because the store was unreachable',
      registers,
    });
    this.#rateLimited = new Counter({
      name: 'vc_rate_limited_total',
      help: 'Requests refused by a rate limit, by endpoint',
      labelNames: ['endpoint'],
      registers,
    });

    // every series of a fixed label set exists from the start, so that rates and ratios have a zero to start from
    const clients = config.perClient ? (opts.clients ?? []) : [undefined];
    for (const kind of KINDS)
      for (const version of VERSIONS)
        for (const outcome of OUTCOMES)
          for (const client of clients)
            this.#flows.inc(
              client === undefined ? { kind, version, outcome } : { kind, version, outcome, client_id: client },
              0,
            );
    for (const outcome of WEBHOOK_OUTCOMES) this.#webhooks.inc({ outcome }, 0);
    for (const endpoint of RATE_LIMITED) this.#rateLimited.inc({ endpoint }, 0);
    if (this.enabled) collectDefaultMetrics({ register: this.register });
  }

  /** A flow ended (counted once per flow, where it ends: see docs/operations.md). */
  flow(kind: FlowKind, version: FlowVersion, outcome: FlowOutcome, clientId?: string): void {
    if (this.#config.perClient) this.#flows.inc({ kind, version, outcome, client_id: clientId ?? 'unknown' });
    else this.#flows.inc({ kind, version, outcome });
  }

  pinFailure(): void {
    this.#pinFailures.inc();
  }

  webhookDelivery(outcome: WebhookOutcome): void {
    this.#webhooks.inc({ outcome });
  }

  storeError(): void {
    this.#storeErrors.inc();
  }

  /** A request refused by a rate limit (src/http/rateLimits.ts). */
  rateLimited(endpoint: RateLimitEndpoint): void {
    this.#rateLimited.inc({ endpoint });
  }

  /** Observes `http_request_duration_seconds` for every request (the outermost app, after the error boundary has set the status). */
  readonly middleware: Middleware = async (ctx, next) => {
    const start = process.hrtime.bigint();
    // the path as it arrived: handlers may rewrite ctx.path on the way (the version edge does)
    const path = ctx.path;
    try {
      await next();
    } finally {
      this.#observe(path, ctx.status, Number(process.hrtime.bigint() - start) / 1e9);
    }
  };

  #observe(path: string, status: number, seconds: number): void {
    const base = this.#basePath;
    const route = !base
      ? this.#routeOf(path, status)
      : path.startsWith(`${base}/`)
        ? this.#routeOf(path.slice(base.length), status)
        : path === base
          ? this.#routeOf('/', status)
          : 'unmatched';
    const cls = statusClass(status);
    const key = `${route} ${cls}`;
    let observer = this.#observers.get(key);
    if (!observer) {
      observer = this.#duration.labels(route, cls);
      this.#observers.set(key, observer);
    }
    observer.observe(seconds);
  }

  /** The exposition text and its content type, as `GET /metrics` answers. */
  async scrape(): Promise<{ contentType: string; body: string }> {
    return { contentType: this.register.contentType, body: await this.register.metrics() };
  }

  /** Where `GET /metrics` answers once `listen()` has: `http://host:port/metrics`. */
  get url(): string | undefined {
    return this.#url;
  }

  /**
   * Serves `GET /metrics` on `metrics.host:metrics.port` (port 0: any free port; `url` says which).
   * Does nothing when metrics are off. Returns the URL.
   */
  async listen(): Promise<string | undefined> {
    if (!this.enabled || this.#server) return this.#url;
    const server = createServer((req, res) => {
      const path = (req.url ?? '').split('?')[0];
      if (path !== '/metrics' || (req.method !== 'GET' && req.method !== 'HEAD')) {
        res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found\n');
        return;
      }
      this.register.metrics().then(
        (body) =>
          res
            .writeHead(200, { 'Content-Type': this.register.contentType, 'Cache-Control': 'no-store' })
            .end(req.method === 'HEAD' ? undefined : body),
        () => res.writeHead(500).end(),
      );
    });
    server.keepAliveTimeout = 5_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#config.port, this.#config.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.#server = server;
    const { port } = server.address() as AddressInfo;
    const host = this.#config.host === '0.0.0.0' ? '127.0.0.1' : this.#config.host === '::' ? '::1' : this.#config.host;
    this.#url = `http://${host.includes(':') ? `[${host}]` : host}:${port}/metrics`;
    return this.#url;
  }

  /** Stops the listener (idempotent). */
  async close(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    this.#server = undefined;
    this.#url = undefined;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }
}
