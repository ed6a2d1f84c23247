import {
  context,
  createContextKey,
  isSpanContextValid,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
  type Link,
  type Span,
} from '@opentelemetry/api';
import { parseTraceParent } from '@opentelemetry/core';
import type { Middleware } from 'koa';
import { TRACER_NAME, tracingOn } from './tracing.js';

/**
 * The spans of requests and jobs, and how a request joins its flow (docs/decisions.md "Traces").
 *
 * A flow spans requests from several parties (the relying party's PAR and token, the holder's browser,
 * the wallet, the webhook delivery), which share no `traceparent`. The flow's root is the span of the
 * request that started it (PAR, or a non-PAR authorise); its span context, as a traceparent string, rides
 * in the records the flow already writes. Every later request of the flow gets its own span with a Link to
 * that root, added where the handler finds the flow's record.
 *
 * A caller's `traceparent` is untrusted input (W3C Trace Context §8): every request is a root span of our
 * own trace, sampled by our sampler, with a Link to the caller's span context when it sent a valid one; the
 * caller's `tracestate` is neither kept nor exported. So a caller cannot drop a flow from the traces
 * (`sampled=00`), put its trace id into the flow's records, or have its text exported under our name.
 *
 * Nothing a request carries is recorded: span names are route templates, attributes are the method, route,
 * status, the error code and the flow's kind.
 */

/** The span of the request (or job) being served: links and the flow root attach to it, whatever is active below it. */
const REQUEST_SPAN = createContextKey('vc-oidc-provider request span');

const tracer = () => trace.getTracer(TRACER_NAME);

const requestSpan = (): Span | undefined => context.active().getValue(REQUEST_SPAN) as Span | undefined;

/**
 * One SERVER span per request, named `METHOD route-template` once the answer is known (`routeOf`: the metrics'
 * templates, never a raw path: offer and request references are bearer values). Outside the error boundary,
 * so that it sees the status every answer goes out with.
 */
export function requestSpans(routeOf: (path: string, status: number) => string): Middleware {
  return async (ctx, next) => {
    // the path as it arrived: the version edge rewrites ctx.path on the way
    const path = ctx.path;
    const method = ctx.method;
    const caller = callerLink(ctx.get('traceparent'));
    const span = tracer().startSpan(
      method,
      { kind: SpanKind.SERVER, root: true, attributes: { 'http.request.method': method }, links: caller },
      ROOT_CONTEXT,
    );
    try {
      await context.with(trace.setSpan(ROOT_CONTEXT, span).setValue(REQUEST_SPAN, span), next);
    } finally {
      const route = routeOf(path, ctx.status);
      span.updateName(`${method} ${route}`);
      span.setAttribute('http.route', route);
      span.setAttribute('http.response.status_code', ctx.status);
      if (ctx.status >= 400) {
        // the spec's error code (a fixed vocabulary), never the description
        const error = (ctx.body as { error?: unknown } | undefined)?.error;
        if (typeof error === 'string' && /^[a-z_]{1,64}$/.test(error)) span.setAttribute('error.type', error);
        else span.setAttribute('error.type', String(ctx.status));
      }
      if (ctx.status >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
      span.end();
    }
  };
}

/**
 * W3C Trace Context §3.2: the caller's span context from its `traceparent`, as a Link (no `tracestate`:
 * parseTraceParent reads the one header only); none for a missing or malformed header.
 */
function callerLink(traceparent: string): Link[] {
  const caller = traceparent ? parseTraceParent(traceparent) : null;
  if (!caller || !isSpanContextValid(caller)) return [];
  return [{ context: { ...caller, isRemote: true }, attributes: { 'vc.link': 'caller' } }];
}

/**
 * Runs a background job (a webhook delivery attempt) in a root span of its own, so that its store calls and
 * outbound request are children of it, and `linkToFlow` links it to its flow. Without tracing: `fn()` alone.
 */
export async function inJobSpan<T>(name: string, fn: () => Promise<T>): Promise<T> {
  if (!tracingOn()) return fn();
  const span = tracer().startSpan(name, { kind: SpanKind.INTERNAL, root: true }, ROOT_CONTEXT);
  if (!span.isRecording()) return fn();
  try {
    return await context.with(trace.setSpan(ROOT_CONTEXT, span).setValue(REQUEST_SPAN, span), fn);
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.setAttribute('error.type', (err as Error)?.name ?? 'Error');
    throw err;
  } finally {
    span.end();
  }
}

/**
 * The current request as its flow's root: its span context as a traceparent, to keep in the flow's
 * records; undefined when tracing is off or the request is not sampled (the records then carry nothing).
 */
export function startFlow(kind?: string): string | undefined {
  if (!tracingOn()) return undefined; // off: one call and a comparison on the PAR path
  const span = requestSpan();
  if (!span?.isRecording()) return undefined;
  span.setAttribute('vc.flow.root', true);
  if (kind) span.setAttribute('vc.flow.kind', kind);
  const { traceId, spanId, traceFlags } = span.spanContext();
  return `00-${traceId}-${spanId}-0${traceFlags & 1}`;
}

function flowLink(flow: unknown) {
  if (typeof flow !== 'string') return undefined;
  const root = parseTraceParent(flow);
  return root ? { context: root, attributes: { 'vc.link': 'flow' } } : undefined;
}

const linked = new WeakMap<Span, string>();

/** The flow the current request was linked to, for a record it writes that outlives it (a webhook delivery). */
export function currentFlow(): string | undefined {
  if (!tracingOn()) return undefined;
  const span = requestSpan();
  return span && linked.get(span);
}

/**
 * Links the current request to its flow's root (`flow`: what `startFlow` returned, as a record kept it).
 * Called where a handler finds the flow's record; a request links to its flow once. Without tracing, or
 * with a record that carries no flow, it returns at once.
 */
export function linkToFlow(flow: unknown, kind?: string): void {
  if (flow === undefined || !tracingOn()) return;
  const span = requestSpan();
  if (!span?.isRecording() || linked.get(span) === flow) return;
  const link = flowLink(flow);
  if (!link) return;
  linked.set(span, flow as string);
  span.addLink(link);
  if (kind) span.setAttribute('vc.flow.kind', kind);
}
