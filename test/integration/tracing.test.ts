import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { SpanKind } from '@opentelemetry/api';
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace';
import { startTracing, type Tracing } from '../../src/telemetry/tracing.js';
import { startTestService, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { holderCompletesIssuance, holderCompletesVerification, newWallet, pushIssuance } from '../helpers/flows.js';
import type { DevWallet } from '../../src/wallet/holder.js';
import { Browser, makeHint, offerFromPage, pkcePair, postForm } from '../helpers/rp.js';
import { startWebhookReceiver, webhookSecret } from '../helpers/webhookReceiver.js';
import { waitFor } from '../helpers/redisServer.js';

/**
 * Issue 33, traces: a flow's requests come from the relying party, the holder's browser and the wallet,
 * with no traceparent between them. Each request has its own span, linked to the flow's root (the PAR
 * request's span); store operations are spans under the request that made them; and nothing a flow
 * carries (PIN, hint, attributes, codes, tokens, references) is in any span's name or attributes.
 */
const exporter = new InMemorySpanExporter();
let tracing: Tracing;
let t: TestService;
let wallet: DevWallet;

beforeAll(async () => {
  // the test seam the OTEL_* start uses too: here spans go to memory, each as it ends
  tracing = startTracing({ exporter, batch: false, env: {} });
  t = await startTestService();
  wallet = await newWallet();
});
afterAll(async () => {
  await t?.stop();
  await tracing?.shutdown();
});

const ATTRIBUTES = { FirstName: 'Augusta', LastName: 'Byron-King', Email: 'augusta.king@example.com' };
const PIN = '8642';

const key = (s: { traceId: string; spanId: string }) => `${s.traceId}/${s.spanId}`;
const serverSpans = (spans: ReadableSpan[]) => spans.filter((s) => s.kind === SpanKind.SERVER);
const linkedTo = (span: ReadableSpan, root: ReadableSpan) =>
  span.links.some((l) => key(l.context) === key(root.spanContext()));

/** Every name, attribute and link attribute of every span, and the secret values that must be in none. */
function assertNoSecrets(spans: ReadableSpan[], secrets: string[]) {
  for (const span of spans) {
    const values: unknown[] = [
      span.name,
      ...Object.values(span.attributes),
      ...span.links.flatMap((l) => Object.values(l.attributes ?? {})),
      ...span.events.map((e) => e.name),
    ];
    for (const value of values) {
      const text = String(value);
      for (const secret of secrets)
        expect(text.includes(secret), `span "${span.name}" carries a secret value`).toBe(false);
      // the PIN is short: a number equal to it, or any text that holds it
      expect(
        typeof value === 'number' ? String(value) === PIN : text.includes(PIN),
        `span "${span.name}" carries the PIN`,
      ).toBe(false);
    }
  }
}

/** The spans of one flow: every span exported after `from`, whose trace began with or after it. */
function spansSince(count: number): ReadableSpan[] {
  return exporter.getFinishedSpans().slice(count);
}

describe('traces of an issuance flow (issue 33)', () => {
  it('links every request of the flow to its PAR span, puts store spans under requests and records no PIN, hint, attribute, code or token', async () => {
    const before = exporter.getFinishedSpans().length;
    const pushed = await pushIssuance(t.url, {
      clientId: 'issuer-pkce',
      secret: SECRETS.pkceIssuer,
      attributes: ATTRIBUTES,
      pin: PIN,
      redirectUri: REDIRECT,
    });
    const { callbackUrl, offer } = await holderCompletesIssuance(pushed.authorizeUrl.href, {
      redirectUri: REDIRECT,
      wallet,
      pin: PIN,
    });
    const tokens = await oidc.authorizationCodeGrant(pushed.config, new URL(callbackUrl), {
      pkceCodeVerifier: pushed.verifier,
      expectedState: pushed.state,
      expectedNonce: pushed.nonce,
      idTokenExpected: true,
    });
    expect(tokens.claims()?.FirstName).toBe(ATTRIBUTES.FirstName);
    await tracing.forceFlush();
    const spans = spansSince(before);

    const requests = serverSpans(spans);
    const par = requests.filter((s) => s.name === 'POST /v2.0/oidc/par');
    expect(par).toHaveLength(1);
    const root = par[0];
    expect(root.attributes['vc.flow.root']).toBe(true);
    expect(root.attributes['http.response.status_code']).toBe(201);

    // every party's requests of the flow, each linked to the flow's root
    const expected = [
      'GET /v2.0/oidc/authorize', // the browser, with the request_uri
      'GET /interaction/v2/:uid', // the prompt
      'GET /wallet/offers/:id', // the wallet resolves the offer
      'POST /wallet/token', // the wallet redeems the pre-authorized code (with the PIN)
      'POST /wallet/credential', // the wallet's credential request
      'GET /interaction/v2/:uid/continue', // the browser finishes the prompt
      'GET /v2.0/oidc/authorize/:uid', // the provider's resume step
      'POST /v2.0/oidc/token', // the relying party redeems the code
    ];
    for (const name of expected) {
      const found = requests.filter((s) => s.name === name);
      expect(found.length, `a span ${name}`).toBeGreaterThan(0);
      for (const span of found) expect(linkedTo(span, root), `${name} is linked to the flow's PAR span`).toBe(true);
    }
    // none of them is linked to anything else: one flow, one root
    for (const span of requests) for (const link of span.links) expect(key(link.context)).toBe(key(root.spanContext()));

    // store operations: CLIENT spans, children of the request that made them, named by operation and key family
    const byId = new Map(spans.map((s) => [key(s.spanContext()), s]));
    const store = spans.filter((s) => s.name.startsWith('store '));
    expect(store.length).toBeGreaterThan(10);
    for (const span of store) {
      expect(span.kind).toBe(SpanKind.CLIENT);
      const parent = span.parentSpanContext && byId.get(key(span.parentSpanContext));
      expect(parent?.kind, `${span.name} is under a request`).toBe(SpanKind.SERVER);
      expect(span.spanContext().traceId).toBe(parent!.spanContext().traceId);
    }
    const names = new Set(store.map((s) => s.name));
    expect(names).toContain('store consume wallet offer'); // the credential request takes the offer
    expect(names).toContain('store set oidc v2 PushedAuthorizationRequest');
    expect([...names].some((n) => n.startsWith('store get step'))).toBe(true);

    // nothing the flow carries: the PIN, the hint, the attributes, the offer and its code, the code, the tokens, the client secret
    const preAuthorizedCode = new URL(offer).searchParams.get('credential_offer_uri') ?? offer;
    const secrets = [
      ...Object.values(ATTRIBUTES),
      new URL(pushed.authorizeUrl.href).searchParams.get('request_uri')!,
      new URL(callbackUrl).searchParams.get('code')!,
      pushed.state,
      pushed.nonce,
      pushed.verifier,
      tokens.id_token!,
      tokens.access_token,
      SECRETS.pkceIssuer,
      preAuthorizedCode.split('/').pop()!, // the offer's reference
    ];
    assertNoSecrets(spans, secrets);
    // no raw path either: route templates only
    for (const span of requests)
      expect(span.attributes['http.route']).not.toMatch(
        /offers\/[A-Za-z0-9_-]{20,}|interaction\/v2\/[A-Za-z0-9_-]{10,}/,
      );
  });

  it('starts no flow and links nothing for requests outside a flow, and names a refused request by its error code', async () => {
    const before = exporter.getFinishedSpans().length;
    const res = await fetch(`${t.url}/v2.0/oidc/par`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: 'client_id=issuer-pkce&client_secret=wrong',
    });
    expect(res.status).toBe(400);
    await (await fetch(`${t.url}/healthz`)).text();
    await tracing.forceFlush();
    const requests = serverSpans(spansSince(before));
    const par = requests.find((s) => s.name === 'POST /v2.0/oidc/par')!;
    expect(par.attributes['error.type']).toBe('unauthorised_client');
    expect(par.attributes['vc.flow.root']).toBeUndefined();
    expect(requests.every((s) => s.links.length === 0)).toBe(true);
    expect(requests.map((s) => s.name)).toContain('GET /healthz');
  });

  it("W3C Trace Context §8: a caller's traceparent is linked, not followed; sampled=00 is still traced; its tracestate is not exported", async () => {
    const before = exporter.getFinishedSpans().length;
    const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
    await (
      await fetch(`${t.url}/healthz`, {
        headers: {
          traceparent: `00-${traceId}-00f067aa0ba902b7-00`,
          tracestate: 'rojo=00f067aa0ba902b7,congo=t61rcWkgMzE',
        },
      })
    ).text();
    await tracing.forceFlush();
    const [span] = serverSpans(spansSince(before));
    // our root, in a trace of our own, sampled by our sampler
    expect(span.name).toBe('GET /healthz');
    expect(span.parentSpanContext).toBeUndefined();
    expect(span.spanContext().traceId).not.toBe(traceId);
    expect(span.spanContext().traceFlags & 1).toBe(1);
    // a link to the caller's span context, without its tracestate
    expect(span.links).toHaveLength(1);
    expect(span.links[0].context).toMatchObject({ traceId, spanId: '00f067aa0ba902b7', isRemote: true });
    expect(span.links[0].context.traceState).toBeUndefined();
    expect(span.links[0].attributes).toEqual({ 'vc.link': 'caller' });
    expect(span.spanContext().traceState).toBeUndefined();
  });

  it('a malformed traceparent is neither parent nor link', async () => {
    const before = exporter.getFinishedSpans().length;
    await (
      await fetch(`${t.url}/healthz`, {
        headers: { traceparent: '00-00000000000000000000000000000000-00f067aa0ba902b7-01' },
      })
    ).text();
    await tracing.forceFlush();
    const [span] = serverSpans(spansSince(before));
    expect(span.parentSpanContext).toBeUndefined();
    expect(span.links).toEqual([]);
  });

  it("a flow started with a caller's traceparent (sampled=00) is traced, and its records carry our trace id, not the caller's", async () => {
    const before = exporter.getFinishedSpans().length;
    const callerTrace = '0af7651916cd43dd8448eb211c80319c';
    const { challenge } = pkcePair();
    const hint = await makeHint({
      clientId: 'issuer-pkce',
      secret: SECRETS.pkceIssuer,
      audience: t.url,
      claims: { FirstName: 'Ada', LastName: 'Lovelace' },
    });
    const par = await postForm(
      `${t.url}/v2.0/oidc/par`,
      {
        client_id: 'issuer-pkce',
        client_secret: SECRETS.pkceIssuer,
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'openid issue.EmployeeBadge',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        id_token_hint: hint,
      },
      { traceparent: `00-${callerTrace}-b7ad6b7169203331-00`, tracestate: 'vendor=caller-text' },
    );
    expect(par.status).toBe(201);
    // the browser's authorise request, from another caller's trace
    const authorize = await fetch(
      `${t.url}/v2.0/oidc/authorize?client_id=issuer-pkce&request_uri=${encodeURIComponent(par.body.request_uri)}`,
      { redirect: 'manual', headers: { traceparent: `00-${callerTrace}-00f067aa0ba902b7-01` } },
    );
    expect(authorize.status).toBe(303);
    await tracing.forceFlush();
    const requests = serverSpans(spansSince(before));
    const root = requests.find((s) => s.name === 'POST /v2.0/oidc/par')!;
    expect(root.attributes['vc.flow.root']).toBe(true);
    expect(root.spanContext().traceId).not.toBe(callerTrace);
    expect(root.parentSpanContext).toBeUndefined();
    // the authorise request found the flow's root in the pushed request's record: ours
    const next = requests.find((s) => s.name === 'GET /v2.0/oidc/authorize')!;
    const flowLinks = next.links.filter((l) => l.attributes?.['vc.link'] === 'flow');
    expect(flowLinks.map((l) => key(l.context))).toEqual([key(root.spanContext())]);
    expect(next.links.filter((l) => l.attributes?.['vc.link'] === 'caller').map((l) => l.context.traceId)).toEqual([
      callerTrace,
    ]);
    // nothing of the caller's tracestate anywhere
    for (const span of requests) {
      expect(
        JSON.stringify([span.attributes, span.links.map((l) => [l.attributes, l.context.traceState])]),
      ).not.toContain('caller-text');
    }
  });
});

describe('traces of a verification flow (issue 33)', () => {
  it("links the wallet's request object and response to the flow's PAR span", async () => {
    // the wallet needs a credential to present (an issuance of its own, not looked at here)
    if (wallet.list().length === 0) {
      const pushed = await pushIssuance(t.url, {
        clientId: 'issuer-pkce',
        secret: SECRETS.pkceIssuer,
        attributes: ATTRIBUTES,
        pin: PIN,
        redirectUri: REDIRECT,
      });
      await holderCompletesIssuance(pushed.authorizeUrl.href, { redirectUri: REDIRECT, wallet, pin: PIN });
    }
    const before = exporter.getFinishedSpans().length;
    const config = await oidc.discovery(
      new URL(`${t.url}/v2.0/.well-known/openid-configuration`),
      'issuer-pkce',
      SECRETS.pkceIssuer,
      oidc.ClientSecretPost(SECRETS.pkceIssuer),
      { execute: [oidc.allowInsecureRequests] },
    );
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const url = await oidc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: REDIRECT,
      scope: 'openid EmployeeBadge',
      state,
      nonce,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const { callbackUrl, presented } = await holderCompletesVerification(url.href, { redirectUri: REDIRECT, wallet });
    expect(presented.status).toBe(200);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(callbackUrl), {
      pkceCodeVerifier: verifier,
      expectedState: state,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    await tracing.forceFlush();
    const spans = spansSince(before);
    const requests = serverSpans(spans);
    const root = requests.find((s) => s.name === 'POST /v2.0/oidc/par' && s.attributes['vc.flow.root'] === true)!;
    expect(root).toBeDefined();
    for (const name of [
      'GET /interaction/v2/:uid',
      'POST /vp/request/:ref',
      'POST /vp/response',
      'POST /v2.0/oidc/token',
    ]) {
      const found = requests.filter((s) => s.name === name);
      expect(found.length, `a span ${name}`).toBeGreaterThan(0);
      for (const span of found) expect(linkedTo(span, root), `${name} is linked to the flow's PAR span`).toBe(true);
    }
    assertNoSecrets(spans, [
      ...Object.values(ATTRIBUTES),
      tokens.id_token!,
      new URL(callbackUrl).searchParams.get('code')!,
      state,
      nonce,
    ]);
    // the status list the verifier fetched: an outbound span under the wallet's response, by method and host only
    const response = requests.find((s) => s.name === 'POST /vp/response')!;
    const outbound = spans.filter((s) => s.kind === SpanKind.CLIENT && !s.name.startsWith('store '));
    expect(outbound.length).toBeGreaterThan(0);
    for (const span of outbound) {
      expect(span.name).toBe('GET 127.0.0.1');
      expect(span.parentSpanContext?.spanId).toBe(response.spanContext().spanId);
      expect(Object.keys(span.attributes).sort()).toEqual([
        'http.request.method',
        'http.response.status_code',
        'server.address',
        'server.port',
      ]);
    }
  });
});

describe('traces of an External Client flow (issue 33)', () => {
  it("links the webhook delivery to the flow's PAR span, with its POST as a child span", async () => {
    const secret = webhookSecret();
    const receiver = await startWebhookReceiver(secret);
    const client = { id: 'traced-external', secret: 'traced-external-secret-0123456789' };
    const svc = await startTestService({
      clients: [
        {
          clientId: client.id,
          clientSecret: client.secret,
          redirectUris: [REDIRECT],
          scopes: ['issue.EmployeeBadge', 'External'],
          webhook: { url: receiver.url, secret },
        },
      ],
    });
    try {
      const before = exporter.getFinishedSpans().length;
      const { challenge } = pkcePair();
      const state = 'external-state-0123456789';
      const par = await postForm(`${svc.url}/v2.0/oidc/par`, {
        client_id: client.id,
        client_secret: client.secret,
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: 'openid issue.EmployeeBadge External',
        state,
        nonce: 'n',
        code_challenge: challenge,
        code_challenge_method: 'S256',
        id_token_hint: await makeHint({
          clientId: client.id,
          secret: client.secret,
          audience: svc.url,
          claims: { FirstName: ATTRIBUTES.FirstName, LastName: ATTRIBUTES.LastName },
        }),
      });
      expect(par.status).toBe(201);
      const prompt = await new Browser(REDIRECT).follow(
        `${svc.url}/v2.0/oidc/authorize?${new URLSearchParams({ client_id: client.id, request_uri: par.body.request_uri })}`,
      );
      await (await newWallet()).receive(offerFromPage(prompt.html!));
      const hook = await receiver.next((h) => h.payload.data.state === state && h.payload.type === 'flow.completed');
      await waitFor(
        'the delivery span',
        async () => spansSince(before).some((s) => s.name === 'webhook delivery'),
        5_000,
        20,
      );
      const spans = spansSince(before);
      const root = spans.find((s) => s.name === 'POST /v2.0/oidc/par')!;
      const delivery = spans.find((s) => s.name === 'webhook delivery')!;
      expect(linkedTo(delivery, root)).toBe(true);
      expect(delivery.parentSpanContext).toBeUndefined(); // a job: a root span of its own, linked to its flow
      const post = spans.find((s) => s.name === 'POST 127.0.0.1')!;
      expect(post.parentSpanContext?.spanId).toBe(delivery.spanContext().spanId);
      expect(
        spans.some((s) => s.name.startsWith('store ') && s.parentSpanContext?.spanId === delivery.spanContext().spanId),
      ).toBe(true);
      assertNoSecrets(spans, [
        hook.payload.data.ContinuationContext,
        state,
        secret,
        client.secret,
        ATTRIBUTES.FirstName,
      ]);
    } finally {
      await svc.stop();
      await receiver.close();
    }
  });
});
