import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { Redis } from 'ioredis';
import parsePrometheus, { type PrometheusFamily } from 'parse-prometheus-text-format';
import { createService, type Service } from '../../src/app.js';
import { validateConfig } from '../../src/config/load.js';
import { createLogger } from '../../src/log.js';
import { listen, type RunningServer } from '../../src/server.js';
import { Metrics } from '../../src/metrics/metrics.js';
import { RedisStore, StoreUnavailableError } from '../../src/store/redis.js';
import { testConfig, SECRETS, REDIRECT } from '../helpers/service.js';
import { testStore } from '../helpers/stores.js';
import { Browser, offerFromPage } from '../helpers/rp.js';
import { holderCompletesVerification, newWallet, pushIssuance, requestFromPage } from '../helpers/flows.js';
import { startWebhookReceiver, webhookSecret } from '../helpers/webhookReceiver.js';
import type { DevWallet } from '../../src/wallet/holder.js';

/**
 * Issue 21, metrics: the service started as an operator starts it (src/server.ts `listen`) with
 * `metrics.port: 0`, a few flows through it with real relying parties (openid-client), a real wallet and a
 * real webhook receiver, then `GET /metrics` scraped over HTTP from the metrics listener and parsed with
 * parse-prometheus-text-format: each counter moved by exactly what the flows did. Also the audit lines
 * (D17) those flows wrote.
 *
 * parse-prometheus-text-format folds every series of a histogram into one when they carry labels, so the
 * histogram's series are read from the text's `_count` lines instead (the text is still parsed whole first).
 */
const onRedis = process.env.TEST_STORE === 'redis';
const ADMIN_TOKEN = 'metrics-test-admin-token-0123456789abcdef';
const EXTERNAL = { id: 'external-rp', secret: 'external-rp-secret-0123456789' };
const PIN = '4829';
const badge = { FirstName: 'Philippa', LastName: 'Fawcett', Email: 'philippa.fawcett@example.org' };

interface Running {
  url: string;
  service: Service;
  server: RunningServer;
  lines: Record<string, unknown>[];
}

/** A free loopback port for the public listener, known before the config (its baseUrl names it). */
async function freePort(): Promise<number> {
  const probe = createServer();
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const { port } = probe.address() as AddressInfo;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  return port;
}

async function start(overrides: (base: string) => Record<string, unknown>): Promise<Running> {
  const port = await freePort();
  const config = validateConfig(testConfig(port, overrides(`http://127.0.0.1:${port}`)));
  const lines: Record<string, unknown>[] = [];
  const sink = new Writable({
    write(chunk, _enc, done) {
      for (const line of String(chunk).split('\n').filter(Boolean))
        lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  const service = await createService(
    { config, file: 'test', baseDir: process.cwd() },
    { store: await testStore(), logger: createLogger('info', sink) },
  );
  const server = await listen(service, port, '127.0.0.1');
  return { url: config.baseUrl, service, server, lines };
}

async function scrape(r: Running): Promise<{ families: PrometheusFamily[]; text: string }> {
  const res = await fetch(r.service.metrics.url!);
  expect(res.status).toBe(200);
  expect(res.headers.get('content-type')).toBe(r.service.metrics.register.contentType);
  const text = await res.text();
  return { families: parsePrometheus(text), text };
}

/** The value of the series of `name` whose labels are exactly `labels` (0 when it does not exist). */
function value(families: PrometheusFamily[], name: string, labels: Record<string, string> = {}): number {
  const family = families.find((f) => f.name === name);
  const found = family?.metrics.find((m) => {
    const have = m.labels ?? {};
    return (
      Object.keys(have).length === Object.keys(labels).length && Object.entries(labels).every(([k, v]) => have[k] === v)
    );
  });
  return Number(found?.value ?? 0);
}

/** http_request_duration_seconds' series: `route status_class` -> count. */
function histogram(text: string): Map<string, number> {
  const out = new Map<string, number>();
  for (const m of text.matchAll(
    /^http_request_duration_seconds_count\{route="([^"]*)",status_class="([^"]*)"\} (\d+)$/gm,
  ))
    out.set(`${m[1]} ${m[2]}`, Number(m[3]));
  return out;
}

let t: Running;
let expiring: Running;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
let wallet: DevWallet;
const webhook = webhookSecret();
let before: PrometheusFamily[];
/** the raw identifiers the flows used: none may appear in a label */
const identifiers: string[] = [];
let serialNumber: string;

beforeAll(async () => {
  receiver = await startWebhookReceiver(webhook);
  t = await start(() => ({
    metrics: { port: 0 },
    admin: { token: ADMIN_TOKEN },
    clients: [
      ...(testConfig(0).clients as unknown[]),
      {
        clientId: EXTERNAL.id,
        clientSecret: EXTERNAL.secret,
        redirectUris: [REDIRECT],
        pkce: 'required',
        scopes: ['EmployeeBadge', 'External'],
        webhook: { url: receiver.url, secret: webhook },
      },
    ],
  }));
  // a second deployment: client_id labels, and offers that expire in a second
  expiring = await start(() => ({ metrics: { port: 0, perClient: true }, lifetimes: { offer: 1 } }));
  wallet = await newWallet();
  before = (await scrape(t)).families;
});
afterAll(async () => {
  await t?.server.stop(1_000);
  await expiring?.server.stop(1_000);
  await receiver?.close();
});

const flows = (kind: string, version: string, outcome: string) => ({ kind, version, outcome });
const delta = (after: PrometheusFamily[], name: string, labels: Record<string, string> = {}) =>
  value(after, name, labels) - value(before, name, labels);

const rp = (base: string, discovery: string, client: { id: string; secret: string }) =>
  oidc.discovery(new URL(`${base}${discovery}`), client.id, client.secret, oidc.ClientSecretPost(client.secret), {
    execute: [oidc.allowInsecureRequests],
  });

/** The prompt page of an authorise URL, in a browser that stops at the relying party. */
async function promptOf(url: string): Promise<{ browser: Browser; final: string; html: string }> {
  const browser = new Browser(REDIRECT);
  const prompt = await browser.follow(url);
  if (!prompt.html) throw new Error(`expected the prompt page, arrived at ${prompt.final}`);
  identifiers.push(prompt.final.split('/').pop()!);
  return { browser, final: prompt.final, html: prompt.html };
}

describe('metrics (issue 21): GET /metrics on its own listener after a few flows', () => {
  it('serves the metrics on metrics.host at a port of its own, and never on the public port', async () => {
    const metricsUrl = new URL(t.service.metrics.url!);
    expect(metricsUrl.hostname).toBe('127.0.0.1');
    expect(metricsUrl.pathname).toBe('/metrics');
    expect(metricsUrl.port).not.toBe(new URL(t.url).port);
    const pub = await fetch(`${t.url}/metrics`);
    expect(pub.status).toBe(404);
    expect(await pub.text()).not.toContain('vc_flows_total');
    expect((await fetch(`${metricsUrl.origin}/other`)).status).toBe(404);
    const { families } = await scrape(t);
    // the default process metrics are there too
    expect(families.some((f) => f.name === 'process_cpu_user_seconds_total')).toBe(true);
  });

  it('counts each flow once where it ends, and the PIN failures, webhooks and rate limits', async () => {
    // an issuance (Version 2, PAR) with one wrong PIN first: completed, and one PIN failure
    const issuance = await pushIssuance(t.url, {
      clientId: 'issuer-pkce',
      secret: SECRETS.pkceIssuer,
      attributes: badge,
      pin: PIN,
      redirectUri: REDIRECT,
    });
    const prompt = await promptOf(issuance.authorizeUrl.href);
    const offer = offerFromPage(prompt.html);
    identifiers.push(new URL(new URL(offer).searchParams.get('credential_offer_uri')!).pathname.split('/').pop()!);
    await expect(wallet.receive(offer, { pin: '0000' })).rejects.toThrow('2 attempt(s) left');
    await wallet.receive(offer, { pin: PIN });
    const done = await prompt.browser.follow(`${prompt.final}/continue`);
    const tokens = await oidc.authorizationCodeGrant(issuance.config, new URL(done.final), {
      pkceCodeVerifier: issuance.verifier,
      expectedState: issuance.state,
      expectedNonce: issuance.nonce,
      idTokenExpected: true,
    });
    serialNumber = String(tokens.claims()!.SerialNumber);
    identifiers.push(serialNumber);

    // a verification (Version 2, PAR) with that credential: completed
    const verifierRp = await rp(t.url, '/v2.0/.well-known/openid-configuration', {
      id: 'other',
      secret: SECRETS.other,
    });
    const pkce = oidc.randomPKCECodeVerifier();
    const verification = await oidc.buildAuthorizationUrlWithPAR(verifierRp, {
      redirect_uri: REDIRECT,
      scope: 'openid EmployeeBadge',
      nonce: oidc.randomNonce(),
      code_challenge: await oidc.calculatePKCECodeChallenge(pkce),
      code_challenge_method: 'S256',
    });
    const verified = await holderCompletesVerification(verification.href, { redirectUri: REDIRECT, wallet });
    identifiers.push(new URL(new URL(verified.request).searchParams.get('request_uri')!).pathname.split('/').pop()!);

    // a verification (Version 1, PAR) the holder declines in the wallet (a wallet with nothing to present answers access_denied): denied
    const v1 = await rp(t.url, '/oidc/.well-known/openid-configuration', { id: 'other', secret: SECRETS.other });
    const declined = await promptOf(
      (
        await oidc.buildAuthorizationUrlWithPAR(v1, {
          redirect_uri: REDIRECT,
          scope: 'openid EmployeeBadge',
          nonce: oidc.randomNonce(),
        })
      ).href,
    );
    await expect((await newWallet()).present(requestFromPage(declined.html))).rejects.toThrow();
    const back = await declined.browser.follow(`${declined.final}/continue`);
    expect(new URL(back.final).searchParams.get('error')).toBe('access_denied');

    // an issuance whose PIN attempts run out: failed, and three PIN failures; its /continue counts nothing more
    const exhausted = await pushIssuance(t.url, {
      clientId: 'issuer-pkce',
      secret: SECRETS.pkceIssuer,
      attributes: badge,
      pin: PIN,
      redirectUri: REDIRECT,
    });
    const exhaustedPrompt = await promptOf(exhausted.authorizeUrl.href);
    const exhaustedOffer = offerFromPage(exhaustedPrompt.html);
    for (const wrong of ['1111', '2222', '3333'])
      await expect(wallet.receive(exhaustedOffer, { pin: wrong })).rejects.toThrow('invalid tx_code');
    const ended = await exhaustedPrompt.browser.follow(`${exhaustedPrompt.final}/continue`);
    expect(new URL(ended.final).searchParams.get('error')).toBe('access_denied');

    // an External Client flow (verification): counted as external, once, and its webhook delivered
    const externalRp = await rp(t.url, '/v2.0/.well-known/openid-configuration', EXTERNAL);
    const externalPkce = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const externalUrl = await oidc.buildAuthorizationUrlWithPAR(externalRp, {
      redirect_uri: REDIRECT,
      scope: 'openid EmployeeBadge External',
      state,
      nonce: oidc.randomNonce(),
      code_challenge: await oidc.calculatePKCECodeChallenge(externalPkce),
      code_challenge_method: 'S256',
    });
    const externalPrompt = await promptOf(externalUrl.href);
    expect((await wallet.present(requestFromPage(externalPrompt.html))).status).toBe(200);
    await receiver.next((h) => h.payload.data.state === state);

    // a path the service does not serve
    expect((await fetch(`${t.url}/no/such/path/${serialNumber}`)).status).toBe(404);
    // an operator's revocation through the admin API
    const revoked = await fetch(`${t.url}/admin/credentials/${serialNumber}/revoke`, {
      method: 'POST',
      headers: { authorization: `Bearer ${ADMIN_TOKEN}` },
    });
    expect(revoked.status).toBe(200);

    // the webhook's attempt is counted once the receiver's answer is in
    await expect
      .poll(
        async () =>
          value((await scrape(t)).families, 'vc_webhook_deliveries_total', { outcome: 'delivered' }) -
          value(before, 'vc_webhook_deliveries_total', { outcome: 'delivered' }),
      )
      .toBe(1);
    const after = (await scrape(t)).families;
    const expected: [Record<string, string>, number][] = [
      [flows('issuance', 'v2', 'completed'), 1],
      [flows('issuance', 'v2', 'failed'), 1],
      [flows('verification', 'v2', 'completed'), 1],
      [flows('verification', 'v1', 'denied'), 1],
      [flows('external', 'v2', 'completed'), 1],
    ];
    for (const [labels, n] of expected) expect(delta(after, 'vc_flows_total', labels), JSON.stringify(labels)).toBe(n);
    // and nothing else moved: every flow was counted exactly once
    const total = (families: PrometheusFamily[]) =>
      families.find((f) => f.name === 'vc_flows_total')!.metrics.reduce((sum, m) => sum + Number(m.value), 0);
    expect(total(after) - total(before)).toBe(5);
    expect(delta(after, 'vc_pin_failures_total')).toBe(4);
    expect(delta(after, 'vc_webhook_deliveries_total', { outcome: 'retry' })).toBe(0);
    expect(delta(after, 'vc_webhook_deliveries_total', { outcome: 'failed' })).toBe(0);
    expect(delta(after, 'vc_store_errors_total')).toBe(0);
    for (const endpoint of ['par', 'token', 'walletToken', 'credential', 'vpResponse'])
      expect(value(after, 'vc_rate_limited_total', { endpoint })).toBe(0);

    // the method the rate limits call
    t.service.metrics.rateLimited('walletToken');
    expect(value((await scrape(t)).families, 'vc_rate_limited_total', { endpoint: 'walletToken' })).toBe(1);
  });

  it('times requests by route template and status class, with no raw path or identifier as a label', async () => {
    const { families, text } = await scrape(t);
    expect(families.find((f) => f.name === 'http_request_duration_seconds')?.type).toBe('HISTOGRAM');
    const series = histogram(text);
    for (const key of [
      '/v2.0/oidc/par 2xx',
      '/oidc/par 2xx',
      '/v2.0/oidc/authorize 3xx',
      '/v2.0/oidc/authorize/:uid 3xx',
      '/interaction/v2/:uid 2xx',
      '/interaction/v1/:uid 2xx',
      '/interaction/v2/:uid/continue 3xx',
      '/wallet/offers/:id 2xx',
      '/wallet/token 2xx',
      '/wallet/token 4xx',
      '/wallet/credential 2xx',
      '/vp/request/:ref 2xx',
      '/vp/response 2xx',
      '/admin/credentials/:serial/revoke 2xx',
      'unmatched 4xx',
    ]) {
      expect(series.get(key), key).toBeGreaterThan(0);
    }
    const routes = [...new Set([...series.keys()].map((k) => k.split(' ')[0]))];
    expect(routes.length).toBeLessThan(40);
    for (const route of routes) {
      expect(route).toMatch(/^(unmatched|(\/(:[a-z]+|[A-Za-z0-9._-]+))+)$/);
      for (const id of identifiers) expect(route.includes(id), `${id} in ${route}`).toBe(false);
    }
    for (const id of identifiers) expect(text.includes(id), `${id} in the metrics`).toBe(false);
  });

  it('has no client_id label unless metrics.perClient is on', async () => {
    const { families } = await scrape(t);
    for (const m of families.find((f) => f.name === 'vc_flows_total')!.metrics)
      expect(Object.keys(m.labels ?? {}).sort()).toEqual(['kind', 'outcome', 'version']);
  });

  it('counts an expired step once, when /continue ends it, with client_id under perClient', async () => {
    const startAt = (await scrape(expiring)).families;
    const labels = { ...flows('issuance', 'v2', 'expired'), client_id: 'issuer-pkce' };
    const issuance = await pushIssuance(expiring.url, {
      clientId: 'issuer-pkce',
      secret: SECRETS.pkceIssuer,
      attributes: badge,
      pin: PIN,
      redirectUri: REDIRECT,
    });
    const prompt = await promptOf(issuance.authorizeUrl.href);
    await new Promise((resolve) => setTimeout(resolve, 2_100)); // the offer lives a second
    const ended = await prompt.browser.follow(`${prompt.final}/continue`);
    expect(new URL(ended.final).searchParams.get('error')).toBe('access_denied');
    const { families } = await scrape(expiring);
    expect(value(families, 'vc_flows_total', labels) - value(startAt, 'vc_flows_total', labels)).toBe(1);
    const flowSeries = families.find((f) => f.name === 'vc_flows_total')!.metrics;
    expect(flowSeries.every((m) => m.labels?.client_id !== undefined)).toBe(true);
    // only configured clients' ids are label values
    expect(new Set(flowSeries.map((m) => m.labels!.client_id))).toEqual(
      new Set(['issuer-pkce', 'issuer-plain', 'other']),
    );
  });

  it.runIf(onRedis)('counts the store operations that fail while Redis cannot be reached', async () => {
    const { families: startAt } = await scrape(expiring);
    (expiring.service.store as RedisStore).client.disconnect();
    expect((await fetch(`${expiring.url}/readyz`)).status).toBe(503);
    const { families } = await scrape(expiring);
    expect(value(families, 'vc_store_errors_total') - value(startAt, 'vc_store_errors_total')).toBeGreaterThanOrEqual(
      1,
    );
  });
});

describe('vc_store_errors_total', () => {
  it("moves once per store operation that fails because Redis cannot be reached, through the store's callback", async () => {
    const metrics = new Metrics({ port: undefined, host: '127.0.0.1', perClient: false });
    const store = new RedisStore(
      new Redis({
        host: '127.0.0.1',
        port: 1,
        lazyConnect: true,
        enableOfflineQueue: false,
        maxRetriesPerRequest: 0,
        retryStrategy: () => null,
      }),
      'test:',
    );
    const stop = store.onUnavailable(() => metrics.storeError());
    await expect(store.get('a')).rejects.toBeInstanceOf(StoreUnavailableError);
    await expect(store.set('b', 1, 10)).rejects.toBeInstanceOf(StoreUnavailableError);
    stop();
    await expect(store.get('c')).rejects.toBeInstanceOf(StoreUnavailableError);
    expect(value(parsePrometheus((await metrics.scrape()).body), 'vc_store_errors_total')).toBe(2);
    await store.close();
  });
});

describe('audit log (issue 21, D17)', () => {
  const audits = () => t.lines.filter((l) => typeof l.audit === 'string');

  it('writes one line per issued credential, verified or refused presentation, flow end and admin action', () => {
    const lines = audits();
    const issued = lines.filter((l) => l.audit === 'credential_issuance');
    expect(issued).toEqual([
      expect.objectContaining({
        client: 'issuer-pkce',
        flow: 'issuance',
        serialNumber,
        credentialType: 'EmployeeBadge',
        format: 'dc+sd-jwt',
        outcome: 'issued',
        at: expect.any(String),
        time: expect.any(Number),
      }),
      expect.objectContaining({
        client: 'issuer-pkce',
        flow: 'issuance',
        outcome: 'failed',
        reason: 'pin_attempts_exhausted',
      }),
    ]);
    const presentations = lines.filter((l) => l.audit === 'presentation_verification');
    expect(presentations).toEqual([
      expect.objectContaining({
        client: 'other',
        flow: 'verification',
        requestId: expect.stringMatching(/^v2\./),
        credentialTypes: ['EmployeeBadge'],
        outcome: 'completed',
      }),
      expect.objectContaining({
        client: 'other',
        flow: 'verification',
        requestId: expect.stringMatching(/^v1\./),
        outcome: 'denied',
      }),
      expect.objectContaining({ client: EXTERNAL.id, flow: 'verification', external: true, outcome: 'completed' }),
    ]);
    expect(lines.filter((l) => l.audit === 'external_flow')).toEqual([
      expect.objectContaining({ client: EXTERNAL.id, flow: 'verification', outcome: 'completed' }),
    ]);
    expect(lines.filter((l) => l.audit === 'credential_status')).toEqual([
      expect.objectContaining({ serialNumber, status: 'revoked', via: 'api' }),
    ]);
    expect(lines.filter((l) => l.audit === 'admin_action')).toEqual([
      expect.objectContaining({ action: 'revoke', serialNumber, outcome: 'done', status: 200 }),
    ]);
  });

  it('never carries an attribute value, a PIN or the admin token', () => {
    const text = JSON.stringify(audits());
    for (const secret of [...Object.values(badge), ADMIN_TOKEN, SECRETS.pkceIssuer, SECRETS.other, EXTERNAL.secret])
      expect(text.includes(secret), secret).toBe(false);
    expect(text).not.toMatch(new RegExp(`(^|[^0-9A-Za-z_-])${PIN}([^0-9A-Za-z_-]|$)`));
  });
});
