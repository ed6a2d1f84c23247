import { describe, expect, it } from 'vitest';
import { context, trace } from '@opentelemetry/api';
import { samplerFrom, startTracingFromEnv, tracingOn, tracingWanted } from '../../../src/telemetry/tracing.js';
import { keyFamily } from '../../../src/telemetry/store.js';
import { linkToFlow, startFlow } from '../../../src/telemetry/spans.js';

/** Issue 33: traces are off unless the standard OTEL_* variables ask for them. */
describe('traces are off by default (issue 33)', () => {
  it('with no OTEL_* variable, starts nothing and registers no tracer provider: spans are the no-op API', () => {
    expect(tracingWanted({})).toBeUndefined();
    expect(startTracingFromEnv({})).toBeUndefined();
    expect(tracingOn()).toBe(false);
    // the API's global provider has no SDK behind it: a span records nothing and has an invalid context
    const span = trace.getTracer('any').startSpan('x');
    expect(span.isRecording()).toBe(false);
    expect(span.spanContext().traceId).toBe('00000000000000000000000000000000');
    span.end();
    // the flow hooks the hot paths call return at once, and no record gets a flow context
    expect(startFlow()).toBeUndefined();
    expect(() => linkToFlow('00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01')).not.toThrow();
    // no context manager either: a value set for a callback is not carried into it
    const key = Symbol('k');
    expect(context.with(context.active().setValue(key, 1), () => context.active().getValue(key))).toBeUndefined();
  });

  it('reads the standard variables: an OTLP endpoint or OTEL_TRACES_EXPORTER turns it on, OTEL_SDK_DISABLED and none keep it off', () => {
    expect(tracingWanted({ OTEL_TRACES_EXPORTER: 'otlp' })).toBe('otlp');
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' })).toBe('otlp');
    expect(tracingWanted({ OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://collector:4318/v1/traces' })).toBe('otlp');
    expect(tracingWanted({ OTEL_TRACES_EXPORTER: 'console' })).toBe('console');
    expect(
      tracingWanted({ OTEL_TRACES_EXPORTER: 'none', OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318' }),
    ).toBeUndefined();
    expect(tracingWanted({ OTEL_SDK_DISABLED: 'true', OTEL_TRACES_EXPORTER: 'otlp' })).toBeUndefined();
    expect(tracingWanted({ OTEL_SERVICE_NAME: 'x', OTEL_EXPORTER_OTLP_ENDPOINT: '' })).toBeUndefined();
    expect(() => tracingWanted({ OTEL_TRACES_EXPORTER: 'zipkin' })).toThrow(
      /OTEL_TRACES_EXPORTER=zipkin: this service exports traces with otlp/,
    );
  });

  it('reads OTEL_TRACES_SAMPLER, and refuses an unknown one by name', () => {
    expect(samplerFrom({}).toString()).toMatch(/ParentBased/);
    expect(samplerFrom({ OTEL_TRACES_SAMPLER: 'traceidratio', OTEL_TRACES_SAMPLER_ARG: '0.25' }).toString()).toMatch(
      /0\.25/,
    );
    expect(() => samplerFrom({ OTEL_TRACES_SAMPLER: 'sometimes' })).toThrow(/OTEL_TRACES_SAMPLER=sometimes/);
  });
});

describe('store spans name a key by its family, never its identifiers (issue 33)', () => {
  it.each([
    ['wallet:{kR3aVb9ZqXy2mN0pLsT4uWcEhJgFdQ1oIyU7tRe5wXz}:offer', 'wallet offer'],
    ['wallet:{abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQ}:pin-attempts', 'wallet pin-attempts'],
    ['oidc:v2:PushedAuthorizationRequest:{Zk9fQ2xhYmVsc0FyZUZpbmU}', 'oidc v2 PushedAuthorizationRequest'],
    [
      'oidc:v2:PushedAuthorizationRequest:{Zk9fQ2xhYmVsc0FyZUZpbmU}:claimed:issuer-pkce',
      'oidc v2 PushedAuthorizationRequest claimed',
    ],
    ['hint:{issuer-pkce:sha256:abcdefghijklmnop}', 'hint'],
    ['jti:SomeSignersJtiValue', 'jti'],
    ['status:wallet:serial:6f1c2d3e-4b5a-6978-8a9b-0c1d2e3f4a5b', 'status serial'],
    ['continuation:abcdefghijklmnopqrstuvwxyz', 'continuation'],
    ['step:{v2.AbCdEfGhIjKlMnOp}:claims', 'step claims'],
  ])('%s is "%s"', (key, family) => {
    expect(keyFamily(key)).toBe(family);
  });
});
