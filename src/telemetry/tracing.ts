import { context, propagation, trace } from '@opentelemetry/api';
import { AsyncLocalStorageContextManager } from '@opentelemetry/context-async-hooks';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import {
  detectResources,
  resourceAttributesEnvDetector,
  resourceFromAttributes,
  serviceNameEnvDetector,
} from '@opentelemetry/resources';
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ConsoleSpanExporter,
  ParentBasedSampler,
  SimpleSpanProcessor,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanExporter,
} from '@opentelemetry/sdk-trace';
import { ATTR_SERVICE_NAME } from '@opentelemetry/semantic-conventions';
import { startOutboundSpans } from './outbound.js';

/**
 * Traces, off by default. They start only when the standard OTEL_* variables ask for them
 * (`tracingWanted`); otherwise nothing here is created, no tracer provider is registered, and the service's
 * few calls into the API (`trace.getTracer`, `linkToFlow`) meet the API's no-op tracer or return at once.
 */

export const DEFAULT_SERVICE_NAME = 'vc-oidc-provider';
/** The tracer's name (the instrumentation scope every span of this service carries). */
export const TRACER_NAME = 'vc-oidc-provider';

type Env = Record<string, string | undefined>;

export interface Tracing {
  /** exports what is still buffered, then stops; the global provider is unregistered */
  shutdown(): Promise<void>;
  forceFlush(): Promise<void>;
  /** what an operator reads at start-up: where spans go (never a header or a token) */
  readonly description: string;
}

let running: Tracing | undefined;

/** Whether tracing was started in this process: the switch the app reads to install its middleware and store spans. */
export const tracingOn = (): boolean => running !== undefined;

const set = (v: string | undefined): v is string => v !== undefined && v.trim() !== '';

/**
 * The standard variables (OpenTelemetry SDK configuration): `OTEL_SDK_DISABLED=true` wins; otherwise
 * `OTEL_TRACES_EXPORTER` (`otlp`, `console`, `none`) decides, and without it an OTLP endpoint
 * (`OTEL_EXPORTER_OTLP_ENDPOINT` or `OTEL_EXPORTER_OTLP_TRACES_ENDPOINT`) turns OTLP on. Nothing set: off.
 */
export function tracingWanted(env: Env = process.env): 'otlp' | 'console' | undefined {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === 'true') return undefined;
  const exporters = (env.OTEL_TRACES_EXPORTER ?? '')
    .split(',')
    .map((e) => e.trim().toLowerCase())
    .filter(Boolean);
  if (exporters.length > 0) {
    if (exporters.includes('none')) return undefined;
    if (exporters.includes('otlp')) return 'otlp';
    if (exporters.includes('console')) return 'console';
    throw new Error(
      `OTEL_TRACES_EXPORTER=${exporters.join(',')}: this service exports traces with otlp (OTLP over HTTP) or console, or none`,
    );
  }
  return set(env.OTEL_EXPORTER_OTLP_ENDPOINT) || set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) ? 'otlp' : undefined;
}

/** `OTEL_TRACES_SAMPLER` and `_ARG` (the spec's names); default `parentbased_always_on`. */
export function samplerFrom(env: Env = process.env): Sampler {
  const name = (env.OTEL_TRACES_SAMPLER ?? 'parentbased_always_on').trim().toLowerCase();
  const arg = Number(env.OTEL_TRACES_SAMPLER_ARG ?? '1');
  const ratio = Number.isFinite(arg) && arg >= 0 && arg <= 1 ? arg : 1;
  switch (name) {
    case 'always_on':
      return new AlwaysOnSampler();
    case 'always_off':
      return new AlwaysOffSampler();
    case 'traceidratio':
      return new TraceIdRatioBasedSampler(ratio);
    case 'parentbased_always_off':
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case 'parentbased_traceidratio':
      return new ParentBasedSampler({ root: new TraceIdRatioBasedSampler(ratio) });
    case 'parentbased_always_on':
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
    default:
      throw new Error(
        `OTEL_TRACES_SAMPLER=${name}: not one of always_on, always_off, traceidratio, parentbased_always_on, parentbased_always_off, parentbased_traceidratio`,
      );
  }
}

/** The batch processor's OTEL_BSP_* variables (the SDK's defaults where unset or not a positive number). */
function batchSettings(env: Env) {
  const n = (name: string) => {
    const v = Number(env[name]);
    return env[name] !== undefined && Number.isFinite(v) && v > 0 ? v : undefined;
  };
  const settings = {
    scheduledDelayMillis: n('OTEL_BSP_SCHEDULE_DELAY'),
    exportTimeoutMillis: n('OTEL_BSP_EXPORT_TIMEOUT'),
    maxQueueSize: n('OTEL_BSP_MAX_QUEUE_SIZE'),
    maxExportBatchSize: n('OTEL_BSP_MAX_EXPORT_BATCH_SIZE'),
  };
  return Object.fromEntries(Object.entries(settings).filter(([, v]) => v !== undefined));
}

export interface TracingOptions {
  /** where spans go; the env start passes OTLP's (or the console's) */
  exporter: SpanExporter;
  /** batch (the default, for a service) or export each span as it ends (tests) */
  batch?: boolean;
  env?: Env;
  description?: string;
}

/**
 * Registers a tracer provider, the async context manager and the W3C trace-context propagator globally
 * (the API's globals: once per process). The env start uses this too; tests pass their own exporter.
 */
export function startTracing(opts: TracingOptions): Tracing {
  if (running) throw new Error('tracing has already started in this process');
  const env = opts.env ?? process.env;
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES override the default name (the later resource wins a merge)
  const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: DEFAULT_SERVICE_NAME }).merge(
    detectResources({ detectors: [resourceAttributesEnvDetector, serviceNameEnvDetector] }),
  );
  const processor =
    opts.batch === false
      ? new SimpleSpanProcessor({ exporter: opts.exporter })
      : new BatchSpanProcessor({ exporter: opts.exporter, ...batchSettings(env) });
  const provider = new TracerProvider({ resource, sampler: samplerFrom(env), spanProcessors: [processor] });
  const contextManager = new AsyncLocalStorageContextManager().enable();
  context.setGlobalContextManager(contextManager);
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  const stopOutbound = startOutboundSpans();
  const handle: Tracing = {
    description: opts.description ?? 'traces: on',
    forceFlush: () => provider.forceFlush(),
    shutdown: async () => {
      if (running !== handle) return;
      running = undefined;
      stopOutbound();
      try {
        await provider.shutdown();
      } finally {
        trace.disable();
        propagation.disable();
        context.disable();
      }
    },
  };
  running = handle;
  return handle;
}

/**
 * Starts tracing when the standard variables ask for it (`tracingWanted`); undefined, having created
 * nothing, when they do not. OTLP goes over HTTP as JSON (@opentelemetry/exporter-trace-otlp-http), which
 * every OTLP/HTTP receiver (the Collector's included) accepts on the same path as protobuf; the exporter
 * reads its endpoint, headers, timeout and compression from the OTEL_EXPORTER_OTLP_* variables itself.
 */
export function startTracingFromEnv(env: Env = process.env): Tracing | undefined {
  const wanted = tracingWanted(env);
  if (!wanted) return undefined;
  if (wanted === 'console')
    return startTracing({ exporter: new ConsoleSpanExporter(), env, description: 'traces: to the console' });
  const endpoint =
    env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ??
    (set(env.OTEL_EXPORTER_OTLP_ENDPOINT)
      ? `${env.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/$/, '')}/v1/traces`
      : 'http://localhost:4318/v1/traces');
  const protocol = env.OTEL_EXPORTER_OTLP_TRACES_PROTOCOL ?? env.OTEL_EXPORTER_OTLP_PROTOCOL;
  const note =
    protocol && protocol !== 'http/json'
      ? ` (${protocol} asked: sends http/json, which OTLP/HTTP receivers accept alike)`
      : '';
  // the endpoint's origin and path only: a URL may carry credentials in its userinfo or query
  let shown = endpoint;
  try {
    const u = new URL(endpoint);
    shown = `${u.origin}${u.pathname}`;
  } catch {
    /* the exporter reports a malformed URL itself */
  }
  return startTracing({
    exporter: new OTLPTraceExporter(),
    env,
    description: `traces: OTLP over HTTP to ${shown}${note}`,
  });
}
