/**
 * Issue 21, rate limits, against the real app with small budgets: PAR and token per authenticated client
 * and per address, the wallet token endpoint (PIN attempts) per the offer's relying party and per address,
 * the credential endpoint per address, the OpenID4VP response endpoint per address and per the request's
 * relying party; the 429 answer; one budget across two instances on one Redis; X-Forwarded-For only from
 * a trusted proxy. On the store of the run (TEST_STORE): the memory store, or the Redis at 127.0.0.1:6379
 * under a key prefix of each service's own.
 */
import { randomBytes } from 'node:crypto';
import { decodeJwt } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { makeHint, postForm, resolveOfferLink } from '../helpers/rp.js';
import { PRE_AUTH } from '../helpers/walletIssuer.js';
import { REDIS_URL } from '../helpers/stores.js';
import { MemoryStore } from '../../src/store/memory.js';
import { createRedisStore, RedisStore } from '../../src/store/redis.js';
import { PinHasher } from '../../src/rules/pinHash.js';
import { leaseSize, RateLimited, RateLimits } from '../../src/http/rateLimits.js';
import type { RateLimitsConfig } from '../../src/config/schema.js';

const onRedis = process.env.TEST_STORE === 'redis';
/** every endpoint without budgets: each test gives only the ones it is about */
const NO_LIMITS = { par: {}, token: {}, userinfo: {}, walletToken: {}, credential: {}, vpResponse: {} };
const WINDOW = 60;
const budget = (points: number) => ({ points, duration: WINDOW });

const running: { svc: TestService; store: MemoryStore | RedisStore; prefix: string }[] = [];

/** The app with these budgets, on the run's store; `prefix` shared by instances meant to share a Redis. */
async function start(
  rateLimits: Record<string, unknown>,
  overrides: Record<string, unknown> = {},
  prefix = `test:rl:${randomBytes(6).toString('hex')}:`,
): Promise<TestService> {
  const spec = { url: REDIS_URL, keyPrefix: prefix };
  const store = onRedis ? await createRedisStore(spec) : new MemoryStore();
  const svc = await startTestService(
    { ...(onRedis ? { store: spec } : {}), rateLimits: { ...NO_LIMITS, ...rateLimits }, ...overrides },
    { store },
  );
  running.push({ svc, store, prefix });
  return svc;
}

afterAll(async () => {
  for (const { svc, store, prefix } of running) {
    if (store instanceof RedisStore) {
      const keys = await store.client.keys(`${prefix}*`);
      if (keys.length) await store.client.del(...keys);
    }
    await svc.stop();
  }
});

type Answer = Awaited<ReturnType<typeof postForm>>;

/** The 429 answer: Retry-After in whole seconds (1..window), no-store, and exactly this JSON. */
function expectLimited(res: Answer, kind: 'client' | 'address'): void {
  expect(res.status, JSON.stringify(res.body)).toBe(429);
  const retryAfter = res.headers.get('retry-after') ?? '';
  expect(retryAfter).toMatch(/^[1-9]\d*$/);
  expect(Number(retryAfter)).toBeLessThanOrEqual(WINDOW);
  expect(res.headers.get('cache-control')).toBe('no-store');
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.body).toStrictEqual({
    error: 'temporarily_unavailable',
    error_description: `too many requests from this ${kind}; retry after ${retryAfter} seconds`,
  });
}

function expectAnswered(res: Answer, status: number, error?: string): void {
  expect(res.status, JSON.stringify(res.body)).toBe(status);
  if (error) expect(res.body.error).toBe(error);
}

const CLIENTS = {
  'issuer-plain': {
    secret: SECRETS.plainIssuer,
    scope: 'openid issue.MembershipCard',
    claims: { MemberName: 'Ada Lovelace', MemberNumber: 1815 },
  },
  other: {
    secret: SECRETS.other,
    scope: 'openid issue.EmployeeBadge',
    claims: { FirstName: 'Ada', LastName: 'Lovelace' },
  },
} as const;
type ClientId = keyof typeof CLIENTS;

/** A valid Version 2 issuance PAR of the client (PKCE optional for both), or one whose secret is wrong. */
async function par(
  svc: TestService,
  clientId: ClientId | undefined,
  opts: { secret?: string; headers?: Record<string, string> } = {},
): Promise<Answer> {
  const client = CLIENTS[clientId ?? 'issuer-plain'];
  const params = {
    client_id: clientId,
    client_secret: opts.secret ?? client.secret,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: client.scope,
    nonce: randomBytes(8).toString('hex'),
    state: randomBytes(8).toString('hex'),
    id_token_hint: await makeHint({
      clientId: clientId ?? 'issuer-plain',
      secret: client.secret,
      audience: svc.url,
      claims: client.claims,
    }),
  };
  return postForm(`${svc.url}/v2.0/oidc/par`, params, opts.headers);
}

describe('PAR', () => {
  it('one client reaches its limit (429, Retry-After, the JSON error) while a second client is unaffected', async () => {
    const svc = await start({ par: { perClient: budget(3) } });
    for (let i = 0; i < 3; i++) expectAnswered(await par(svc, 'issuer-plain'), 201);
    expectLimited(await par(svc, 'issuer-plain'), 'client');
    expectLimited(await par(svc, 'issuer-plain'), 'client');
    for (let i = 0; i < 3; i++) expectAnswered(await par(svc, 'other'), 201);
    if (onRedis) {
      // in the shared Redis, under the store's prefix
      const { store, prefix } = running.find((r) => r.svc === svc)!;
      const keys = await (store as RedisStore).client.keys(`${prefix}rl:*`);
      expect(keys.sort()).toEqual([`${prefix}rl:par:client:issuer-plain`, `${prefix}rl:par:client:other`]);
    }
  });

  it("a client_id without its secret consumes nothing of that client's budget", async () => {
    const svc = await start({ par: { perClient: budget(2) } });
    for (let i = 0; i < 5; i++)
      expectAnswered(await par(svc, 'other', { secret: 'not-the-secret-0123456789' }), 400, 'unauthorised_client');
    for (let i = 0; i < 2; i++) expectAnswered(await par(svc, 'other'), 201);
    expectLimited(await par(svc, 'other'), 'client');
    // refused authentication after the budget is spent is still answered as such, not 429
    expectAnswered(await par(svc, 'other', { secret: 'not-the-secret-0123456789' }), 400, 'unauthorised_client');
  });

  it('the per-address limit counts every request: refused authentications too, whichever client', async () => {
    const svc = await start({ par: { perAddress: budget(4) } });
    expectAnswered(await par(svc, 'other', { secret: 'not-the-secret-0123456789' }), 400, 'unauthorised_client');
    expectAnswered(await par(svc, undefined), 400, 'unauthorised_client');
    expectAnswered(await postForm(`${svc.url}/v2.0/oidc/par`, 'a=1&a=2'), 400, 'invalid_request');
    expectAnswered(await par(svc, 'issuer-plain'), 201);
    expectLimited(await par(svc, 'other'), 'address');
    expectLimited(await par(svc, 'issuer-plain'), 'address');
  });
});

describe('token endpoint', () => {
  const token = (svc: TestService, path: string, clientId: ClientId, secret = CLIENTS[clientId].secret) =>
    postForm(`${svc.url}${path}`, {
      grant_type: 'authorization_code',
      code: randomBytes(16).toString('base64url'),
      redirect_uri: REDIRECT,
      client_id: clientId,
      client_secret: secret,
    });

  it('per authenticated client, one budget across both versions; another client is unaffected', async () => {
    const svc = await start({ token: { perClient: budget(2) } });
    expectAnswered(await token(svc, '/v2.0/oidc/token', 'issuer-plain'), 400, 'invalid_grant');
    expectAnswered(await token(svc, '/oidc/token', 'issuer-plain'), 400, 'invalid_grant');
    expectLimited(await token(svc, '/v2.0/oidc/token', 'issuer-plain'), 'client');
    expectLimited(await token(svc, '/oidc/token', 'issuer-plain'), 'client');
    expectAnswered(await token(svc, '/v2.0/oidc/token', 'other'), 400, 'invalid_grant');
    expectAnswered(
      await token(svc, '/v2.0/oidc/token', 'issuer-plain', 'not-the-secret-0123456789'),
      400,
      'unauthorised_client',
    );
  });

  it('per address', async () => {
    const svc = await start({ token: { perAddress: budget(2) } });
    expectAnswered(
      await token(svc, '/v2.0/oidc/token', 'issuer-plain', 'not-the-secret-0123456789'),
      400,
      'unauthorised_client',
    );
    expectAnswered(await token(svc, '/oidc/token', 'other'), 400, 'invalid_grant');
    expectLimited(await token(svc, '/v2.0/oidc/token', 'other'), 'address');
  });
});

describe('wallet token endpoint (PIN attempts)', () => {
  let offers = 0;
  /** An offer of the client's flow with a PIN no tx_code matches (hashed under another secret). */
  async function pinOffer(svc: TestService, clientId: string) {
    const stepId = `rl-step-${++offers}`;
    const { offerId, offerUri, expiresAt } = await svc.service.walletIssuer.createOffer({
      stepId,
      clientId,
      credentialType: 'EmployeeBadge',
      attributes: { FirstName: 'Ada', LastName: 'Lovelace' },
      serialNumber: `SN-rl-${offers}-${randomBytes(4).toString('hex')}`,
      credentialExpiresAt: new Date(Date.now() + 86_400_000),
      pin: new PinHasher('another-secret-0123456789abcdef').hash('1234', stepId),
    });
    const parsed = await resolveOfferLink(offerUri);
    return { offerId, expiresAt, code: parsed.grants[PRE_AUTH]['pre-authorized_code'] as string };
  }
  const guess = (svc: TestService, code: string) =>
    postForm(`${svc.url}/wallet/token`, { grant_type: PRE_AUTH, 'pre-authorized_code': code, tx_code: '0000' });

  it("per the offer's relying party: its wallets' PIN guesses stop at the budget, without costing the offer an attempt; another client's offers are unaffected", async () => {
    const svc = await start({ walletToken: { perClient: budget(3) } }, { pinAttempts: 10 });
    const [a1, a2, b] = [
      await pinOffer(svc, 'issuer-plain'),
      await pinOffer(svc, 'issuer-plain'),
      await pinOffer(svc, 'other'),
    ];
    expectAnswered(await guess(svc, a1.code), 400, 'invalid_grant');
    expectAnswered(await guess(svc, a1.code), 400, 'invalid_grant');
    expectAnswered(await guess(svc, a2.code), 400, 'invalid_grant');
    expectLimited(await guess(svc, a2.code), 'client');
    expectLimited(await guess(svc, a1.code), 'client');
    expect(await svc.service.walletIssuer.offerStatus(a2.offerId, a2.expiresAt)).toMatchObject({
      status: 'pin_retry',
      attemptsLeft: 9,
    });
    expect(await svc.service.walletIssuer.offerStatus(a1.offerId, a1.expiresAt)).toMatchObject({
      status: 'pin_retry',
      attemptsLeft: 8,
    });
    expectAnswered(await guess(svc, b.code), 400, 'invalid_grant');
  });

  it('per address, whatever the offer, an unknown code too', async () => {
    const svc = await start({ walletToken: { perAddress: budget(3) } }, { pinAttempts: 10 });
    const [a, b] = [await pinOffer(svc, 'issuer-plain'), await pinOffer(svc, 'other')];
    expectAnswered(await guess(svc, a.code), 400, 'invalid_grant');
    expectAnswered(await guess(svc, b.code), 400, 'invalid_grant');
    expectAnswered(await guess(svc, randomBytes(32).toString('base64url')), 400, 'invalid_grant');
    expectLimited(await guess(svc, b.code), 'address');
    expect(await svc.service.walletIssuer.offerStatus(b.offerId, b.expiresAt)).toMatchObject({ attemptsLeft: 9 });
  });
});

describe('credential endpoint', () => {
  it('per address, before the provider looks at the access token', async () => {
    const svc = await start({ credential: { perAddress: budget(2) } });
    const credential = async (): Promise<Answer> => {
      const res = await fetch(`${svc.url}/wallet/credential`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${randomBytes(32).toString('base64url')}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ credential_configuration_id: 'EmployeeBadge' }),
      });
      return { status: res.status, body: await res.json(), headers: res.headers };
    };
    expectAnswered(await credential(), 401);
    expectAnswered(await credential(), 401);
    expectLimited(await credential(), 'address');
  });
});

describe('OpenID4VP response endpoint', () => {
  let requests = 0;
  /** A presentation request of the client's flow, and the `kid` of its response encryption key (its Request Object, fetched as a wallet does). */
  async function vpRequest(svc: TestService, clientId: string) {
    const requestId = `rl-vp-${++requests}`;
    const { walletUri } = await svc.service.verifier.createRequest({
      requestId,
      credentialTypes: ['EmployeeBadge'],
      clientId,
    });
    const res = await fetch(new URL(walletUri).searchParams.get('request_uri')!);
    expect(res.status).toBe(200);
    const payload = decodeJwt(await res.text()) as { client_metadata: { jwks: { keys: { kid: string }[] } } };
    return { requestId, kid: payload.client_metadata.jwks.keys[0].kid };
  }
  /** A direct_post.jwt response naming the request's key (the JWE does not decrypt: the request ends). */
  const b64 = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');
  const encrypted = (svc: TestService, kid: string) =>
    postForm(`${svc.url}/vp/response`, {
      response: `${b64({ alg: 'ECDH-ES', enc: 'A128GCM', kid })}..${b64('iv')}.${b64('ct')}.${b64('tag')}`,
    });
  const plain = (svc: TestService) =>
    postForm(`${svc.url}/vp/response`, { state: randomBytes(32).toString('base64url'), vp_token: '{}' });

  it("per the request's relying party (encrypted responses, found by kid) and per address; a refused response leaves its request open", async () => {
    const svc = await start({ vpResponse: { perClient: budget(2), perAddress: budget(6) } });
    const [a1, a2, a3, b] = [
      await vpRequest(svc, 'issuer-plain'),
      await vpRequest(svc, 'issuer-plain'),
      await vpRequest(svc, 'issuer-plain'),
      await vpRequest(svc, 'other'),
    ];
    expectAnswered(await encrypted(svc, a1.kid), 400, 'invalid_request');
    expectAnswered(await encrypted(svc, a2.kid), 400, 'invalid_request');
    expectLimited(await encrypted(svc, a3.kid), 'client');
    expect((await svc.service.verifier.requestStatus(a3.requestId)).status).toBe('scanned');
    expect((await svc.service.verifier.requestStatus(a1.requestId)).status).toBe('failed');
    expectAnswered(await encrypted(svc, b.kid), 400, 'invalid_request');
    // four so far from this address, the refused one too
    expectAnswered(await plain(svc), 400, 'invalid_request');
    expectAnswered(await plain(svc), 400, 'invalid_request');
    expectLimited(await plain(svc), 'address');
  });
});

describe('across instances', () => {
  it.runIf(onRedis)('two instances on one Redis draw on one budget', async () => {
    const prefix = `test:rl:${randomBytes(6).toString('hex')}:`;
    const one = await start({ par: { perClient: budget(4) } }, {}, prefix);
    const two = await start({ par: { perClient: budget(4) } }, {}, prefix);
    expectAnswered(await par(one, 'issuer-plain'), 201);
    expectAnswered(await par(two, 'issuer-plain'), 201);
    expectAnswered(await par(one, 'issuer-plain'), 201);
    expectAnswered(await par(two, 'issuer-plain'), 201);
    expectLimited(await par(one, 'issuer-plain'), 'client');
    expectLimited(await par(two, 'issuer-plain'), 'client');
    expectAnswered(await par(two, 'other'), 201);
  });
});

describe('X-Forwarded-For', () => {
  const from = (svc: TestService, address: string) => par(svc, undefined, { headers: { 'x-forwarded-for': address } });

  it('from a trusted proxy (trustedProxies): each forwarded client address has its own budget', async () => {
    const svc = await start({ par: { perAddress: budget(2) } }, { trustedProxies: ['127.0.0.1/32'] });
    expectAnswered(await from(svc, '203.0.113.1'), 400, 'unauthorised_client');
    expectAnswered(await from(svc, '198.51.100.9, 203.0.113.1'), 400, 'unauthorised_client'); // the rightmost untrusted hop
    expectLimited(await from(svc, '203.0.113.1'), 'address');
    expectAnswered(await from(svc, '203.0.113.2'), 400, 'unauthorised_client');
  });

  it('from anyone else: ignored, the connection address counts', async () => {
    const svc = await start({ par: { perAddress: budget(2) } });
    expectAnswered(await from(svc, '203.0.113.1'), 400, 'unauthorised_client');
    expectAnswered(await from(svc, '203.0.113.2'), 400, 'unauthorised_client');
    expectLimited(await from(svc, '203.0.113.3'), 'address');
  });
});

describe.runIf(onRedis)('reservations in Redis (RateLimits on a Redis store)', () => {
  const prefix = `test:rl:${randomBytes(6).toString('hex')}:`;
  let store: RedisStore | undefined;
  const limits = (rateLimits: Partial<RateLimitsConfig>) =>
    new RateLimits({ ...NO_LIMITS, ...rateLimits } as RateLimitsConfig, store!, { keyPrefix: prefix });
  /** how many of `n` consumes, all sent at once, were let through */
  async function allowed(rl: RateLimits[], n: number, client: string): Promise<number> {
    const outcomes = await Promise.all(
      Array.from({ length: n }, (_, i) =>
        rl[i % rl.length].consume('par', { client }).then(
          () => 1,
          (err: unknown) => {
            if (err instanceof RateLimited) return 0;
            throw err;
          },
        ),
      ),
    );
    return outcomes.reduce((a: number, b) => a + b, 0);
  }
  const counted = async (client: string) => Number(await store!.client.get(`${prefix}rl:par:client:${client}`));

  beforeAll(async () => {
    store = await createRedisStore({ url: REDIS_URL, keyPrefix: prefix });
  });
  afterAll(async () => {
    if (!store) return;
    const keys = await store.client.keys(`${prefix}*`);
    if (keys.length) await store.client.del(...keys);
    await store.close();
  });

  it('a large budget is counted in Redis a lease at a time, not request by request', async () => {
    const rl = limits({ par: { perClient: { points: 10_000, duration: WINDOW } } });
    expect(await allowed([rl], 100, 'big')).toBe(100);
    expect(leaseSize(10_000)).toBe(64);
    expect(await counted('big')).toBe(128); // two reservations of 64
  });

  it('small budgets are exact across instances, also with requests arriving at once', async () => {
    const budget = { par: { perClient: { points: 5, duration: WINDOW } } };
    const two = [limits(budget), limits(budget)];
    expect(await allowed(two, 30, 'small')).toBe(5);
  });

  it('a budget is never exceeded across instances, and a used-up key costs Redis nothing more', async () => {
    const budget = { par: { perClient: { points: 40, duration: WINDOW } } };
    const two = [limits(budget), limits(budget)];
    expect(leaseSize(40)).toBe(2);
    expect(await allowed(two, 100, 'mid')).toBe(40);
    const after = await counted('mid');
    expect(await allowed(two, 50, 'mid')).toBe(0);
    expect(await counted('mid')).toBe(after);
  });
});
