/**
 * D14 (production store): Redis goes away in the middle of a flow and comes back on the same port.
 * While it is down the service fails fast and clearly: JSON endpoints answer 503
 * `temporarily_unavailable`, HTML pages a readable 503 page, /readyz 503 while /healthz stays 200; the
 * server keeps answering and queues nothing for Redis (ioredis' offline queue is off). Once Redis is
 * back, /readyz turns 200 by itself within a bounded time and a new flow succeeds.
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { makeHint, postForm, Browser } from '../helpers/rp.js';
import { completeIssuance } from '../helpers/flows.js';
import { startTestService, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { startRedis, waitFor, type RedisProcess } from '../helpers/redisServer.js';
import { createRedisStore, type RedisStore } from '../../src/store/redis.js';

// These tests start (and stop) their own redis-server whatever TEST_STORE says; vitest runs test/e2e
// once per store project, so they run only in the flows-redis project and skip the duplicate run in
// flows-memory (describe.skipIf on 'memory' would also run them under any other/unset TEST_STORE).
const run = process.env.TEST_STORE === 'redis' ? describe : describe.skip;

const PIN = '4321';
const attributes = { FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' };
const CLIENT = { id: 'issuer-pkce', secret: SECRETS.pkceIssuer };
/** an answer while Redis is down must come at least this fast (connect/command timeouts are 2 s) */
const FAIL_FAST_MS = 5_000;

let redis: RedisProcess | undefined;
let svc: TestService | undefined;
let store: RedisStore | undefined;

async function timed<T>(fn: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const start = Date.now();
  const value = await fn();
  return { value, ms: Date.now() - start };
}

async function getJson(url: string): Promise<{ status: number; body: any; headers: Headers }> {
  const res = await fetch(url, { headers: { accept: 'application/json' }, signal: AbortSignal.timeout(10_000) });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body, headers: res.headers };
}

function parParams(base: string, hint: string, challenge: string) {
  return {
    client_id: CLIENT.id,
    client_secret: CLIENT.secret,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid issue.EmployeeBadge',
    state: randomBytes(8).toString('hex'),
    nonce: randomBytes(8).toString('hex'),
    id_token_hint: hint,
    code_challenge: challenge,
    code_challenge_method: 'S256',
  };
}

/** A 503 that says what happened, as JSON (temporarily_unavailable), no stack trace. */
function expectJson503(res: { status: number; body: any; headers: Headers }, what: string) {
  expect(res.status, `${what}: ${JSON.stringify(res.body)}`).toBe(503);
  expect(res.headers.get('content-type'), what).toMatch(/^application\/json/);
  expect(res.body.error, what).toBe('temporarily_unavailable');
  expect(typeof res.body.error_description, what).toBe('string');
  expect(JSON.stringify(res.body), what).not.toMatch(/at .+\.(ts|js):\d+|ECONNREFUSED|ioredis|Stream isn't writeable/);
}

run('D14: Redis stops in the middle of a flow and comes back', () => {
  beforeAll(async () => {
    redis = await startRedis();
    const spec = { url: redis.url, keyPrefix: `out:${randomBytes(4).toString('hex')}:` };
    store = await createRedisStore(spec);
    svc = await startTestService({ store: spec }, { store });
  });
  afterAll(async () => {
    await svc?.stop();
    await redis?.destroy();
  });

  // One scenario, in steps that share its state (vitest runs them in order).
  const flow = {
    base: '',
    hint: '',
    codeVerifier: '',
    interactionUrl: '',
    secondRequestUri: '',
    browser: new Browser(REDIRECT),
  };

  it('a flow reaches the prompt page while Redis is up', async () => {
    const base = (flow.base = svc!.url);
    expect((await getJson(`${base}/readyz`)).status).toBe(200);
    flow.codeVerifier = oidc.randomPKCECodeVerifier();
    flow.hint = await makeHint({
      clientId: CLIENT.id,
      secret: CLIENT.secret,
      audience: base,
      claims: { ...attributes, PinCode: PIN },
    });
    const par = await postForm(
      `${base}/v2.0/oidc/par`,
      parParams(base, flow.hint, await oidc.calculatePKCECodeChallenge(flow.codeVerifier)),
    );
    expect(par.status, JSON.stringify(par.body)).toBe(201);
    const prompt = await flow.browser.follow(
      `${base}/v2.0/oidc/authorize?${new URLSearchParams({ client_id: CLIENT.id, request_uri: par.body.request_uri })}`,
    );
    expect(prompt.res?.status, prompt.final).toBe(200);
    expect(prompt.html).toContain('openid-credential-offer');
    flow.interactionUrl = prompt.final;

    // a second PAR, whose request_uri the browser opens while Redis is down
    const hint2 = await makeHint({
      clientId: CLIENT.id,
      secret: CLIENT.secret,
      audience: base,
      claims: { ...attributes, PinCode: PIN },
    });
    const par2 = await postForm(
      `${base}/v2.0/oidc/par`,
      parParams(base, hint2, await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier())),
    );
    expect(par2.status).toBe(201);
    flow.secondRequestUri = par2.body.request_uri;

    // ---- Redis goes away (SIGKILL, like a crash)
    await redis!.stop();
  });

  it('while Redis is down: /healthz 200, /readyz 503, both fast', async () => {
    const health = await timed(() => getJson(`${flow.base}/healthz`));
    expect(health.value).toMatchObject({ status: 200, body: { status: 'ok' } });
    const ready = await timed(() => getJson(`${flow.base}/readyz`));
    expect(ready.value).toMatchObject({ status: 503, body: { status: 'unavailable', store: 'redis' } });
    expect(ready.ms).toBeLessThan(FAIL_FAST_MS);
  });

  it('while Redis is down: JSON endpoints answer 503 temporarily_unavailable, fast', async () => {
    const { base, hint, codeVerifier } = flow;
    const jsonCalls: [string, () => Promise<{ status: number; body: any; headers: Headers }>][] = [
      ['PAR', () => postForm(`${base}/v2.0/oidc/par`, parParams(base, hint, 'x'.repeat(43)))],
      [
        'token exchange',
        () =>
          postForm(`${base}/v2.0/oidc/token`, {
            grant_type: 'authorization_code',
            client_id: CLIENT.id,
            client_secret: CLIENT.secret,
            code: 'some-code',
            redirect_uri: REDIRECT,
            code_verifier: codeVerifier,
          }),
      ],
      [
        'wallet token',
        () =>
          postForm(`${base}/wallet/token`, {
            grant_type: 'urn:ietf:params:oauth:grant-type:pre-authorized_code',
            'pre-authorized_code': 'some-code',
            tx_code: PIN,
          }),
      ],
      ['prompt status', () => getJson(`${flow.interactionUrl}/status`)],
      // behind the rate limits (on by default), which hold per instance while Redis is away and answer nothing of their own
      [
        'credential',
        () =>
          fetch(`${base}/wallet/credential`, {
            method: 'POST',
            headers: { authorization: `Bearer ${'t'.repeat(43)}`, 'content-type': 'application/json' },
            body: '{}',
          }).then(async (r) => ({ status: r.status, body: await r.json(), headers: r.headers })),
      ],
      ['OpenID4VP response', () => postForm(`${base}/vp/response`, { state: 's'.repeat(43), vp_token: '{}' })],
    ];
    for (const [what, call] of jsonCalls) {
      const { value, ms } = await timed(call);
      expectJson503(value, what);
      expect(ms, what).toBeLessThan(FAIL_FAST_MS);
    }
  });

  /** A readable 503 page for the holder's browser: HTML, says to try again, no internals. */
  async function expectHtml503(what: string, url: string) {
    const { value: res, ms } = await timed(() => flow.browser.get(url));
    const html = await res.text();
    expect(res.status, `${what}: ${html.replace(/<style[\s\S]*<\/style>/, '').slice(0, 1500)}`).toBe(503);
    expect(res.headers.get('content-type'), what).toMatch(/^text\/html/);
    expect(html, what).toMatch(/<html/i);
    expect(html, what).toMatch(/temporarily unavailable/i);
    expect(html, what).toMatch(/try again/i);
    expect(html, what).not.toMatch(/at .+\.(ts|js):\d+|ECONNREFUSED|ioredis|StoreUnavailableError/);
    expect(ms, what).toBeLessThan(FAIL_FAST_MS);
  }

  it('while Redis is down: authorise and continue show a readable 503 page', async () => {
    await expectHtml503(
      'authorise',
      `${flow.base}/v2.0/oidc/authorize?${new URLSearchParams({ client_id: CLIENT.id, request_uri: flow.secondRequestUri })}`,
    );
    await expectHtml503('continue', `${flow.interactionUrl}/continue`);
  });

  // KNOWN BUG (src/interaction/interactionResult.ts, interactionOf()): its `catch {}` swallows StoreUnavailableError
  // from interactionDetails, so while Redis is down the prompt page says "This link can no longer be used" (400)
  // and the holder abandons a flow that would go on once Redis is back. Fix: rethrow
  // StoreUnavailableError in that catch. Turn this `it.fails` into `it` when that lands.
  it('while Redis is down: the prompt page shows a readable 503 page (not "expired")', async () => {
    await expectHtml503('prompt page', flow.interactionUrl);
  });

  it('while Redis is down: the server keeps answering and queues nothing for Redis', async () => {
    const { base, hint } = flow;
    // 100 requests, 10 rounds of 10 in parallel, each answered (postForm/getJson have no retry)
    for (let round = 0; round < 10; round++) {
      const answers = await Promise.all(
        Array.from({ length: 10 }, (_, i) =>
          i % 2 ? getJson(`${base}/readyz`) : postForm(`${base}/v2.0/oidc/par`, parParams(base, hint, 'x'.repeat(43))),
        ),
      );
      expect(answers.map((a) => a.status)).toEqual(Array(10).fill(503));
    }
    // ioredis keeps nothing for later: the offline queue is off, no command waits for a reply
    const client = store!.client as unknown as { offlineQueue: { length: number }; commandQueue: { length: number } };
    expect(client.offlineQueue.length).toBe(0);
    expect(client.commandQueue.length).toBeLessThanOrEqual(1);
    expect((await getJson(`${base}/healthz`)).status).toBe(200);
  });

  it('when Redis is back on the same port, /readyz turns 200 by itself and a new flow succeeds', async () => {
    const { base } = flow;
    await redis!.start(); // empty: it keeps nothing on disk
    await waitFor(
      '/readyz to turn 200 after Redis is back',
      async () => (await getJson(`${base}/readyz`)).status === 200,
      15_000,
      100,
    );

    const config = await oidc.discovery(
      new URL(`${base}/v2.0/.well-known/openid-configuration`),
      CLIENT.id,
      CLIENT.secret,
      oidc.ClientSecretPost(CLIENT.secret),
      {
        execute: [oidc.allowInsecureRequests],
      },
    );
    const verifier = oidc.randomPKCECodeVerifier();
    const state = oidc.randomState();
    const nonce = oidc.randomNonce();
    const authorizeUrl = await oidc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: REDIRECT,
      scope: 'openid issue.EmployeeBadge',
      state,
      nonce,
      id_token_hint: await makeHint({
        clientId: CLIENT.id,
        secret: CLIENT.secret,
        audience: base,
        claims: { ...attributes, PinCode: PIN },
      }),
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const { tokens, wallet } = await completeIssuance({ config, verifier, state, nonce, authorizeUrl }, PIN);
    expect(tokens.claims()).toMatchObject({ ...attributes, nonce });
    expect(wallet.list()[0].claims).toEqual(attributes);
  });
});

/**
 * A Redis that hangs (SIGSTOP: the connection stays open, nothing answers) is the outage a lost network
 * path looks like. Requests get 503 after the command timeout (2 s), and what waits for Redis stays
 * bounded: ioredis keeps a timed-out command in its queue until a reply comes, so without
 * `socketTimeout` (src/store/redis.ts) the queue grew by one command per store call for as long as
 * Redis hung (about 5 per second of this traffic, 40+ after 8 s); with it the connection is dropped
 * after 5 s without data, the queue flushed, and the client reconnects.
 */
run('D14: Redis hangs (no answers, connection open) and resumes', () => {
  let hung: RedisProcess | undefined;
  let hsvc: TestService | undefined;
  let hstore: RedisStore | undefined;

  beforeAll(async () => {
    hung = await startRedis();
    const spec = { url: hung.url, keyPrefix: `hang:${randomBytes(4).toString('hex')}:` };
    hstore = await createRedisStore(spec);
    hsvc = await startTestService({ store: spec }, { store: hstore });
  });
  afterAll(async () => {
    hung?.resume();
    await hsvc?.stop();
    await hung?.destroy();
  });

  it('answers 503 within the command timeout, keeps its command queue bounded, and recovers', async () => {
    const base = hsvc!.url;
    const hint = await makeHint({
      clientId: CLIENT.id,
      secret: CLIENT.secret,
      audience: base,
      claims: { ...attributes, PinCode: PIN },
    });
    expect((await getJson(`${base}/readyz`)).status).toBe(200);

    hung!.pause();
    const queue = () => (hstore!.client as unknown as { commandQueue: { length: number } }).commandQueue.length;
    const answers: Promise<{ status: number; ms: number }>[] = [];
    const queueSeen: number[] = [];
    // 8 s of traffic: every 150 ms a /readyz and a PAR (55 rounds), each answer awaited at the end
    const started = Date.now();
    for (let round = 0; round < 55 && Date.now() - started < 9_000; round++) {
      for (const call of [
        () => getJson(`${base}/readyz`),
        () => postForm(`${base}/v2.0/oidc/par`, parParams(base, hint, 'x'.repeat(43))),
      ]) {
        answers.push(timed(call).then(({ value, ms }) => ({ status: value.status, ms })));
      }
      queueSeen.push(queue());
      await new Promise((r) => setTimeout(r, 150));
    }
    const done = await Promise.all(answers);
    expect(
      done.filter((a) => a.status !== 503),
      JSON.stringify(done.slice(0, 4)),
    ).toEqual([]);
    expect(Math.max(...done.map((a) => a.ms))).toBeLessThan(FAIL_FAST_MS);
    // bounded: after the first 5 s without data the connection was dropped and the queue flushed
    expect(
      queueSeen.slice(-10).every((n) => n < 15),
      JSON.stringify(queueSeen),
    ).toBe(true);
    expect(queue()).toBeLessThan(15);

    hung!.resume();
    await waitFor(
      '/readyz to turn 200 after Redis resumes',
      async () => (await getJson(`${base}/readyz`)).status === 200,
      15_000,
      100,
    );
    // a fresh hint: commands written before the hang are executed when Redis resumes, so the hint
    // used during the hang may have been recorded as used although its PAR was answered 503
    const fresh = await makeHint({
      clientId: CLIENT.id,
      secret: CLIENT.secret,
      audience: base,
      claims: { ...attributes, PinCode: PIN },
    });
    const par = await postForm(
      `${base}/v2.0/oidc/par`,
      parParams(base, fresh, await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier())),
    );
    expect(par.status, JSON.stringify(par.body)).toBe(201);
  }, 30_000);
});
