/**
 * client_secret_basic at PAR and token (RFC 6749 §2.3.1: a server MUST support HTTP Basic for clients with
 * a password), beside the interface's client_secret_post: accepted with either method, with the
 * interface's error codes (D4: 400 unauthorised_client; with rfc6749Errors 401 invalid_client and
 * WWW-Authenticate), both methods in one request refused (§2.3), and every malformed Authorization header
 * answered with a description of its own, never a 500, never a secret in the answer or a log line.
 */
import { Writable } from 'node:stream';
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { startTestService, testConfig, REDIRECT, SECRETS, type TestService } from '../helpers/service.js';
import { makeHint, pkcePair, postForm } from '../helpers/rp.js';
import { expectError } from '../helpers/assertions.js';
import { holderCompletesIssuance, newWallet } from '../helpers/flows.js';
import { VERSION_1, VERSION_2, type Version } from '../helpers/versions.js';
import { createLogger } from '../../src/log.js';

/**
 * A client whose id and secret need form-urlencoding (RFC 6749 Appendix B): spaces, ':', '+', '%' and other
 * reserved characters, within VSCHAR (RFC 6749 Appendix A.1, A.2: what a client_id and a secret may hold).
 */
const ODD = { clientId: 'odd client:1+2%', secret: 'secret: with+plus & 100% "quotes"/=~' };
const ODD_ENCODED = (s: string) => encodeURIComponent(s).replaceAll('%20', '+');

const lines: string[] = [];
let t: TestService;
let rfc: TestService;

beforeAll(async () => {
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const withOdd = (port: number) => {
    const base = testConfig(port) as { clients: Record<string, unknown>[] };
    return [
      ...base.clients,
      { clientId: ODD.clientId, clientSecret: ODD.secret, redirectUris: [REDIRECT], scopes: ['MembershipCard'] },
    ];
  };
  t = await startTestService((url) => ({ clients: withOdd(Number(new URL(url).port)) }), {
    logger: createLogger('info', sink),
  });
  rfc = await startTestService({ rfc6749Errors: true });
});
afterAll(async () => {
  await Promise.all([t?.stop(), rfc?.stop()]);
});

/** `Basic` and the base64 of the form-urlencoded id and secret (RFC 6749 §2.3.1). */
const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${ODD_ENCODED(id)}:${ODD_ENCODED(secret)}`).toString('base64')}`;

const CASES: { vc: Version; clientId: string; secret: string; scope: string; pkce: boolean }[] = [
  {
    vc: VERSION_2,
    clientId: 'issuer-pkce',
    secret: SECRETS.pkceIssuer,
    scope: 'openid issue.EmployeeBadge',
    pkce: true,
  },
  { vc: VERSION_1, clientId: 'other', secret: SECRETS.other, scope: 'issue.EmployeeBadge', pkce: false },
];

/** A PAR body of a verification request (no hint), without any client authentication. */
const verificationPar = (scope = 'openid MembershipCard') => ({
  response_type: 'code',
  redirect_uri: REDIRECT,
  scope,
  nonce: 'n',
});

/** A code of a full issuance flow, pushed with client_secret_basic. */
async function issueCodeWithBasic(c: (typeof CASES)[number], base = t.url) {
  const { verifier, challenge } = pkcePair();
  const hint = await makeHint({
    clientId: c.clientId,
    secret: c.secret,
    audience: c.vc.issuerAt(base),
    claims: { FirstName: 'Ada', LastName: 'Lovelace', PinCode: '1234' },
  });
  const par = await postForm(
    `${base}${c.vc.par}`,
    {
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: c.scope,
      nonce: 'n',
      state: 's',
      id_token_hint: hint,
      ...(c.pkce ? { code_challenge: challenge, code_challenge_method: 'S256' } : {}),
    },
    { authorization: basic(c.clientId, c.secret) },
  );
  expect(par.status, JSON.stringify(par.body)).toBe(201);
  const authorize = `${base}${c.vc.authorize}?${new URLSearchParams({ client_id: c.clientId, request_uri: par.body.request_uri })}`;
  const { callbackUrl } = await holderCompletesIssuance(authorize, {
    redirectUri: REDIRECT,
    wallet: await newWallet(),
    pin: '1234',
  });
  const code = new URL(callbackUrl).searchParams.get('code');
  expect(code, callbackUrl).toBeTruthy();
  return { code: code!, verifier: c.pkce ? verifier : undefined };
}

describe.each(CASES)('client_secret_basic is accepted (RFC 6749 2.3.1) $vc.tag', (c) => {
  it(`PAR and token with Authorization: Basic and no secret in the form -> 201, then 200 with the ID token ${c.vc.tag}`, async () => {
    const { code, verifier } = await issueCodeWithBasic(c);
    const token = await postForm(
      `${t.url}${c.vc.token}`,
      { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier },
      { authorization: basic(c.clientId, c.secret) },
    );
    expect(token.status, JSON.stringify(token.body)).toBe(200);
    expect(token.body.access_token).toBe(token.body.id_token);
  });

  it(`a refused Basic token request does not burn the code; a client_id in the form equal to the header's is accepted ${c.vc.tag}`, async () => {
    const { code, verifier } = await issueCodeWithBasic(c);
    const form = { grant_type: 'authorization_code', code, redirect_uri: REDIRECT, code_verifier: verifier };
    const refused = await postForm(`${t.url}${c.vc.token}`, form, {
      authorization: basic(c.clientId, 'wrong-0123456789'),
    });
    expectError(refused, 'unauthorised_client', 'client_secret is wrong');
    const ok = await postForm(
      `${t.url}${c.vc.token}`,
      { ...form, client_id: c.clientId },
      { authorization: basic(c.clientId, c.secret) },
    );
    expect(ok.status, JSON.stringify(ok.body)).toBe(200);
  });
});

describe('client_secret_basic: id and secret are form-urlencoded before base64 (RFC 6749 2.3.1, Appendix B)', () => {
  it('a client whose id and secret carry reserved characters authenticates at PAR', async () => {
    const res = await postForm(`${t.url}/v2.0/oidc/par`, verificationPar(), {
      authorization: basic(ODD.clientId, ODD.secret),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });

  it("a pushed request with a parameter only oidc-provider's PAR endpoint handles (ui_locales) goes there, authenticated -> 201", async () => {
    const res = await postForm(
      `${t.url}/v2.0/oidc/par`,
      { ...verificationPar(), ui_locales: 'de' },
      { authorization: basic(ODD.clientId, ODD.secret) },
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });

  it('the scheme name is case-insensitive (RFC 7235 2.1): "basic" and extra spaces -> 201', async () => {
    const res = await postForm(`${t.url}/v2.0/oidc/par`, verificationPar(), {
      authorization: basic(ODD.clientId, ODD.secret).replace('Basic ', 'basic   '),
    });
    expect(res.status, JSON.stringify(res.body)).toBe(201);
  });

  it('the same credentials not form-urlencoded ("+" for a space is lost, "%" not an escape) -> 400 naming the encoding', async () => {
    const raw = `Basic ${Buffer.from(`${ODD.clientId}:${ODD.secret}`).toString('base64')}`;
    const res = await postForm(`${t.url}/v2.0/oidc/par`, verificationPar(), { authorization: raw });
    expectError(res, 'unauthorised_client', /form-urlencoded|not a registered client/, 400, { secrets: [ODD.secret] });
  });
});

describe.each([VERSION_2, VERSION_1])('client_secret_basic, bad input at PAR and token (Bad input) $tag', (vc) => {
  const clientId = vc.version === 2 ? 'issuer-pkce' : 'other';
  const secret = vc.version === 2 ? SECRETS.pkceIssuer : SECRETS.other;
  const b64 = (s: string) => Buffer.from(s).toString('base64');
  const MALFORMED: { name: string; header: string; error: string; names: string | RegExp }[] = [
    {
      name: 'not Basic (Bearer)',
      header: `Bearer ${b64(`${clientId}:${secret}`)}`,
      error: 'unauthorised_client',
      names: 'Basic scheme',
    },
    { name: 'not Basic (Digest)', header: 'Digest username="x"', error: 'unauthorised_client', names: 'Basic scheme' },
    { name: 'Basic without credentials', header: 'Basic', error: 'unauthorised_client', names: 'no credentials' },
    {
      name: 'bad base64 (stray characters)',
      header: 'Basic !!not*base64!!',
      error: 'unauthorised_client',
      names: 'base64',
    },
    {
      name: 'base64url, not base64',
      header: `Basic ${Buffer.from('\xfb\xff:\xfb\xff', 'latin1').toString('base64url')}`,
      error: 'unauthorised_client',
      names: 'base64',
    },
    { name: 'padding in the middle', header: 'Basic YQ==YQ==', error: 'unauthorised_client', names: 'base64' },
    {
      name: 'not UTF-8',
      header: `Basic ${Buffer.from([0xff, 0xfe, 0x3a, 0x41]).toString('base64')}`,
      error: 'unauthorised_client',
      names: 'UTF-8',
    },
    {
      name: 'no colon',
      header: `Basic ${b64(`${clientId}${secret}`)}`,
      error: 'unauthorised_client',
      names: 'no colon',
    },
    {
      name: 'a percent-encoding error in the client_id',
      header: `Basic ${b64(`${clientId}%ZZ:${secret}`)}`,
      error: 'unauthorised_client',
      names: 'client_id is not valid application/x-www-form-urlencoded',
    },
    {
      name: 'a truncated percent-escape in the secret',
      header: `Basic ${b64(`${clientId}:${secret}%E0%A4%A`)}`,
      error: 'unauthorised_client',
      names: 'client_secret is not valid application/x-www-form-urlencoded',
    },
    {
      name: 'an empty client_id',
      header: `Basic ${b64(`:${secret}`)}`,
      error: 'unauthorised_client',
      names: 'empty client_id',
    },
    {
      name: 'an empty secret',
      header: `Basic ${b64(`${clientId}:`)}`,
      error: 'unauthorised_client',
      names: 'empty client_secret',
    },
    {
      name: 'an over-long header',
      header: `Basic ${b64(`${clientId}:${'s'.repeat(6000)}`)}`,
      error: 'unauthorised_client',
      names: 'longer than 4096',
    },
    {
      name: 'an unregistered client_id',
      header: basic('nobody', secret),
      error: 'unauthorised_client',
      names: 'client_id is not a registered client',
    },
    {
      name: 'a wrong secret',
      header: basic(clientId, 'wrong-secret-0123456789'),
      error: 'unauthorised_client',
      names: 'client_secret is wrong',
    },
    {
      name: "another client's secret",
      header: basic(clientId, SECRETS.plainIssuer),
      error: 'unauthorised_client',
      names: 'client_secret is wrong',
    },
  ];

  for (const endpoint of ['par', 'token'] as const) {
    const url = () => `${t.url}${vc[endpoint]}`;
    const body = () =>
      endpoint === 'par'
        ? verificationPar()
        : { grant_type: 'authorization_code', code: randomBytes(24).toString('base64url'), redirect_uri: REDIRECT };

    for (const m of MALFORMED)
      it(`${endpoint}: ${m.name} -> 400 ${m.error}, the cause named ${vc.tag}`, async () => {
        const res = await postForm(url(), body(), { authorization: m.header });
        expectError(res, m.error, m.names);
        expect(res.headers.get('www-authenticate')).toBeNull();
      });

    it(`${endpoint}: both methods in one request (Basic and client_secret in the form) -> 400 invalid_request (RFC 6749 2.3) ${vc.tag}`, async () => {
      const res = await postForm(
        url(),
        { ...body(), client_id: clientId, client_secret: secret },
        { authorization: basic(clientId, secret) },
      );
      expectError(res, 'invalid_request', 'one method only');
    });

    it(`${endpoint}: a client_id in the form that is not the header's -> 400 invalid_request ${vc.tag}`, async () => {
      const res = await postForm(
        url(),
        { ...body(), client_id: 'issuer-plain' },
        { authorization: basic(clientId, secret) },
      );
      expectError(res, 'invalid_request', 'client_id in the form is not the client_id of the Authorization');
    });

    it(`${endpoint}: no authentication at all -> 400 unauthorised_client naming both methods ${vc.tag}`, async () => {
      const res = await postForm(url(), body());
      expectError(res, 'unauthorised_client', 'client_secret_basic');
    });

    it(`${endpoint}: client_id in the form without a secret -> 400 unauthorised_client "client_secret is missing" ${vc.tag}`, async () => {
      const res = await postForm(url(), { ...body(), client_id: clientId });
      expectError(res, 'unauthorised_client', 'client_secret is missing');
    });

    it(`${endpoint}: client_assertion (private_key_jwt) -> 400 unauthorised_client naming client_assertion ${vc.tag}`, async () => {
      const res = await postForm(url(), {
        ...body(),
        client_id: clientId,
        client_assertion_type: 'urn:ietf:params:oauth:client-assertion-type:jwt-bearer',
        client_assertion: 'eyJhbGciOiJSUzI1NiJ9.e30.c2ln',
      });
      expectError(res, 'unauthorised_client', 'client_assertion');
    });
  }
});

describe('client_secret_basic with rfc6749Errors (D4): 401 invalid_client and WWW-Authenticate', () => {
  it.each([
    ['a wrong secret', () => basic('issuer-pkce', 'wrong-secret-0123456789'), 'client_secret is wrong'],
    ['bad base64', () => 'Basic %%%', 'base64'],
    ['not Basic', () => 'Bearer abc', 'Basic scheme'],
  ])('PAR and token: %s -> 401 invalid_client, WWW-Authenticate: Basic', async (_, header, names) => {
    for (const path of ['/v2.0/oidc/par', '/v2.0/oidc/token']) {
      const res = await postForm(`${rfc.url}${path}`, verificationPar(), { authorization: header() });
      expectError(res, 'invalid_client', names, 401);
      expect(res.headers.get('www-authenticate')).toMatch(/^Basic /);
    }
  });

  it('both methods at once stays 400 invalid_request (a malformed request, not a failed authentication)', async () => {
    const res = await postForm(
      `${rfc.url}/v2.0/oidc/token`,
      { grant_type: 'authorization_code', code: 'x', redirect_uri: REDIRECT, client_secret: SECRETS.pkceIssuer },
      { authorization: basic('issuer-pkce', SECRETS.pkceIssuer) },
    );
    expectError(res, 'invalid_request', 'one method only');
  });
});

describe('client_secret_basic with openid-client (oidc.ClientSecretBasic) at its defaults', () => {
  it('Version 2: PAR, the holder, and the code exchange with HTTP Basic -> the ID token', async () => {
    const config = await oidc.discovery(
      new URL(`${t.url}/v2.0/.well-known/openid-configuration`),
      'issuer-pkce',
      undefined,
      oidc.ClientSecretBasic(SECRETS.pkceIssuer),
      { execute: [oidc.allowInsecureRequests] },
    );
    expect(config.serverMetadata().token_endpoint_auth_methods_supported).toContain('client_secret_basic');
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    const hint = await makeHint({
      clientId: 'issuer-pkce',
      secret: SECRETS.pkceIssuer,
      audience: t.url,
      claims: { FirstName: 'Ada', LastName: 'Lovelace', PinCode: '1234' },
    });
    const url = await oidc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: REDIRECT,
      scope: 'openid issue.EmployeeBadge',
      nonce,
      id_token_hint: hint,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
    const { callbackUrl } = await holderCompletesIssuance(url.href, {
      redirectUri: REDIRECT,
      wallet: await newWallet(),
      pin: '1234',
    });
    const tokens = await oidc.authorizationCodeGrant(config, new URL(callbackUrl), {
      pkceCodeVerifier: verifier,
      expectedNonce: nonce,
      idTokenExpected: true,
    });
    expect(tokens.claims()).toMatchObject({ FirstName: 'Ada', iss: t.url, aud: 'issuer-pkce' });
  });
});

describe('D17: no secret from an Authorization header reaches a log line', () => {
  it('the log of every request above carries neither a client secret nor the Basic credentials', () => {
    expect(lines.length).toBeGreaterThan(0);
    const log = lines.join('\n');
    for (const s of [...Object.values(SECRETS), ODD.secret, ODD_ENCODED(ODD.secret)]) expect(log).not.toContain(s);
    expect(log).not.toContain(basic('issuer-pkce', SECRETS.pkceIssuer).slice(6));
    expect(log).not.toMatch(/"status":5\d\d/);
  });
});
