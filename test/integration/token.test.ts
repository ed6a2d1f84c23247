/**
 * POST {base}/v2.0/oidc/token and {base}/oidc/token against the real app, with codes obtained through
 * full issuance flows (PAR, the holder's browser and dev wallet with the PIN, the redirect with the code):
 * the success response (spec: Endpoints / token, Issued ID token; D1, D2, D3), every row of the spec's
 * "Token errors" table (D4 codes), PKCE (Authentication 5; D5 `plain`), single use and lifetime of codes
 * (D16), the per-client `expiresInAsString` flag (D3) and the RFC 6749 error setting (D4).
 *
 * Version 1 issuance has no `openid` in its scope and no PKCE at PAR: Version 1 flows use client `other`
 * (no PKCE); Version 2 flows use `issuer-pkce` (PKCE required).
 */
import { createHash, randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRemoteJWKSet, decodeJwt, decodeProtectedHeader, jwtVerify } from 'jose';
import { leaks } from '../helpers/logSecrets.js';
import {
  startTestService,
  testConfig,
  SECRETS,
  REDIRECT,
  OTHER_REDIRECT,
  type TestService,
} from '../helpers/service.js';
import { makeHint, pkcePair, postForm } from '../helpers/rp.js';
import { expectError as expectErrorAnswer } from '../helpers/assertions.js';
import { holderCompletesIssuance, newWallet } from '../helpers/flows.js';
import { VERSION_1, VERSION_2, type Version as VersionPaths } from '../helpers/versions.js';

let svc: TestService;

beforeAll(async () => {
  svc = await startTestService();
});
afterAll(async () => {
  await svc?.stop();
});

const CLIENT_SECRETS: Record<string, string> = {
  'issuer-pkce': SECRETS.pkceIssuer,
  'issuer-plain': SECRETS.plainIssuer,
  other: SECRETS.other,
  'string-expiry': 'test-string-expiry-secret-0123456789',
};

type PkceMethod = 'S256' | 'plain' | 'none';

interface VersionCase extends VersionPaths {
  scope: string;
  /** the client that runs this version's issuance flows (see the file comment) */
  clientId: string;
  pkce: PkceMethod;
}

const V2: VersionCase = {
  ...VERSION_2,
  scope: VERSION_2.issue('EmployeeBadge'),
  clientId: 'issuer-pkce',
  pkce: 'S256',
};
const V1: VersionCase = { ...VERSION_1, scope: VERSION_1.issue('EmployeeBadge'), clientId: 'other', pkce: 'none' };
const VERSIONS = [V2, V1];

const PIN = '4321';
const attributes = () => ({ FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' });

interface Flow {
  base: string;
  vc: VersionCase;
  clientId: string;
  secret: string;
  redirectUri: string;
  code: string;
  state: string;
  nonce: string;
  verifier?: string;
  tokenUrl: string;
}

/**
 * A full issuance flow to a fresh code: PAR (postForm) for the given version, client and PKCE method,
 * then the holder's browser and a new dev wallet with the PIN (holderCompletesIssuance).
 */
async function issueCode(
  vc: VersionCase,
  opts: {
    service?: TestService;
    clientId?: string;
    pkce?: PkceMethod;
    redirectUri?: string;
    claims?: Record<string, unknown>;
  } = {},
): Promise<Flow> {
  const base = (opts.service ?? svc).url;
  const clientId = opts.clientId ?? vc.clientId;
  const secret = CLIENT_SECRETS[clientId];
  const pkce = opts.pkce ?? vc.pkce;
  const redirectUri = opts.redirectUri ?? REDIRECT;
  const state = randomBytes(8).toString('hex');
  const nonce = randomBytes(8).toString('hex');
  let verifier: string | undefined;
  let challenge: string | undefined;
  if (pkce === 'S256') ({ verifier, challenge } = pkcePair());
  if (pkce === 'plain') verifier = challenge = randomBytes(32).toString('base64url'); // RFC 7636: 43 chars

  const hint = await makeHint({
    clientId,
    secret,
    audience: vc.issuerAt(base),
    claims: opts.claims ?? { ...attributes(), PinCode: PIN },
  });
  const par = await postForm(`${base}${vc.prefix}/par`, {
    client_id: clientId,
    client_secret: secret,
    response_type: 'code',
    redirect_uri: redirectUri,
    scope: vc.scope,
    state,
    nonce,
    id_token_hint: hint,
    code_challenge: challenge,
    code_challenge_method: pkce === 'none' ? undefined : pkce,
  });
  expect(par.status, JSON.stringify(par.body)).toBe(201);

  const authorizeUrl = `${base}${vc.prefix}/authorize?${new URLSearchParams({ client_id: clientId, request_uri: par.body.request_uri })}`;
  const { callbackUrl } = await holderCompletesIssuance(authorizeUrl, {
    redirectUri,
    wallet: await newWallet(),
    pin: PIN,
  });
  const callback = new URL(callbackUrl);
  expect(callback.searchParams.get('error'), callbackUrl).toBeNull();
  expect(callback.searchParams.get('state')).toBe(state);
  const code = callback.searchParams.get('code');
  expect(code).toBeTruthy();
  return {
    base,
    vc,
    clientId,
    secret,
    redirectUri,
    code: code!,
    state,
    nonce,
    verifier,
    tokenUrl: `${base}${vc.prefix}/token`,
  };
}

type Params = Record<string, string | undefined>;

/** The token request a relying party makes for the flow; `overrides` replace or (undefined) remove fields. */
function redeem(flow: Flow, overrides: Params = {}) {
  return postForm(flow.tokenUrl, {
    grant_type: 'authorization_code',
    client_id: flow.clientId,
    client_secret: flow.secret,
    code: flow.code,
    redirect_uri: flow.redirectUri,
    code_verifier: flow.verifier,
    ...overrides,
  });
}

/** A token request without a flow behind it (for rows checked before the code is looked up). */
function tokenRequest(vc: VersionCase, params: Params, base = svc.url) {
  return postForm(`${base}${vc.prefix}/token`, {
    grant_type: 'authorization_code',
    client_id: vc.clientId,
    client_secret: CLIENT_SECRETS[vc.clientId],
    code: randomBytes(24).toString('base64url'),
    redirect_uri: REDIRECT,
    ...params,
  });
}

type Res = { status: number; body: any; headers: Headers };

/** A direct token error (spec: Token errors, D4; test/helpers/assertions.ts), nor this file's own client's secret in it. */
const expectError = (res: Res, error: string, names?: string | RegExp, status = 400) =>
  expectErrorAnswer(res, error, names, status, { secrets: [CLIENT_SECRETS['string-expiry']] });

function expectTokens(res: Res): void {
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  expect(typeof res.body.id_token).toBe('string');
}

describe.each(VERSIONS)('token endpoint, success $tag', (vc) => {
  it(`Endpoints / token response: 200, no-store, id_token = access_token, Bearer, scope, numeric expires_in = 60 ${vc.tag}`, async () => {
    const flow = await issueCode(vc);
    const res = await redeem(flow);
    expectTokens(res);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    // D3: headers on every token response
    expect(res.headers.get('cache-control')).toBe('no-store');
    expect(res.headers.get('pragma')).toBe('no-cache');
    // D3: access_token is the same JWT string as id_token; token_type Bearer
    expect(res.body.access_token).toBe(res.body.id_token);
    expect(res.body.token_type).toBe('Bearer');
    // spec: scope used in the initial request (Version 1 issuance: without openid)
    expect(res.body.scope).toBe(vc.scope);
    // D3: expires_in a JSON number, the token lifetime (Limits: samples show 60; D16 default 60 s)
    expect(typeof res.body.expires_in).toBe('number');
    expect(res.body.expires_in).toBe(60);
    expect(res.body.refresh_token).toBeUndefined();
  });

  it(`Issued ID token: RS256/JWT/kid header, verifiable at jwks_uri, attributes, SerialNumber, ExpiresAt, nonce, iss (D1), aud, sub (D2), iat/nbf/exp ${vc.tag}`, async () => {
    const flow = await issueCode(vc);
    const res = await redeem(flow);
    expectTokens(res);
    const idToken: string = res.body.id_token;

    // spec: Issued ID token header
    const header = decodeProtectedHeader(idToken);
    expect(header.alg).toBe('RS256');
    expect(header.typ).toBe('JWT');
    expect(typeof header.kid).toBe('string');
    expect(header.kid).not.toBe('');

    // spec Authentication 6: verifiable with the key set at the version's jwks_uri; D1 iss; aud = client_id
    const discovery = await (await fetch(`${svc.url}${vc.discovery}`)).json();
    expect(discovery.issuer).toBe(vc.issuerAt(svc.url));
    const { payload } = await jwtVerify(idToken, createRemoteJWKSet(new URL(discovery.jwks_uri)), {
      issuer: vc.issuerAt(svc.url),
      audience: flow.clientId,
      algorithms: ['RS256'],
    });
    expect(payload.iss).toBe(vc.version === 2 ? svc.url : `${svc.url}/oidc`);
    expect(payload.aud).toBe(flow.clientId);

    // the credential attributes, the request's nonce
    expect(payload).toMatchObject({ ...attributes(), nonce: flow.nonce });
    // SerialNumber: string identifier of the credential; D2: sub = SerialNumber
    expect(typeof payload.SerialNumber).toBe('string');
    expect(payload.SerialNumber).not.toBe('');
    expect(payload.sub).toBe(payload.SerialNumber);
    // ExpiresAt: ISO 8601 UTC, seconds precision, Z; EmployeeBadge validity is P30D
    expect(payload.ExpiresAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/);
    const expiresAt = Date.parse(String(payload.ExpiresAt));
    expect(Math.abs(expiresAt - (Date.now() + 30 * 86400_000))).toBeLessThan(5 * 60_000);
    // nbf, exp, iat: integer NumericDate seconds; the token lives for the token lifetime
    for (const claim of ['iat', 'nbf', 'exp'] as const) expect(Number.isInteger(payload[claim]), claim).toBe(true);
    const now = Math.floor(Date.now() / 1000);
    expect(Math.abs(payload.iat! - now)).toBeLessThan(60);
    expect(payload.nbf!).toBeLessThanOrEqual(payload.iat! + 1);
    expect(payload.exp! - payload.iat!).toBe(60);
    // never the PIN; no at_hash (the access token is the ID token itself, D3)
    expect(payload).not.toHaveProperty('PinCode');
    expect(payload).not.toHaveProperty('at_hash');
    // the grant it was bought under, hashed (src/oidc/revokedGrants.ts): a replayed code revokes it for UserInfo
    expect(payload.jti).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // as a value of its own (a timestamp or a random id may contain the same four digits)
    expect(leaks([JSON.stringify(decodeJwt(idToken))], [{ what: 'PIN', value: PIN, isolated: true }])).toEqual([]);
  });
});

describe.each(VERSIONS)('token endpoint: what the provider is handed $tag', (vc) => {
  // the edge hands oidc-provider the client's own bytes unless it changed something; either way the result is the same
  it(`RFC 6749 3.1: an empty parameter is treated as omitted (the edge re-encodes the form without it) ${vc.tag}`, async () => {
    const flow = await issueCode(vc);
    const res = await redeem(flow, { state: '', resource: '' });
    expectTokens(res);
    expect(res.body.access_token).toBe(res.body.id_token);
  });

  it(`an internal parameter (vc_hint, vc_site) sent to token is taken out, and the code redeems ${vc.tag}`, async () => {
    const flow = await issueCode(vc);
    const res = await redeem(flow, { vc_hint: 'x', vc_site: 'par' });
    expectTokens(res);
  });

  it(`a body sent as the client encoded it ('+' for spaces, percent-encoded separators) redeems ${vc.tag}`, async () => {
    const flow = await issueCode(vc);
    const body = [
      'grant_type=authorization_code',
      `client_id=${encodeURIComponent(flow.clientId)}`,
      `client_secret=${encodeURIComponent(flow.secret)}`,
      `code=${encodeURIComponent(flow.code)}`,
      `redirect_uri=${encodeURIComponent(flow.redirectUri).replace(/%3A/g, '%3a')}`,
      ...(flow.verifier ? [`code_verifier=${flow.verifier}`] : []),
    ].join('&');
    const res = await fetch(flow.tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded;charset=UTF-8' },
      body,
    });
    expect(res.status, await res.clone().text()).toBe(200);
    const json = (await res.json()) as { id_token?: string; access_token?: string };
    expect(json.access_token).toBe(json.id_token);
  });

  it(`a wrong client_secret is refused by the edge even when the body is handed on as it is -> 400 unauthorised_client ${vc.tag}`, async () => {
    const flow = await issueCode(vc);
    expectError(await redeem(flow, { client_secret: `${flow.secret}x` }), 'unauthorised_client', 'client_secret');
    expectTokens(await redeem(flow)); // the code was not spent by the refused request
  });
});

describe.each(VERSIONS)('Token errors $tag', (vc) => {
  describe('GrantType not authorization_code -> 400 unsupported_grant_type', () => {
    for (const grantType of ['client_credentials', 'refresh_token', 'password', 'authorisation_code']) {
      it(`Token errors / GrantType ${grantType} -> 400 unsupported_grant_type ${vc.tag}`, async () => {
        expectError(await tokenRequest(vc, { grant_type: grantType }), 'unsupported_grant_type');
      });
    }

    it(`Token errors / GrantType not authorization_code, with a real code: the code is not burnt ${vc.tag}`, async () => {
      const flow = await issueCode(vc);
      expectError(await redeem(flow, { grant_type: 'client_credentials' }), 'unsupported_grant_type');
      expectTokens(await redeem(flow));
    });

    it(`Token errors / GrantType missing -> 400 invalid_request naming grant_type ${vc.tag}`, async () => {
      expectError(await tokenRequest(vc, { grant_type: undefined }), 'invalid_request', 'grant_type');
    });
  });

  it(`Token errors / Code not provided -> 400 invalid_request naming code ${vc.tag}`, async () => {
    expectError(await tokenRequest(vc, { code: undefined }), 'invalid_request', 'code');
  });

  it(`Token errors / Code empty -> 400 invalid_request naming code ${vc.tag}`, async () => {
    expectError(await tokenRequest(vc, { code: '' }), 'invalid_request', 'code');
  });

  it(`Token errors / Code invalid -> 400 invalid_grant naming code ${vc.tag}`, async () => {
    expectError(
      await tokenRequest(vc, {
        code: randomBytes(32).toString('base64url'),
        code_verifier: vc.pkce === 'none' ? undefined : pkcePair().verifier,
      }),
      'invalid_grant',
      'code',
    );
  });

  it(`Token errors / Code of the other version -> 400 invalid_grant ${vc.tag}`, async () => {
    const other = vc.version === 2 ? V1 : V2;
    const flow = await issueCode(other);
    // same client and secret, sent to this version's token endpoint
    const res = await postForm(`${svc.url}${vc.prefix}/token`, {
      grant_type: 'authorization_code',
      client_id: flow.clientId,
      client_secret: flow.secret,
      code: flow.code,
      redirect_uri: flow.redirectUri,
      code_verifier: flow.verifier,
    });
    expectError(res, 'invalid_grant', 'code');
    expectTokens(await redeem(flow)); // still good at its own version
  });

  it(`Token errors / ClientId does not match the code request (right secret of the other client) -> 400 invalid_client ${vc.tag}`, async () => {
    // v2: a code of issuer-pkce redeemed by `other`; v1: a code of `other` redeemed by issuer-pkce
    const flow = await issueCode(vc);
    const intruder = flow.clientId === 'issuer-pkce' ? 'other' : 'issuer-pkce';
    const res = await redeem(flow, { client_id: intruder, client_secret: CLIENT_SECRETS[intruder] });
    expectError(res, 'invalid_client', 'client_id', 400);
    expect(res.headers.get('www-authenticate')).toBeNull();
    expectTokens(await redeem(flow)); // the rightful client still redeems it
  });

  describe('ClientId / ClientSecret: client authentication fails -> 400 unauthorised_client (D4)', () => {
    let flow: Flow;
    beforeAll(async () => {
      flow = await issueCode(vc);
    });

    const cases: { name: string; params: Params; names: string }[] = [
      { name: 'ClientId not registered', params: { client_id: 'nobody' }, names: 'client_id' },
      { name: 'ClientId missing', params: { client_id: undefined }, names: 'client_id' },
      { name: 'ClientSecret wrong', params: { client_secret: 'wrong-secret-0123456789' }, names: 'client_secret' },
      { name: 'ClientSecret missing', params: { client_secret: undefined }, names: 'client_secret' },
      { name: 'ClientSecret empty', params: { client_secret: '' }, names: 'client_secret' },
      {
        name: 'ClientSecret of another client',
        params: { client_secret: SECRETS.plainIssuer },
        names: 'client_secret',
      },
    ];
    for (const c of cases) {
      it(`Token errors / ${c.name} -> 400 unauthorised_client, no WWW-Authenticate ${vc.tag}`, async () => {
        const res = await redeem(flow, c.params);
        expectError(res, 'unauthorised_client', c.names, 400);
        expect(res.headers.get('www-authenticate')).toBeNull();
      });
    }

    it(`Authentication 1 and RFC 6749 2.3.1: a wrong secret in Authorization: Basic -> 400 unauthorised_client naming client_secret ${vc.tag}`, async () => {
      const basic = Buffer.from(`${encodeURIComponent(flow.clientId)}:wrong-secret-0123456789`).toString('base64');
      const body = new URLSearchParams({
        grant_type: 'authorization_code',
        client_id: flow.clientId,
        code: flow.code,
        redirect_uri: flow.redirectUri,
      });
      if (flow.verifier) body.set('code_verifier', flow.verifier);
      const res = await postForm(flow.tokenUrl, body, { authorization: `Basic ${basic}` });
      expectError(res, 'unauthorised_client', 'client_secret');
    });

    it(`failed client authentication does not burn the code: the client then redeems it ${vc.tag}`, async () => {
      expectTokens(await redeem(flow));
    });
  });

  it(`Token errors / RedirectUri does not match the code request (another URI) -> 400 invalid_grant naming redirect_uri ${vc.tag}`, async () => {
    const flow = await issueCode(vc);
    const res = await redeem(flow, { redirect_uri: OTHER_REDIRECT });
    expectError(res, 'invalid_grant', 'redirect_uri');
    expectTokens(await redeem(flow));
  });

  it(`Token errors / RedirectUri differs only by a trailing slash -> 400 invalid_grant naming redirect_uri ${vc.tag}`, async () => {
    const flow = await issueCode(vc);
    expectError(await redeem(flow, { redirect_uri: `${REDIRECT}/` }), 'invalid_grant', 'redirect_uri');
  });

  it(`Token errors / RedirectUri missing -> 400 invalid_request naming redirect_uri ${vc.tag}`, async () => {
    const flow = await issueCode(vc);
    const res = await redeem(flow, { redirect_uri: undefined });
    // the provider answers a missing parameter with invalid_request (RFC 6749 5.2), not the row's invalid_grant
    expectError(res, 'invalid_request', 'redirect_uri');
    expectTokens(await redeem(flow));
  });
});

describe('Token errors / Code challenge (Version 2 only) and PKCE plain (D5)', () => {
  it('Authentication 5: wrong code_verifier -> 400 invalid_grant naming code_verifier (v2)', async () => {
    const flow = await issueCode(V2);
    const res = await redeem(flow, { code_verifier: pkcePair().verifier });
    expectError(res, 'invalid_grant', 'code_verifier');
    expectTokens(await redeem(flow)); // the right verifier still works
  });

  it('Authentication 5: missing code_verifier for a PKCE code -> 400 invalid_grant naming code_verifier (v2)', async () => {
    const flow = await issueCode(V2);
    const res = await redeem(flow, { code_verifier: undefined });
    expectError(res, 'invalid_grant', 'code_verifier');
  });

  it('Authentication 5: the S256 challenge itself sent as code_verifier -> 400 invalid_grant (v2)', async () => {
    const flow = await issueCode(V2);
    const challenge = createHash('sha256').update(flow.verifier!).digest('base64url');
    expectError(await redeem(flow, { code_verifier: challenge }), 'invalid_grant', 'code_verifier');
  });

  it('RFC 7636 4.1: a code_verifier that is too short -> 400 naming code_verifier (v2)', async () => {
    const flow = await issueCode(V2);
    const res = await redeem(flow, { code_verifier: 'short' });
    expectError(res, 'invalid_request', 'code_verifier');
  });

  it('RFC 9700 2.1.1: a code_verifier sent for a code issued without code_challenge (v1 PAR, no PKCE) -> 400 invalid_grant naming code_verifier (v1)', async () => {
    const flow = await issueCode(V1);
    const res = await redeem(flow, { code_verifier: pkcePair().verifier });
    // the code is valid; what is wrong is the code_verifier, and the description has to say so (D4)
    expectError(res, 'invalid_grant', 'code_verifier');
    expectTokens(await redeem(flow, { code_verifier: undefined }));
  });

  it('D5: PKCE plain (code_challenge = verifier) redeems with that verifier (v2)', async () => {
    const flow = await issueCode(V2, { pkce: 'plain' });
    const res = await redeem(flow);
    expectTokens(res);
    expect(res.body.access_token).toBe(res.body.id_token);
  });

  it('D5: PKCE plain fails with another verifier -> 400 invalid_grant (v2)', async () => {
    const flow = await issueCode(V2, { pkce: 'plain' });
    expectError(
      await redeem(flow, { code_verifier: randomBytes(32).toString('base64url') }),
      'invalid_grant',
      'code_verifier',
    );
    // nor with the S256 form of the plain challenge (what the edge handed the provider, D5)
    const translated = createHash('sha256').update(flow.verifier!).digest('base64url');
    expectError(await redeem(flow, { code_verifier: translated }), 'invalid_grant', 'code_verifier');
    expectTokens(await redeem(flow));
  });

  it('D5: PKCE plain code without code_verifier -> 400 invalid_grant (v2)', async () => {
    const flow = await issueCode(V2, { pkce: 'plain' });
    expectError(await redeem(flow, { code_verifier: undefined }), 'invalid_grant', 'code_verifier');
  });
});

describe.each(VERSIONS)('D16: single use and lifetime of codes $tag', (vc) => {
  it(`D16: a code redeemed twice -> the second is 400 invalid_grant ${vc.tag}`, async () => {
    const flow = await issueCode(vc);
    expectTokens(await redeem(flow));
    expectError(await redeem(flow), 'invalid_grant', 'code');
  });

  it(`D16: 50 concurrent redemptions of one code -> exactly one 200, the rest 400 invalid_grant, never 500 ${vc.tag}`, async () => {
    const flow = await issueCode(vc);
    const results = await Promise.all(Array.from({ length: 50 }, () => redeem(flow)));
    const statuses = results.map((r) => r.status);
    expect(statuses.filter((s) => s >= 500)).toEqual([]);
    expect(statuses.filter((s) => s === 200)).toHaveLength(1);
    const failures = results.filter((r) => r.status !== 200);
    expect(failures).toHaveLength(49);
    for (const r of failures) expectError(r, 'invalid_grant');
  });
});

describe('D16: an expired code -> 400 invalid_grant (lifetimes.code = 1)', () => {
  let short: TestService;
  beforeAll(async () => {
    short = await startTestService({ lifetimes: { code: 1 } });
  });
  afterAll(async () => {
    await short?.stop();
  });

  for (const vc of VERSIONS) {
    it(`D16: a code redeemed after its lifetime -> 400 invalid_grant ${vc.tag}`, async () => {
      const flow = await issueCode(vc, { service: short });
      await new Promise((r) => setTimeout(r, 2000));
      expectError(await redeem(flow), 'invalid_grant', 'code');
    });
  }
});

describe('D3: per-client expiresInAsString flag', () => {
  let flagged: TestService;
  beforeAll(async () => {
    const clients = [
      ...(testConfig(0).clients as Record<string, unknown>[]),
      {
        clientId: 'string-expiry',
        clientSecret: CLIENT_SECRETS['string-expiry'],
        redirectUris: [REDIRECT],
        pkce: 'optional',
        scopes: ['issue.EmployeeBadge'],
        expiresInAsString: true,
      },
    ];
    flagged = await startTestService({ clients });
  });
  afterAll(async () => {
    await flagged?.stop();
  });

  for (const vc of VERSIONS) {
    it(`D3: a client flagged expiresInAsString gets expires_in as a string of digits ${vc.tag}`, async () => {
      const flow = await issueCode(vc, { service: flagged, clientId: 'string-expiry' });
      const res = await redeem(flow);
      expectTokens(res);
      expect(typeof res.body.expires_in).toBe('string');
      expect(res.body.expires_in).toMatch(/^\d+$/);
      expect(res.body.expires_in).toBe('60');
      expect(res.body.access_token).toBe(res.body.id_token);
    });

    it(`D3: unflagged clients of the same service still get a number ${vc.tag}`, async () => {
      const flow = await issueCode(vc, { service: flagged });
      const res = await redeem(flow);
      expectTokens(res);
      expect(res.body.expires_in).toBe(60);
    });
  }
});

describe('D4: rfc6749Errors = true', () => {
  let rfc: TestService;
  beforeAll(async () => {
    rfc = await startTestService({ rfc6749Errors: true });
  });
  afterAll(async () => {
    await rfc?.stop();
  });

  function expectRfcClientError(res: Res): void {
    expectError(res, 'invalid_client', undefined, 401);
    expect(res.headers.get('www-authenticate')).toBeTruthy();
  }

  for (const vc of VERSIONS) {
    describe(`${vc.tag}`, () => {
      let flow: Flow;
      beforeAll(async () => {
        flow = await issueCode(vc, { service: rfc });
      });

      const failures: [string, Params][] = [
        ['unknown client', { client_id: 'nobody' }],
        ['wrong secret', { client_secret: 'wrong-secret-0123456789' }],
        ['missing secret', { client_secret: undefined }],
      ];
      for (const [name, params] of failures) {
        it(`D4: failed client authentication at token (${name}) -> 401 invalid_client with WWW-Authenticate ${vc.tag}`, async () => {
          expectRfcClientError(await redeem(flow, params));
        });

        it(`D4: failed client authentication at PAR (${name}) -> 401 invalid_client with WWW-Authenticate ${vc.tag}`, async () => {
          const hint = await makeHint({
            clientId: vc.clientId,
            secret: CLIENT_SECRETS[vc.clientId],
            audience: vc.issuerAt(rfc.url),
            claims: attributes(),
          });
          const { challenge } = pkcePair();
          const res = await postForm(`${rfc.url}${vc.prefix}/par`, {
            client_secret: CLIENT_SECRETS[vc.clientId],
            response_type: 'code',
            redirect_uri: REDIRECT,
            scope: vc.scope,
            nonce: 'n',
            id_token_hint: hint,
            code_challenge: vc.pkce === 'none' ? undefined : challenge,
            code_challenge_method: vc.pkce === 'none' ? undefined : 'S256',
            ...{ client_id: vc.clientId, ...params },
          });
          expectRfcClientError(res);
        });
      }

      it(`D4: the code still redeems with the right credentials, 200 ${vc.tag}`, async () => {
        expectTokens(await redeem(flow));
      });

      it(`D4 / RFC 6749 5.2: a code issued to another client (right secret of that client) -> 400 invalid_grant, not invalid_client ${vc.tag}`, async () => {
        const own = await issueCode(vc, { service: rfc });
        const intruder = own.clientId === 'issuer-pkce' ? 'other' : 'issuer-pkce';
        const res = await redeem(own, { client_id: intruder, client_secret: CLIENT_SECRETS[intruder] });
        // RFC 6749 5.2: invalid_grant = "... was issued to another client"; invalid_client = client authentication failed
        expectError(res, 'invalid_grant', 'client_id', 400);
      });

      it(`D4 / RFC 6749 5.2: the other token rows keep their codes (invalid_grant, unsupported_grant_type) ${vc.tag}`, async () => {
        expectError(await tokenRequest(vc, { code: 'not-a-code' }, rfc.url), 'invalid_grant');
        expectError(await tokenRequest(vc, { grant_type: 'password' }, rfc.url), 'unsupported_grant_type');
      });
    });
  }
});
