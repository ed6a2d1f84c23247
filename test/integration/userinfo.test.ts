/**
 * The UserInfo endpoint of each version (OIDC Core §5.3, an addition beyond the interface): the token
 * response's access_token (the ID token, D3) as a Bearer token in the Authorization header only (RFC 6750
 * §2.1), GET and POST (§5.3.1), answered with `sub` and the claims the token carries, as JSON or, for a
 * client that registered it, as a signed JWT (§5.3.2). Every bad input gets RFC 6750 §3's answer: a
 * foreign, expired, revoked (D16: its code replayed) or altered token 401 invalid_token with
 * WWW-Authenticate; a token in the query or the body 400 invalid_request; no token 401 with a bare
 * challenge. Never a 500, never the token in a log line.
 */
import { Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import {
  createLocalJWKSet,
  decodeJwt,
  exportJWK,
  generateKeyPair,
  importJWK,
  jwtVerify,
  SignJWT,
  type JWK,
  type JWTPayload,
} from 'jose';
import { startTestService, testConfig, REDIRECT, SECRETS, type TestService } from '../helpers/service.js';
import { makeHint, pkcePair, postForm } from '../helpers/rp.js';
import { holderCompletesIssuance, newWallet } from '../helpers/flows.js';
import { VERSION_1, VERSION_2, type Version } from '../helpers/versions.js';
import { createLogger } from '../../src/log.js';
import { REDIS_URL } from '../helpers/stores.js';

const lines: string[] = [];
let t: TestService;

/** Two more clients: one that registered signed answers, one pinned to the legacy Version 2 issuer (D1). */
const SIGNED = { clientId: 'signed-ui', secret: 'signed-userinfo-secret-0123456789' };
const LEGACY = { clientId: 'legacy-iss', secret: 'legacy-issuer-secret-0123456789' };
const clientsWith = (port: number) => [
  ...(testConfig(port) as { clients: unknown[] }).clients,
  {
    clientId: SIGNED.clientId,
    clientSecret: SIGNED.secret,
    redirectUris: [REDIRECT],
    scopes: ['issue.MembershipCard'],
    userinfoSignedResponseAlg: 'RS256',
  },
  {
    clientId: LEGACY.clientId,
    clientSecret: LEGACY.secret,
    redirectUris: [REDIRECT],
    scopes: ['issue.MembershipCard'],
    legacyV2Issuer: true,
  },
];

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  t = await startTestService((url) => ({ clients: clientsWith(Number(new URL(url).port)) }), {
    logger: createLogger('info', sink),
  });
});
afterAll(async () => t?.stop());

interface Issued {
  tokens: { id_token: string; access_token: string; [k: string]: unknown };
  /** the token request again: the code's replay (D16) */
  replay: () => Promise<{ status: number; body: any }>;
}

/** A full issuance flow of `clientId` at version `vc` (PAR, the holder with a new wallet, the code redeemed). */
async function issue(vc: Version, clientId: string, secret: string, type = 'MembershipCard'): Promise<Issued> {
  const pkce = clientId === 'issuer-pkce' ? pkcePair() : undefined;
  const claims =
    type === 'MembershipCard' ? { MemberName: 'Ada', MemberNumber: 7 } : { FirstName: 'Ada', LastName: 'L' };
  const hint = await makeHint({ clientId, secret, audience: vc.issuerAt(t.url), claims });
  const par = await postForm(`${t.url}${vc.par}`, {
    client_id: clientId,
    client_secret: secret,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: vc.issue(type),
    nonce: 'n',
    id_token_hint: hint,
    ...(pkce ? { code_challenge: pkce.challenge, code_challenge_method: 'S256' } : {}),
  });
  expect(par.status, JSON.stringify(par.body)).toBe(201);
  const authorize = `${t.url}${vc.authorize}?${new URLSearchParams({ client_id: clientId, request_uri: par.body.request_uri })}`;
  const { callbackUrl } = await holderCompletesIssuance(authorize, {
    redirectUri: REDIRECT,
    wallet: await newWallet(),
  });
  const code = new URL(callbackUrl).searchParams.get('code')!;
  const redeem = () =>
    postForm(`${t.url}${vc.token}`, {
      grant_type: 'authorization_code',
      client_id: clientId,
      client_secret: secret,
      code,
      redirect_uri: REDIRECT,
      code_verifier: pkce?.verifier,
    });
  const res = await redeem();
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return { tokens: res.body, replay: redeem };
}

const userinfoUrl = (vc: Version) => `${t.url}${vc.prefix}/userinfo`;

async function call(
  url: string,
  init: { method?: string; headers?: Record<string, string>; body?: string } = {},
): Promise<{ status: number; headers: Headers; body: any; text: string }> {
  const res = await fetch(url, init);
  const text = await res.text();
  let body: unknown = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, headers: res.headers, body, text };
}
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** RFC 6750 §3: the status, the challenge with the error and its description, and the same in the JSON body. */
function expectBearerError(res: Awaited<ReturnType<typeof call>>, error: string, names: string | RegExp): void {
  const status = error === 'invalid_request' ? 400 : 401;
  expect(res.status, res.text).toBe(status);
  const challenge = res.headers.get('www-authenticate') ?? '';
  expect(challenge).toMatch(new RegExp(`^Bearer error="${error}", error_description="[^"\\\\]+"$`));
  expect(res.body.error).toBe(error);
  if (typeof names === 'string') expect(res.body.error_description).toContain(names);
  else expect(res.body.error_description).toMatch(names);
  expect(challenge).toContain(res.body.error_description);
  expect(res.headers.get('cache-control')).toContain('no-store');
  expect(res.headers.get('access-control-allow-origin')).toBe('*');
  expect(res.text).not.toMatch(/at .+\.(ts|js):\d+/);
}

/** A token as the service signs its ID tokens, with the claims given, by the service's own first ID-token key. */
async function forged(claims: JWTPayload, o: { key?: JWK; kid?: string; alg?: string } = {}): Promise<string> {
  const jwk = o.key ?? (t.service.keys.idToken.keys[0] as JWK);
  const { rotation: _r, ...plain } = jwk as JWK & { rotation?: unknown };
  const key = await importJWK({ ...plain, alg: 'RS256' }, 'RS256');
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ sub: 'someone', jti: randomBytes(8).toString('base64url'), ...claims })
    .setProtectedHeader({ alg: o.alg ?? 'RS256', typ: 'JWT', kid: o.kid ?? jwk.kid })
    .setIssuedAt(now)
    .setNotBefore(now)
    .setExpirationTime((claims.exp as number | undefined) ?? now + 60)
    .sign(key);
}

const VERSIONS = [
  { vc: VERSION_2, clientId: 'issuer-pkce', secret: SECRETS.pkceIssuer },
  { vc: VERSION_1, clientId: 'other', secret: SECRETS.other },
];

describe.each(VERSIONS)('UserInfo (OIDC Core 5.3) $vc.tag', ({ vc, clientId, secret }) => {
  let issued: Issued;
  beforeAll(async () => {
    issued = await issue(vc, clientId, secret, 'EmployeeBadge');
  });

  it(`GET with the access token as Bearer -> 200 JSON: sub and the ID token's claims, nothing about the token ${vc.tag}`, async () => {
    const res = await call(userinfoUrl(vc), { headers: bearer(issued.tokens.access_token) });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toBe('no-store');
    const id = decodeJwt(issued.tokens.id_token);
    expect(res.body).toEqual({
      sub: id.sub,
      FirstName: 'Ada',
      LastName: 'L',
      SerialNumber: id.SerialNumber,
      ExpiresAt: id.ExpiresAt,
    });
  });

  it(`POST with the Bearer header, without a body or with a form without access_token -> 200 (5.3.1) ${vc.tag}`, async () => {
    const empty = await call(userinfoUrl(vc), { method: 'POST', headers: bearer(issued.tokens.access_token) });
    expect(empty.status, empty.text).toBe(200);
    const form = await call(userinfoUrl(vc), {
      method: 'POST',
      headers: { ...bearer(issued.tokens.access_token), 'content-type': 'application/x-www-form-urlencoded' },
      body: 'foo=bar',
    });
    expect(form.status, form.text).toBe(200);
    expect(form.body.sub).toBe(empty.body.sub);
  });

  it(`openid-client's fetchUserInfo at its defaults (discovery, expected sub) ${vc.tag}`, async () => {
    const config = await oidc.discovery(new URL(`${t.url}${vc.discovery}`), clientId, secret, undefined, {
      execute: [oidc.allowInsecureRequests],
    });
    expect(config.serverMetadata().userinfo_endpoint).toBe(userinfoUrl(vc));
    const sub = decodeJwt(issued.tokens.id_token).sub!;
    const claims = await oidc.fetchUserInfo(config, issued.tokens.access_token, sub);
    expect(claims).toMatchObject({ sub, FirstName: 'Ada' });
  });

  it(`the token of the other version -> 401 invalid_token naming the issuer ${vc.tag}`, async () => {
    const other = vc.version === 2 ? VERSION_1 : VERSION_2;
    const res = await call(userinfoUrl(other), { headers: bearer(issued.tokens.access_token) });
    expectBearerError(res, 'invalid_token', `not issued by ${other.issuerAt(t.url)}`);
  });

  it(`D16: a replayed code revokes the token it bought -> 401 invalid_token "revoked" ${vc.tag}`, async () => {
    const own = await issue(vc, clientId, secret, 'EmployeeBadge');
    expect((await call(userinfoUrl(vc), { headers: bearer(own.tokens.access_token) })).status).toBe(200);
    const replay = await own.replay();
    expect(replay.status).toBe(400);
    expect(replay.body.error).toBe('invalid_grant');
    expectBearerError(
      await call(userinfoUrl(vc), { headers: bearer(own.tokens.access_token) }),
      'invalid_token',
      'revoked',
    );
    // the token of another flow is untouched
    expect((await call(userinfoUrl(vc), { headers: bearer(issued.tokens.access_token) })).status).toBe(200);
  });

  it(`discovery names the endpoint in every document of the version ${vc.tag}`, async () => {
    const docs = vc.version === 2 ? [vc.discovery] : [vc.discovery, '/.well-known/openid-configuration'];
    for (const path of docs) {
      const doc = (await call(`${t.url}${path}`)).body;
      expect(doc.userinfo_endpoint).toBe(userinfoUrl(vc));
      expect(doc.userinfo_signing_alg_values_supported).toEqual(['RS256']);
    }
  });
});

describe('UserInfo: the answer signed for a client with userinfoSignedResponseAlg (OIDC Core 5.3.2)', () => {
  it('application/jwt, RS256 by an ID-token key, with iss, aud and the claims; openid-client accepts it', async () => {
    const { tokens } = await issue(VERSION_2, SIGNED.clientId, SIGNED.secret);
    const res = await call(userinfoUrl(VERSION_2), { headers: bearer(tokens.access_token) });
    expect(res.status, res.text).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/jwt/);
    const jwks = createLocalJWKSet((await call(`${t.url}/v2.0/.well-known/openid-configuration/jwks`)).body);
    const { payload, protectedHeader } = await jwtVerify(res.text, jwks, {
      issuer: t.url,
      audience: SIGNED.clientId,
      algorithms: ['RS256'],
    });
    expect(protectedHeader.alg).toBe('RS256');
    expect(payload).toMatchObject({ sub: decodeJwt(tokens.id_token).sub, MemberName: 'Ada', MemberNumber: 7 });

    const config = await oidc.discovery(
      new URL(`${t.url}/v2.0/.well-known/openid-configuration`),
      SIGNED.clientId,
      { client_secret: SIGNED.secret, userinfo_signed_response_alg: 'RS256' },
      undefined,
      { execute: [oidc.allowInsecureRequests] },
    );
    const claims = await oidc.fetchUserInfo(config, tokens.access_token, oidc.skipSubjectCheck);
    expect(claims.MemberName).toBe('Ada');
  });
});

describe('UserInfo: a client pinned to the legacy Version 2 issuer (D1)', () => {
  it("its tokens carry {base_url}/oidc and are accepted; another client's token with that iss is not", async () => {
    const { tokens } = await issue(VERSION_2, LEGACY.clientId, LEGACY.secret);
    expect(decodeJwt(tokens.id_token).iss).toBe(`${t.url}/oidc`);
    expect((await call(userinfoUrl(VERSION_2), { headers: bearer(tokens.access_token) })).status).toBe(200);
    const forgedLegacy = await forged({ iss: `${t.url}/oidc`, aud: 'issuer-pkce' });
    expectBearerError(
      await call(userinfoUrl(VERSION_2), { headers: bearer(forgedLegacy) }),
      'invalid_token',
      `not issued by ${t.url}`,
    );
  });
});

describe('UserInfo, bad input (RFC 6750 section 3)', () => {
  const url = () => userinfoUrl(VERSION_2);
  let token: string;
  beforeAll(async () => {
    token = (await issue(VERSION_2, 'issuer-plain', SECRETS.plainIssuer)).tokens.access_token;
  });

  it('no token at all -> 401 with WWW-Authenticate: Bearer and no error code (3.1)', async () => {
    for (const method of ['GET', 'POST']) {
      const res = await call(url(), { method });
      expect(res.status).toBe(401);
      expect(res.headers.get('www-authenticate')).toBe('Bearer');
      expect(res.text).toBe('');
    }
  });

  it('the token in the query (2.3) -> 400 invalid_request naming the query', async () => {
    expectBearerError(await call(`${url()}?access_token=${token}`), 'invalid_request', 'access_token in the query');
  });

  it('the token in the form body (2.2) -> 400 invalid_request naming the body', async () => {
    const res = await call(url(), {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: `access_token=${token}`,
    });
    expectBearerError(res, 'invalid_request', 'access_token in the form body');
  });

  it('the token in the header and the query (2: one method) -> 400 invalid_request', async () => {
    expectBearerError(
      await call(`${url()}?access_token=${token}`, { headers: bearer(token) }),
      'invalid_request',
      'Authorization header only',
    );
  });

  it.each([
    ['Basic credentials', `Basic ${Buffer.from('issuer-plain:x').toString('base64')}`, 'Bearer scheme'],
    ['another scheme', 'DPoP abc', 'Bearer scheme'],
    ['Bearer without a token', 'Bearer ', 'carries no access token'],
  ])('%s in the Authorization header -> 400 invalid_request', async (_, header, names) => {
    expectBearerError(await call(url(), { headers: { authorization: header } }), 'invalid_request', names);
  });

  it.each([
    ['not a b64token', 'a"b', 'malformed'],
    ['not a JWT', 'abc.def', 'not a JWT of this service'],
    ['a JWE-shaped value', 'a.b.c.d.e', 'not a JWT of this service'],
  ])('a token %s -> 401 invalid_token', async (_, value, names) => {
    expectBearerError(await call(url(), { headers: bearer(value) }), 'invalid_token', names);
  });

  it('an altered token (a claim changed, the signature kept) -> 401 invalid_token naming the signature', async () => {
    const [h, p, s] = token.split('.');
    const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
    const altered = Buffer.from(JSON.stringify({ ...payload, MemberName: 'Mallory' })).toString('base64url');
    expectBearerError(
      await call(url(), { headers: bearer(`${h}.${altered}.${s}`) }),
      'invalid_token',
      'signature does not verify',
    );
  });

  it('a foreign token (signed by a key that is not ours, with our kid or its own) -> 401 invalid_token', async () => {
    const { privateKey } = await generateKeyPair('RS256', { extractable: true });
    const foreignKey = { ...(await exportJWK(privateKey)), kid: 'foreign' };
    const claims = { iss: t.url, aud: 'issuer-plain' };
    expectBearerError(
      await call(url(), { headers: bearer(await forged(claims, { key: foreignKey })) }),
      'invalid_token',
      'not signed by a key of this service',
    );
    const ourKid = t.service.keys.idToken.keys[0].kid as string;
    expectBearerError(
      await call(url(), { headers: bearer(await forged(claims, { key: foreignKey, kid: ourKid })) }),
      'invalid_token',
      'signature does not verify',
    );
  });

  it('an expired token (exp passed) -> 401 invalid_token "expired"', async () => {
    const past = Math.floor(Date.now() / 1000) - 600;
    const expired = await forged({ iss: t.url, aud: 'issuer-plain', exp: past });
    expectBearerError(await call(url(), { headers: bearer(expired) }), 'invalid_token', 'has expired');
  });

  it('a token of an unknown client, without jti, or without sub -> 401 invalid_token naming the rule', async () => {
    expectBearerError(
      await call(url(), { headers: bearer(await forged({ iss: t.url, aud: 'nobody' })) }),
      'invalid_token',
      'not issued to a registered client',
    );
    expectBearerError(
      await call(url(), { headers: bearer(await forged({ iss: t.url, aud: 'issuer-plain', jti: undefined })) }),
      'invalid_token',
      'jti claim is missing',
    );
    expectBearerError(
      await call(url(), { headers: bearer(await forged({ iss: t.url, aud: 'issuer-plain', sub: undefined })) }),
      'invalid_token',
      'sub claim is missing',
    );
  });

  it('a token with alg none -> 401 invalid_token', async () => {
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url');
    const body = Buffer.from(JSON.stringify({ ...decodeJwt(token) })).toString('base64url');
    expectBearerError(await call(url(), { headers: bearer(`${header}.${body}.`) }), 'invalid_token', /RS256|not a JWT/);
  });

  it('a repeated access_token in the query is still refused as invalid_request, never a 500', async () => {
    const res = await call(`${url()}?access_token=a&access_token=b`);
    expect(res.status).toBe(400);
    expect(res.body.error).toBe('invalid_request');
  });
});

describe('UserInfo in browsers (RFC 6750 clients, CORS)', () => {
  it('the preflight of a call with Authorization -> 204 allowing GET, POST and the Authorization header', async () => {
    const res = await fetch(userinfoUrl(VERSION_2), {
      method: 'OPTIONS',
      headers: {
        origin: 'https://app.example',
        'access-control-request-method': 'GET',
        'access-control-request-headers': 'authorization',
      },
    });
    expect(res.status).toBe(204);
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-allow-methods')).toContain('GET');
    expect(res.headers.get('access-control-allow-headers')?.toLowerCase()).toContain('authorization');
  });

  it('answers and errors are readable from any origin, the challenge too', async () => {
    const res = await call(userinfoUrl(VERSION_1), { headers: { origin: 'https://app.example' } });
    expect(res.headers.get('access-control-allow-origin')).toBe('*');
    expect(res.headers.get('access-control-expose-headers')).toContain('WWW-Authenticate');
  });
});

describe('UserInfo and key rotation (D20): a token of a retired key still published is accepted', () => {
  let rotated: TestService;
  let oldKey: JWK;
  afterAll(async () => rotated?.stop());

  it('verifies against every published ID-token key, not only the one that signs now', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'vc-userinfo-keys-'));
    const make = async (kid: string) => ({
      ...(await exportJWK((await generateKeyPair('RS256', { extractable: true })).privateKey)),
      kid,
      alg: 'RS256',
      use: 'sig',
    });
    oldKey = await make('old-key');
    const now = Date.now();
    const newKey = {
      ...(await make('new-key')),
      rotation: { created: new Date(now - 7200_000).toISOString(), activates: new Date(now - 1000).toISOString() },
    };
    const file = join(dir, 'id.json');
    writeFileSync(file, JSON.stringify({ keys: [oldKey, newKey] }));
    rotated = await startTestService((base) => {
      const c = testConfig(Number(new URL(base).port)) as { keys: Record<string, unknown> };
      return { keys: { ...c.keys, idToken: file, generate: false } };
    });
    const jwks = (await call(`${rotated.url}/v2.0/.well-known/openid-configuration/jwks`)).body;
    expect(jwks.keys.map((k: JWK) => k.kid).sort()).toEqual(['new-key', 'old-key']);
    const now2 = Math.floor(Date.now() / 1000);
    const key = await importJWK({ ...oldKey, alg: 'RS256' }, 'RS256');
    const old = await new SignJWT({ sub: 'someone', jti: 'x' })
      .setProtectedHeader({ alg: 'RS256', typ: 'JWT', kid: 'old-key' })
      .setIssuer(rotated.url)
      .setAudience('issuer-plain')
      .setIssuedAt(now2)
      .setExpirationTime(now2 + 60)
      .sign(key);
    const res = await call(`${rotated.url}/v2.0/oidc/userinfo`, { headers: bearer(old) });
    expect(res.status, res.text).toBe(200);
    expect(res.body.sub).toBe('someone');
  });
});

describe('UserInfo has a rate-limit budget of its own (rateLimits.userinfo)', () => {
  let limited: TestService;
  afterAll(async () => limited?.stop());

  it('per address: over the budget -> 429 temporarily_unavailable with Retry-After, refused calls counted too', async () => {
    // on Redis the counters live under the configured store's prefix: one of this run's own
    const store = { url: REDIS_URL, keyPrefix: `test:rl:${randomBytes(6).toString('hex')}:` };
    limited = await startTestService({
      ...(process.env.TEST_STORE === 'redis' ? { store } : {}),
      rateLimits: { userinfo: { perAddress: { points: 2, duration: 60 } } },
    });
    const url = `${limited.url}/v2.0/oidc/userinfo`;
    expect((await call(url)).status).toBe(401);
    expect((await call(url, { headers: bearer('abc.def') })).status).toBe(401);
    const over = await call(url);
    expect(over.status).toBe(429);
    expect(over.body.error).toBe('temporarily_unavailable');
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
    // the token endpoint's budget is another one
    expect((await call(`${limited.url}/v2.0/oidc/token`, { method: 'POST' })).status).toBe(400);
  });
});

describe('D17: the access token never reaches a log line', () => {
  it('no line of this file carries a token, and no request answered 5xx', () => {
    expect(lines.length).toBeGreaterThan(0);
    const log = lines.join('\n');
    expect(log).not.toMatch(/eyJ[A-Za-z0-9_-]{10,}\.eyJ/);
    expect(log).not.toMatch(/"status":5\d\d/);
  });
});
