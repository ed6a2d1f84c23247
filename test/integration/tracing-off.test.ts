import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { trace } from '@opentelemetry/api';
import { startTestService, type TestService } from '../helpers/service.js';
import { testStore } from '../helpers/stores.js';
import type { Store } from '../../src/store/types.js';
import { tracingOn } from '../../src/telemetry/tracing.js';

/** Issue 33: with no OTEL_* variable the service runs as before: its own store, no request spans, no flow context in records. */
let t: TestService;
let store: Store;

beforeAll(async () => {
  store = await testStore();
  t = await startTestService({}, { store });
});
afterAll(async () => t?.stop());

describe('traces off (issue 33)', () => {
  it('uses the store it was given, unwrapped, and registers no tracer provider', async () => {
    expect(tracingOn()).toBe(false);
    expect(t.service.store).toBe(store);
    expect((await fetch(`${t.url}/healthz`)).status).toBe(200);
    expect(trace.getTracer('any').startSpan('x').isRecording()).toBe(false);
  });
});
