import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { context, SpanKind, SpanStatusCode, trace, type Span } from '@opentelemetry/api';
import { TRACER_NAME } from './tracing.js';

/**
 * A CLIENT span for every outbound HTTP request the service makes with fetch (status lists, issuer
 * metadata and keys, hint keys, webhooks, the other identity provider, logos), from Node's own undici
 * diagnostics channels: no call site changes. Only requests made while a request or job span is active
 * get one (so a test's own clients in the same process, or a background reload, do not). Named
 * `METHOD host`: never the path or query, which may carry references.
 */
interface UndiciRequest {
  origin?: string | URL;
  method?: string;
}

export function startOutboundSpans(): () => void {
  const spans = new WeakMap<object, Span>();
  const tracer = trace.getTracer(TRACER_NAME);
  const onCreate = (message: unknown) => {
    const { request } = message as { request: UndiciRequest };
    const parent = context.active();
    if (!trace.getSpan(parent)) return;
    let host = 'unknown';
    let port: number | undefined;
    try {
      const origin = new URL(String(request.origin));
      host = origin.hostname;
      port = Number(origin.port) || (origin.protocol === 'https:' ? 443 : 80);
    } catch {
      /* no origin: the span says unknown */
    }
    const method = request.method ?? 'GET';
    const attributes = {
      'http.request.method': method,
      'server.address': host,
      ...(port ? { 'server.port': port } : {}),
    };
    spans.set(request, tracer.startSpan(`${method} ${host}`, { kind: SpanKind.CLIENT, attributes }, parent));
  };
  const onHeaders = (message: unknown) => {
    const { request, response } = message as { request: object; response: { statusCode: number } };
    const span = spans.get(request);
    if (!span) return;
    spans.delete(request);
    span.setAttribute('http.response.status_code', response.statusCode);
    if (response.statusCode >= 400) span.setAttribute('error.type', String(response.statusCode));
    span.end();
  };
  const onError = (message: unknown) => {
    const { request, error } = message as { request: object; error?: { name?: string; code?: string } };
    const span = spans.get(request);
    if (!span) return;
    spans.delete(request);
    // the error's class or code, never its message (which may quote a URL)
    span.setAttribute('error.type', error?.code ?? error?.name ?? 'Error');
    span.setStatus({ code: SpanStatusCode.ERROR });
    span.end();
  };
  subscribe('undici:request:create', onCreate);
  subscribe('undici:request:headers', onHeaders);
  subscribe('undici:request:error', onError);
  return () => {
    unsubscribe('undici:request:create', onCreate);
    unsubscribe('undici:request:headers', onHeaders);
    unsubscribe('undici:request:error', onError);
  };
}
