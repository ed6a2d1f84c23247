/**
 * Every control in front of an oidc-provider instance sees the path the provider routes (docs/decisions.md,
 * "Exact paths in front of the providers"). oidc-provider 9's router folds the ASCII case of a path and
 * retries once without a trailing slash; the service's own routes, rate limits and edges match exact paths.
 * So every other spelling of a provider path answers the service's 404 before any control or the provider
 * sees it: a budget spent on `/wallet/credential` is not bypassed at `/wallet/credential/` or
 * `/wallet/Credential`, and `/wallet/token/` never reaches the provider's token endpoint around the token
 * edge (its PIN, race and offer checks). On the store of the run (TEST_STORE).
 */
import { randomBytes } from 'node:crypto';
import { request } from 'node:http';
import { exportJWK, generateKeyPair, SignJWT } from 'jose';
import { afterAll, describe, expect, it } from 'vitest';
import { startTestService, REDIRECT, SECRETS, type TestService } from '../helpers/service.js';
import { makeHint, postForm, resolveOfferLink } from '../helpers/rp.js';
import { PRE_AUTH, startIssuer } from '../helpers/walletIssuer.js';
import { spellingOf } from '../../src/http/exactPaths.js';
import { walletIssuerPaths } from '../../src/issuance/issuerPaths.js';
import { PinHasher } from '../../src/rules/pinHash.js';
import { REDIS_URL } from '../helpers/stores.js';
import { MemoryStore } from '../../src/store/memory.js';
import { createRedisStore, RedisStore } from '../../src/store/redis.js';

/** every endpoint without budgets: each test gives only the ones it is about */
const NO_LIMITS = {
  par: {},
  token: {},
  walletToken: {},
  credential: {},
  vpResponse: {},
  promptStatus: {},
  promptDcApi: {},
};
const budget = (points: number) => ({ points, duration: 600 });

const onRedis = process.env.TEST_STORE === 'redis';
const running: { svc: TestService; store: MemoryStore | RedisStore; prefix: string }[] = [];

/** The app with these budgets, on the run's store; on Redis, its budgets under a key prefix of its own. */
async function start(rateLimits: Record<string, unknown> = {}): Promise<TestService> {
  const prefix = `test:exact:${randomBytes(6).toString('hex')}:`;
  const spec = { url: REDIS_URL, keyPrefix: prefix };
  const store = onRedis ? await createRedisStore(spec) : new MemoryStore();
  const svc = await startTestService(
    { ...(onRedis ? { store: spec } : {}), rateLimits: { ...NO_LIMITS, ...rateLimits } },
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

/**
 * The spellings oidc-provider routes to the same endpoint as `path`: upper case, mixed case, trailing slash,
 * both. With `param`, the last segment is a value (an interaction's uid, an offer's id) and keeps its case.
 */
function variants(path: string, param = false): string[] {
  const segments = path.split('/');
  const value = param ? segments.pop()! : undefined;
  const at = segments.length - 1;
  const join = (s: string[]) => [...s, ...(value === undefined ? [] : [value])].join('/');
  const upper = join(segments.map((s) => s.toUpperCase()));
  const mixed = join(segments.map((s, i) => (i === at ? `${s.charAt(0).toUpperCase()}${s.slice(1)}` : s)));
  return [...new Set([upper, mixed, `${path}/`, `${upper}/`, `${mixed}/`])].filter((v) => v !== path);
}

type Answer = { status: number; body: any; headers: Headers };
async function send(url: string, method: string, init: RequestInit = {}): Promise<Answer> {
  const res = await fetch(url, { ...init, method, redirect: 'manual' });
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body, headers: res.headers };
}

/** The service's answer for a path it does not serve (src/service/sides.ts), and nothing else. */
function expectNotFound(res: Answer, method: string, path: string): void {
  expect(res.status, `${method} ${path}: ${JSON.stringify(res.body)}`).toBe(404);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.body).toStrictEqual({ error: 'not_found', error_description: `no endpoint at ${method} ${path}` });
}

let offers = 0;
/** An offer of the service's wallet issuer for an EmployeeBadge, with or without a PIN; its pre-authorized code. */
async function offer(svc: TestService, pin?: string) {
  const stepId = `exact-paths-${++offers}-${randomBytes(4).toString('hex')}`;
  const { offerId, offerUri, expiresAt } = await svc.service.walletIssuer.createOffer({
    stepId,
    clientId: 'issuer-pkce',
    credentialType: 'EmployeeBadge',
    attributes: { FirstName: 'Ada', LastName: 'Lovelace' },
    serialNumber: `SN-exact-${offers}-${randomBytes(4).toString('hex')}`,
    credentialExpiresAt: new Date(Date.now() + 86_400_000),
    // PINs are hashed under the pairwise secret (src/service/core.ts derivedRoot)
    ...(pin ? { pin: new PinHasher(svc.service.keyRing.pairwise).hash(pin, stepId) } : {}),
  });
  const parsed = await resolveOfferLink(offerUri);
  return { offerId, expiresAt, code: parsed.grants[PRE_AUTH]['pre-authorized_code'] as string };
}

const token = (svc: TestService, path: string, params: Record<string, string>) =>
  postForm(`${svc.url}${path}`, { grant_type: PRE_AUTH, ...params });

/** A wallet's credential request with a proof for a fresh c_nonce, at `path`. */
async function credential(svc: TestService, path: string, accessToken: string): Promise<Answer> {
  const nonce = await send(`${svc.url}/wallet/challenge`, 'POST');
  const { privateKey, publicKey } = await generateKeyPair('ES256');
  const proof = await new SignJWT({ nonce: nonce.body.c_nonce })
    .setProtectedHeader({ alg: 'ES256', typ: 'openid4vci-proof+jwt', jwk: await exportJWK(publicKey) })
    .setAudience(`${svc.url}/wallet`)
    .setIssuedAt()
    .sign(privateKey);
  return send(`${svc.url}${path}`, 'POST', {
    headers: { authorization: `Bearer ${accessToken}`, 'content-type': 'application/json' },
    body: JSON.stringify({ credential_configuration_id: 'EmployeeBadge', proofs: { jwt: [proof] } }),
  });
}

const garbageCredential = (svc: TestService, path: string) =>
  send(`${svc.url}${path}`, 'POST', {
    headers: { authorization: `Bearer ${randomBytes(32).toString('base64url')}`, 'content-type': 'application/json' },
    body: JSON.stringify({ credential_configuration_id: 'EmployeeBadge' }),
  });

describe('the wallet credential endpoint: a spent budget holds on every spelling', () => {
  it('with the credential budget used up at /wallet/credential, /wallet/credential/ and /wallet/Credential issue nothing', async () => {
    const svc = await start({ credential: { perAddress: budget(2) } });
    const { code } = await offer(svc);
    const redeemed = await token(svc, '/wallet/token', { 'pre-authorized_code': code });
    expect(redeemed.status, JSON.stringify(redeemed.body)).toBe(200);
    const accessToken = redeemed.body.access_token as string;
    expect((await garbageCredential(svc, '/wallet/credential')).status).toBe(401);
    expect((await garbageCredential(svc, '/wallet/credential')).status).toBe(401);
    expect((await credential(svc, '/wallet/credential', accessToken)).status).toBe(429);
    for (const path of variants('/wallet/credential')) {
      const res = await credential(svc, path, accessToken);
      expect(res.body.credentials, `${path} issued a credential`).toBeUndefined();
      expectNotFound(res, 'POST', path);
    }
  });

  it('another spelling neither issues nor spends the budget; the exact path then issues with the same token', async () => {
    const svc = await start({ credential: { perAddress: budget(3) } });
    const { code } = await offer(svc);
    const accessToken = (await token(svc, '/wallet/token', { 'pre-authorized_code': code })).body.access_token;
    for (const path of variants('/wallet/credential'))
      expectNotFound(await credential(svc, path, accessToken), 'POST', path);
    expect((await garbageCredential(svc, '/wallet/credential')).status).toBe(401);
    expect((await garbageCredential(svc, '/wallet/credential')).status).toBe(401);
    const issued = await credential(svc, '/wallet/credential', accessToken);
    expect(issued.status, JSON.stringify(issued.body)).toBe(200);
    expect(issued.body.credentials).toHaveLength(1);
  });
});

describe('the wallet token endpoint: every spelling but the exact one is refused before the token edge', () => {
  it('/wallet/token/ and /wallet/TOKEN give no token, with the right PIN or a wrong one, and cost the offer no attempt', async () => {
    const svc = await start();
    const { code, offerId, expiresAt } = await offer(svc, '1234');
    for (const path of variants('/wallet/token')) {
      for (const txCode of ['1234', '0000', undefined]) {
        const res = await token(svc, path, { 'pre-authorized_code': code, ...(txCode ? { tx_code: txCode } : {}) });
        expect(res.body.access_token, `${path} gave a token`).toBeUndefined();
        expectNotFound(res, 'POST', path);
      }
    }
    expect(await svc.service.walletIssuer.offerStatus(offerId, expiresAt)).toMatchObject({ status: 'pending' });
    // the token edge still decides at the exact path: a wrong PIN costs an attempt, the right one buys the token
    expect((await token(svc, '/wallet/token', { 'pre-authorized_code': code, tx_code: '0000' })).status).toBe(400);
    expect(await svc.service.walletIssuer.offerStatus(offerId, expiresAt)).toMatchObject({ attemptsLeft: 2 });
    const ok = await token(svc, '/wallet/token', { 'pre-authorized_code': code, tx_code: '1234' });
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });

  it('a spent walletToken budget holds on every spelling', async () => {
    const svc = await start({ walletToken: { perAddress: budget(1) } });
    const { code } = await offer(svc);
    expect(
      (await token(svc, '/wallet/token', { 'pre-authorized_code': randomBytes(32).toString('base64url') })).status,
    ).toBe(400);
    expect((await token(svc, '/wallet/token', { 'pre-authorized_code': code })).status).toBe(429);
    for (const path of variants('/wallet/token'))
      expectNotFound(await token(svc, path, { 'pre-authorized_code': code }), 'POST', path);
  });
});

describe('the wallet notification endpoint', () => {
  it('another spelling is the 404, before the credential budget or the endpoint', async () => {
    const svc = await start({ credential: { perAddress: budget(1) } });
    const notify = (path: string) =>
      send(`${svc.url}${path}`, 'POST', {
        headers: {
          authorization: `Bearer ${randomBytes(32).toString('base64url')}`,
          'content-type': 'application/json',
        },
        body: JSON.stringify({ notification_id: 'x', event: 'credential_accepted' }),
      });
    for (const path of variants('/wallet/notification')) expectNotFound(await notify(path), 'POST', path);
    expect((await notify('/wallet/notification')).status).toBe(401);
    expect((await notify('/wallet/notification')).status).toBe(429);
  });
});

describe('the relying parties: PAR and token budgets hold on every spelling (both versions)', () => {
  const par = async (svc: TestService, path: string) =>
    postForm(`${svc.url}${path}`, {
      client_id: 'issuer-plain',
      client_secret: SECRETS.plainIssuer,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid issue.MembershipCard',
      nonce: randomBytes(8).toString('hex'),
      state: randomBytes(8).toString('hex'),
      id_token_hint: await makeHint({
        clientId: 'issuer-plain',
        secret: SECRETS.plainIssuer,
        audience: svc.url,
        claims: { MemberName: 'Ada Lovelace', MemberNumber: 1815 },
      }),
    });

  it('with the PAR budget used up, another spelling of /v2.0/oidc/par pushes nothing', async () => {
    const svc = await start({ par: { perClient: budget(1) } });
    expect((await par(svc, '/v2.0/oidc/par')).status).toBe(201);
    expect((await par(svc, '/v2.0/oidc/par')).status).toBe(429);
    for (const path of variants('/v2.0/oidc/par')) {
      const res = await par(svc, path);
      expect(res.body.request_uri, `${path} pushed a request`).toBeUndefined();
      expectNotFound(res, 'POST', path);
    }
  });

  it('with the token budget used up, another spelling of either token endpoint is the 404', async () => {
    const svc = await start({ token: { perAddress: budget(1) } });
    const redeem = (path: string) =>
      postForm(`${svc.url}${path}`, {
        grant_type: 'authorization_code',
        code: randomBytes(16).toString('base64url'),
        redirect_uri: REDIRECT,
        client_id: 'issuer-plain',
        client_secret: SECRETS.plainIssuer,
      });
    expect((await redeem('/oidc/token')).status).toBe(400);
    expect((await redeem('/v2.0/oidc/token')).status).toBe(429);
    for (const path of [...variants('/oidc/token'), ...variants('/v2.0/oidc/token')])
      expectNotFound(await redeem(path), 'POST', path);
  });
});

/** Every endpoint in front of a provider, as a client or wallet asks for it. */
const ENDPOINTS: [string, string, boolean?][] = [
  // the wallet-facing issuer: oidc-provider's routes and the service's own beside them
  ['POST', '/wallet/token'],
  ['POST', '/wallet/credential'],
  ['POST', '/wallet/challenge'],
  ['POST', '/wallet/notification'],
  ['GET', '/wallet/jwks'],
  ['GET', '/wallet/.well-known/openid-credential-issuer'],
  ['GET', '/wallet/.well-known/oauth-authorization-server'],
  ['GET', '/wallet/.well-known/openid-configuration'],
  ['GET', '/.well-known/openid-credential-issuer/wallet'],
  ['GET', '/.well-known/oauth-authorization-server/wallet'],
  ['GET', '/.well-known/jwt-vc-issuer/wallet'],
  ['GET', '/wallet/auth'],
  ['GET', '/wallet/auth/some-interaction', true],
  ['GET', '/wallet/offers/some-offer', true],
  ['GET', '/wallet/status/some-list', true],
  // Version 2
  ['GET', '/v2.0/.well-known/openid-configuration'],
  ['GET', '/v2.0/.well-known/openid-configuration/jwks'],
  ['POST', '/v2.0/oidc/par'],
  ['GET', '/v2.0/oidc/authorize'],
  ['GET', '/v2.0/oidc/authorize/some-interaction', true],
  ['POST', '/v2.0/oidc/token'],
  // Version 1
  ['GET', '/.well-known/openid-configuration'],
  ['GET', '/.well-known/openid-configuration/jwks'],
  ['GET', '/oidc/.well-known/openid-configuration'],
  ['GET', '/oidc/.well-known/openid-configuration/jwks'],
  ['POST', '/oidc/par'],
  ['GET', '/oidc/authorize'],
  ['GET', '/oidc/authorizev1'],
  ['GET', '/oidc/authorize/some-interaction', true],
  ['POST', '/oidc/token'],
];

describe('every endpoint in front of a provider: only its exact spelling is served', () => {
  let svc: TestService;
  const ask = (method: string, path: string) =>
    send(
      `${svc.url}${path}`,
      method,
      method === 'POST' ? { headers: { 'content-type': 'application/json' }, body: '{}' } : {},
    );

  it.each(ENDPOINTS)(
    '%s %s: upper case, mixed case, trailing slash and both are the 404',
    async (method, path, param) => {
      svc ??= await start();
      const exact = await ask(method, path);
      expect(exact.body?.error_description, `${method} ${path} is served`).not.toBe(`no endpoint at ${method} ${path}`);
      for (const variant of variants(path, param)) expectNotFound(await ask(method, variant), method, variant);
      // the provider's CORS preflights too
      for (const variant of variants(path, param)) expectNotFound(await ask('OPTIONS', variant), 'OPTIONS', variant);
    },
  );
});

/** A POST with its path sent as written (fetch would resolve dot segments and escape characters first). */
function rawPost(base: string, path: string, body: string): Promise<{ status: number; body: string }> {
  const { hostname, port } = new URL(base);
  return new Promise((resolve, reject) => {
    const req = request(
      { host: hostname, port, path, method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' } },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

describe("oidc-provider's own router (the wallet issuer alone, without the service's edge)", () => {
  it('routes other spellings of its paths, and only spellings the edge takes for its paths (an upgrade that routes more fails here)', async () => {
    const bare = await startIssuer();
    try {
      const spelling = spellingOf(walletIssuerPaths('wallet'));
      const odd = [
        ...variants('/wallet/token'),
        '/wallet//token',
        '/wallet/token//',
        '/wallet/%74oken',
        '/wallet/./token',
        '/wallet/x/../token',
        '/wallet/token;a=b',
        '/wallet/token%2F',
        '/wallet/tok%65n/',
        '/wallet/to%E2%84%AAen',
        '/wallet/TOKEN%00',
        '/wallet/token/.',
        '/wallet\\token',
      ];
      const routed: string[] = [];
      for (const path of odd) {
        const res = await rawPost(
          bare.baseUrl,
          path,
          `grant_type=${encodeURIComponent(PRE_AUTH)}&pre-authorized_code=x`,
        );
        if (res.status === 404 && res.body.includes('not_found')) continue;
        routed.push(path);
        expect(spelling(path), `the provider routes ${path} to its token endpoint`).not.toBe('unlisted');
      }
      // the reason for the edge: the provider folds case and takes a trailing slash
      expect(routed).toEqual(expect.arrayContaining(['/wallet/Token', '/wallet/token/']));
    } finally {
      await bare.close();
    }
  });
});
