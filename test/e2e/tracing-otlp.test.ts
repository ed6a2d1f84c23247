/**
 * Issue 33, traces over OTLP: the service runs as its own process, as an operator starts it, with the
 * standard variables (OTEL_TRACES_EXPORTER=otlp, OTEL_EXPORTER_OTLP_TRACES_ENDPOINT, http/json); a receiver
 * in this test collects what arrives at /v1/traces. The flow's first requests arrive with the service's
 * name; what was still buffered when SIGTERM came arrives before the process exits.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceEnv, writeServiceConfig } from '../helpers/childService.js';
import { freePort, waitFor } from '../helpers/redisServer.js';
import { makeHint, pkcePair, postForm } from '../helpers/rp.js';

// the child has its own (memory-store) config, whatever TEST_STORE says: run once, in the flows-redis project
const run = process.env.TEST_STORE === 'redis' ? describe : describe.skip;

const CLIENT = { id: 'traced-client', secret: 'traced-secret-0123456789abcdef' };
const REDIRECT = 'https://rp.example/cb';
const PIN = '5273';
const BATCH_DELAY_MS = 4_000;
const ATTRIBUTES = { FirstName: 'Grace', LastName: 'Hopper-Murray' };

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes?: { key: string; value: Record<string, unknown> }[];
  links?: { traceId: string; spanId: string; traceState?: string }[];
}
interface OtlpExport {
  resourceSpans: {
    resource: { attributes: { key: string; value: { stringValue?: string } }[] };
    scopeSpans: { spans: OtlpSpan[] }[];
  }[];
}

let receiver: Server;
const exports: { contentType?: string; body: OtlpExport; raw: string }[] = [];
let dir: string;
let base: string;
let child: ChildProcess | undefined;
let output = '';
let exited: Promise<number | null>;

const spans = () => exports.flatMap((e) => e.body.resourceSpans.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans)));
const serviceNames = () =>
  exports.flatMap((e) =>
    e.body.resourceSpans.map((r) => r.resource.attributes.find((a) => a.key === 'service.name')?.value.stringValue),
  );

run('traces over OTLP/HTTP (issue 33)', () => {
  beforeAll(async () => {
    receiver = createServer((req, res) => {
      let raw = '';
      req.setEncoding('utf8');
      req.on('data', (c) => (raw += c));
      req.on('end', () => {
        if (req.method === 'POST' && req.url === '/v1/traces')
          exports.push({ contentType: req.headers['content-type'], body: JSON.parse(raw) as OtlpExport, raw });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}/v1/traces`;

    dir = mkdtempSync(join(tmpdir(), 'vc-otlp-'));
    const port = await freePort();
    base = `http://127.0.0.1:${port}`;
    const config = writeServiceConfig(dir, { base, port, client: CLIENT, redirectUri: REDIRECT });
    const env = {
      ...serviceEnv(),
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: receiverUrl,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_SERVICE_NAME: 'vc-traced-test',
      // a batch goes out BATCH_DELAY_MS after its first span: a span ended less than that before the process
      // exits reaches the receiver only through the shutdown's flush
      OTEL_BSP_SCHEDULE_DELAY: String(BATCH_DELAY_MS),
    };
    child = spawn(process.execPath, ['--import', 'tsx', 'src/main.ts', 'serve', '--config', config], {
      cwd: process.cwd(),
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    child.stdout!.on('data', (d) => (output += d));
    child.stderr!.on('data', (d) => (output += d));
    exited = new Promise((resolve) => child!.once('exit', (code) => resolve(code)));
    await waitFor(
      'the service to answer /healthz',
      async () => (await fetch(`${base}/healthz`).catch(() => undefined))?.ok === true,
      20_000,
      100,
    );
  }, 40_000);

  afterAll(async () => {
    if (child && child.exitCode === null) child.kill('SIGKILL');
    receiver?.close();
    if (dir) rmSync(dir, { recursive: true, force: true });
  });

  let parSpan: OtlpSpan | undefined;

  it("sends the flow's spans, with the service's name, to the OTLP endpoint", async () => {
    const { challenge } = pkcePair();
    const hint = await makeHint({
      clientId: CLIENT.id,
      secret: CLIENT.secret,
      audience: base,
      claims: { ...ATTRIBUTES, PinCode: PIN },
    });
    const par = await postForm(`${base}/v2.0/oidc/par`, {
      client_id: CLIENT.id,
      client_secret: CLIENT.secret,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid issue.EmployeeBadge',
      nonce: 'n-traced',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      id_token_hint: hint,
    });
    expect(par.status).toBe(201);
    const authorize = await fetch(
      `${base}/v2.0/oidc/authorize?client_id=${CLIENT.id}&request_uri=${encodeURIComponent(par.body.request_uri)}`,
      { redirect: 'manual' },
    );
    expect(authorize.status).toBe(303);

    await waitFor(
      'the PAR and authorise spans at the receiver',
      async () => spans().some((s) => s.name === 'GET /v2.0/oidc/authorize'),
      15_000,
      100,
    );
    expect(exports[0].contentType).toMatch(/^application\/json/);
    expect(serviceNames().every((n) => n === 'vc-traced-test')).toBe(true);
    parSpan = spans().find((s) => s.name === 'POST /v2.0/oidc/par');
    expect(parSpan).toBeDefined();
    const authorizeSpan = spans().find((s) => s.name === 'GET /v2.0/oidc/authorize')!;
    // the authorise request is linked to the flow's root, the PAR request's span
    expect(authorizeSpan.links).toEqual([
      expect.objectContaining({ traceId: parSpan!.traceId, spanId: parSpan!.spanId }),
    ]);
    // store operations under the PAR request
    expect(
      spans().some(
        (s) => s.name === 'store set oidc v2 PushedAuthorizationRequest' && s.parentSpanId === parSpan!.spanId,
      ),
    ).toBe(true);
    // nothing of the flow in what was sent: the PIN, the hint, the attributes, the request_uri
    const sent = exports.map((e) => e.raw).join('\n');
    for (const secret of [hint, ATTRIBUTES.LastName, par.body.request_uri.split(':').pop(), CLIENT.secret])
      expect(sent.includes(secret)).toBe(false);
    expect(sent).not.toMatch(new RegExp(`"(stringValue|intValue)":"?${PIN}"?`));
  });

  it("exports the spans still buffered when SIGTERM stops the service, and exits 0; a caller's traceparent (sampled=00) and tracestate steer nothing (W3C Trace Context §8)", async () => {
    const traceId = '0af7651916cd43dd8448eb211c80319c';
    // ended just before SIGTERM: the batch's delay has not passed, only the shutdown's flush sends it
    const sent = Date.now();
    await (
      await fetch(`${base}/healthz`, {
        headers: { traceparent: `00-${traceId}-b7ad6b7169203331-00`, tracestate: 'vendor=caller-chosen-text' },
      })
    ).text();
    expect(child!.kill('SIGTERM')).toBe(true);
    expect(await exited).toBe(0);
    // the process ended before the batch's own delay could have sent the span
    expect(Date.now() - sent).toBeLessThan(BATCH_DELAY_MS);
    // exported although the caller said "not sampled": a root of our own trace, linked to the caller's span
    const last = spans().find((s) => s.links?.some((l) => l.traceId === traceId));
    expect(last?.name, output).toBe('GET /healthz');
    expect(last?.traceId).not.toBe(traceId);
    expect(last?.parentSpanId ?? '').toBe('');
    expect(last?.links).toEqual([expect.objectContaining({ traceId, spanId: 'b7ad6b7169203331' })]);
    // the caller's tracestate is not in anything sent
    expect(exports.map((e) => e.raw).join('\n')).not.toContain('caller-chosen-text');
  }, 30_000);
});
