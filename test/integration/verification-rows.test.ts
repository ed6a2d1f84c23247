/**
 * Verification requests against the real app, row by row: the scope rules for verification (Scope format),
 * the "PAR errors" table for verification requests, the "Version 1 non-PAR authorise" table at
 * /oidc/authorizev1 (discovered from the root document), the Version 1 non-PAR token success and failure
 * (headers, D3 `state`) and the ID token of a verification (claims, D1 `iss`, D2 `sub`), verified with the
 * key set at the `jwks_uri` of the version that served the request. The holder's wallet holds credentials
 * issued through the issuance flow.
 */
import { randomBytes } from 'node:crypto';
import { calculateJwkThumbprint, createRemoteJWKSet, decodeProtectedHeader, jwtVerify, type JWK } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, SECRETS, REDIRECT, OTHER_REDIRECT, type TestService } from '../helpers/service.js';
import { Browser, makeHint, pkcePair, postForm } from '../helpers/rp.js';
import { expectError } from '../helpers/assertions.js';
import { holderCompletesIssuance, holderCompletesVerification, newWallet, requestFromPage } from '../helpers/flows.js';
import type { DevWallet } from '../../src/wallet/holder.js';

let t: TestService;
let url: string;
let wallet: DevWallet;

const badge = { FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' };
const card = { MemberName: 'Ada Lovelace', MemberNumber: 1815 };

type Params = Record<string, string | undefined>;

const CLIENTS = {
  'issuer-pkce': SECRETS.pkceIssuer,
  'issuer-plain': SECRETS.plainIssuer,
  other: SECRETS.other,
} as const;
type ClientId = keyof typeof CLIENTS;

/** Issues a credential into the wallet through the issuance flow (Version 2 PAR). */
async function issue(type: 'EmployeeBadge' | 'MembershipCard', claims: Record<string, unknown>): Promise<void> {
  const { challenge } = pkcePair();
  const hint = await makeHint({ clientId: 'issuer-pkce', secret: SECRETS.pkceIssuer, audience: url, claims });
  const par = await postForm(`${url}/v2.0/oidc/par`, {
    client_id: 'issuer-pkce',
    client_secret: SECRETS.pkceIssuer,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: `openid issue.${type}`,
    nonce: 'n',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    id_token_hint: hint,
  });
  expect(par.status, JSON.stringify(par.body)).toBe(201);
  await holderCompletesIssuance(
    `${url}/v2.0/oidc/authorize?client_id=issuer-pkce&request_uri=${encodeURIComponent(par.body.request_uri)}`,
    { redirectUri: REDIRECT, wallet },
  );
}

beforeAll(async () => {
  t = await startTestService();
  url = t.url;
  wallet = await newWallet();
  await issue('EmployeeBadge', badge);
  await issue('MembershipCard', card);
});
afterAll(async () => {
  await t?.stop();
});

const newState = () => `st-${randomBytes(8).toString('hex')}`;
const newNonce = () => `n-${randomBytes(8).toString('hex')}`;

function expectCreated(res: { status: number; body: any }): void {
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.body.request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:.+/);
  expect(Number.isInteger(res.body.expires_in)).toBe(true);
}

// ------------------------------------------------------------------------------------------------
// PAR: scope rules and the PAR errors table, for verification requests, both versions
// ------------------------------------------------------------------------------------------------

interface ParVersion {
  v: 'v1' | 'v2';
  par: string;
  /** Version 2 PAR takes PKCE (required for issuer-pkce); Version 1 PAR refuses it */
  pkceAtPar: boolean;
}
const PAR_VERSIONS: ParVersion[] = [
  { v: 'v2', par: '/v2.0/oidc/par', pkceAtPar: true },
  { v: 'v1', par: '/oidc/par', pkceAtPar: false },
];

/** A verification PAR request: `other` (EmployeeBadge, PKCE optional) unless overridden. */
function verificationPar(vc: ParVersion, overrides: Params = {}, clientId: ClientId = 'other'): Params {
  const base: Params = {
    client_id: clientId,
    client_secret: CLIENTS[clientId],
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid EmployeeBadge',
    nonce: newNonce(),
    state: newState(),
  };
  if (clientId === 'issuer-pkce' && vc.pkceAtPar)
    Object.assign(base, { code_challenge: pkcePair().challenge, code_challenge_method: 'S256' });
  return { ...base, ...overrides };
}

async function par(vc: ParVersion, params: Params) {
  const res = await postForm(`${url}${vc.par}`, params);
  expect(res.status, `never a 500: ${JSON.stringify(res.body)}`).toBeLessThan(500);
  return res;
}

describe.each(PAR_VERSIONS)('verification at PAR ($v)', (vc) => {
  const tag = `(${vc.v} PAR)`;

  describe('Scope format / Verification: one or more <CredentialType> scopes; must contain openid', () => {
    it(`Scope format / Verification: openid + one type -> 201 ${tag}`, async () => {
      expectCreated(await par(vc, verificationPar(vc)));
    });

    it(`Scope format / Verification: openid + two types (EmployeeBadge MembershipCard) -> 201 ${tag}`, async () => {
      expectCreated(
        await par(vc, verificationPar(vc, { scope: 'openid EmployeeBadge MembershipCard' }, 'issuer-pkce')),
      );
    });

    it(`Scope format / Verification: openid anywhere in the list (MembershipCard openid) -> 201 ${tag}`, async () => {
      expectCreated(await par(vc, verificationPar(vc, { scope: 'MembershipCard openid' }, 'issuer-plain')));
    });

    it(`Scope format / Verification without openid -> 400 invalid_scope ${tag}`, async () => {
      expectError(await par(vc, verificationPar(vc, { scope: 'EmployeeBadge' })), 'invalid_scope', 'openid');
    });

    it(`Scope format / Verification of two types without openid -> 400 invalid_scope ${tag}`, async () => {
      expectError(
        await par(vc, verificationPar(vc, { scope: 'EmployeeBadge MembershipCard' }, 'issuer-pkce')),
        'invalid_scope',
        'openid',
      );
    });

    it(`Scope format / openid alone (no credential type) -> 400 invalid_scope ${tag}`, async () => {
      expectError(await par(vc, verificationPar(vc, { scope: 'openid' })), 'invalid_scope', 'scope');
    });

    it(`PAR errors / Scope not registered: a type not registered for the client (other asks MembershipCard) -> 400 invalid_scope ${tag}`, async () => {
      expectError(
        await par(vc, verificationPar(vc, { scope: 'openid MembershipCard' })),
        'invalid_scope',
        'MembershipCard',
      );
    });

    it(`PAR errors / Scope not registered: one of two types not registered (issuer-plain asks EmployeeBadge too) -> 400 invalid_scope ${tag}`, async () => {
      expectError(
        await par(vc, verificationPar(vc, { scope: 'openid MembershipCard EmployeeBadge' }, 'issuer-plain')),
        'invalid_scope',
        'EmployeeBadge',
      );
    });

    it(`PAR errors / Scope not registered: an unknown credential type -> 400 invalid_scope ${tag}`, async () => {
      expectError(await par(vc, verificationPar(vc, { scope: 'openid Passport' })), 'invalid_scope', 'Passport');
    });

    it(`PAR errors / Scope not provided -> 400 invalid_scope ${tag}`, async () => {
      expectError(await par(vc, verificationPar(vc, { scope: undefined })), 'invalid_scope', 'scope');
    });

    it(`Scope format: mixing issue.EmployeeBadge and MembershipCard (with openid) -> 400 invalid_scope ${tag}`, async () => {
      expectError(
        await par(vc, verificationPar(vc, { scope: 'openid issue.EmployeeBadge MembershipCard' }, 'issuer-pkce')),
        'invalid_scope',
        'mix',
      );
    });

    it(`Scope format: mixing issue.EmployeeBadge and MembershipCard (without openid) -> 400 invalid_scope ${tag}`, async () => {
      expectError(
        await par(vc, verificationPar(vc, { scope: 'issue.EmployeeBadge MembershipCard' }, 'issuer-pkce')),
        'invalid_scope',
        'mix',
      );
    });

    it(`PAR errors / IdTokenHint: a verification request carrying an id_token_hint -> 400 invalid_request ${tag}`, async () => {
      const hint = await makeHint({
        clientId: 'other',
        secret: SECRETS.other,
        audience: vc.v === 'v2' ? url : `${url}/oidc`,
        claims: badge,
      });
      expectError(await par(vc, verificationPar(vc, { id_token_hint: hint })), 'invalid_request', 'id_token_hint');
    });
  });

  describe('PAR errors table, verification requests', () => {
    it(`PAR errors / ClientId not registered -> 400 unauthorised_client ${tag}`, async () => {
      expectError(await par(vc, verificationPar(vc, { client_id: 'nobody' })), 'unauthorised_client', 'client_id');
    });

    it(`PAR errors / ClientId missing -> 400 unauthorised_client ${tag}`, async () => {
      expectError(await par(vc, verificationPar(vc, { client_id: undefined })), 'unauthorised_client', 'client_id');
    });

    it(`PAR errors / ClientSecret wrong -> 400 unauthorised_client ${tag}`, async () => {
      expectError(
        await par(vc, verificationPar(vc, { client_secret: 'wrong-secret' })),
        'unauthorised_client',
        'client_secret',
      );
    });

    it(`PAR errors / ClientSecret missing -> 400 unauthorised_client ${tag}`, async () => {
      expectError(
        await par(vc, verificationPar(vc, { client_secret: undefined })),
        'unauthorised_client',
        'client_secret',
      );
    });

    it(`PAR errors / ClientSecret of another client -> 400 unauthorised_client ${tag}`, async () => {
      expectError(
        await par(vc, verificationPar(vc, { client_secret: SECRETS.plainIssuer })),
        'unauthorised_client',
        'client',
      );
    });

    it(`PAR errors / RedirectUri not registered on client -> 400 invalid_request ${tag}`, async () => {
      expectError(
        await par(vc, verificationPar(vc, { redirect_uri: 'https://evil.example/cb' })),
        'invalid_request',
        'redirect_uri',
      );
    });

    it(`PAR errors / RedirectUri registered for another client only (OTHER_REDIRECT) -> 400 invalid_request ${tag}`, async () => {
      expectError(
        await par(vc, verificationPar(vc, { redirect_uri: OTHER_REDIRECT })),
        'invalid_request',
        'redirect_uri',
      );
    });

    it(`PAR errors / RedirectUri missing -> 400 invalid_request ${tag}`, async () => {
      expectError(await par(vc, verificationPar(vc, { redirect_uri: undefined })), 'invalid_request', 'redirect_uri');
    });

    it(`PAR errors / ResponseType not code (token) -> 400 unsupported_response_type ${tag}`, async () => {
      expectError(
        await par(vc, verificationPar(vc, { response_type: 'token' })),
        'unsupported_response_type',
        'response_type',
      );
    });

    it(`PAR errors / ResponseType not code (vp_token) -> 400 unsupported_response_type ${tag}`, async () => {
      expectError(
        await par(vc, verificationPar(vc, { response_type: 'vp_token' })),
        'unsupported_response_type',
        'response_type',
      );
    });

    it(`PAR errors / ResponseType missing -> 400 invalid_request ${tag}`, async () => {
      expectError(await par(vc, verificationPar(vc, { response_type: undefined })), 'invalid_request', 'response_type');
    });

    it(`PAR errors / ResponseMode not query (fragment) -> 400 invalid_request ${tag}`, async () => {
      expectError(
        await par(vc, verificationPar(vc, { response_mode: 'fragment' })),
        'invalid_request',
        'response_mode',
      );
    });

    it(`PAR errors / ResponseMode not query (direct_post) -> 400 invalid_request ${tag}`, async () => {
      expectError(
        await par(vc, verificationPar(vc, { response_mode: 'direct_post' })),
        'invalid_request',
        'response_mode',
      );
    });

    it(`PAR errors / ResponseMode query is accepted -> 201 ${tag}`, async () => {
      expectCreated(await par(vc, verificationPar(vc, { response_mode: 'query' })));
    });
  });
});

// ------------------------------------------------------------------------------------------------
// Version 1 non-PAR authorise (/oidc/authorizev1, discovered at the root document)
// ------------------------------------------------------------------------------------------------

interface Discovery {
  issuer: string;
  authorization_endpoint: string;
  token_endpoint: string;
  jwks_uri: string;
  pushed_authorization_request_endpoint?: string;
}

async function discover(path: string): Promise<Discovery> {
  const res = await fetch(`${url}${path}`);
  expect(res.status).toBe(200);
  return (await res.json()) as Discovery;
}

/** One GET without following redirects; never a 500; direct errors as JSON (as an API client asks for them). */
async function get(u: string): Promise<Response> {
  const res = await new Browser(REDIRECT).get(u, 'application/json, text/html;q=0.5');
  expect(res.status, 'never a 500').toBeLessThan(500);
  return res;
}

async function expectDirectError(res: Response, error: string, names: string | RegExp): Promise<void> {
  const text = await res.text();
  expect(res.status, text).toBe(400);
  expect(res.headers.get('location'), 'a direct error must not redirect').toBeNull();
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  const body = JSON.parse(text);
  expect(body.error).toBe(error);
  if (typeof names === 'string') expect(body.error_description).toContain(names);
  else expect(body.error_description).toMatch(names);
}

/** Follows to the client's redirect URI; returns its query. */
async function followToClient(u: string): Promise<URLSearchParams> {
  const out = await new Browser(REDIRECT).follow(u);
  if (out.res) expect(out.res.status, `never a 500: ${out.html?.slice(0, 200)}`).toBeLessThan(500);
  expect(
    out.final.startsWith(REDIRECT),
    `expected a redirect to the client, stopped at ${out.final} (${out.res?.status}): ${out.html?.slice(0, 300)}`,
  ).toBe(true);
  return new URL(out.final).searchParams;
}

function expectRedirectedError(q: URLSearchParams, error: string, names: string | RegExp, state: string): void {
  expect(q.get('error'), q.toString()).toBe(error);
  const description = q.get('error_description') ?? '';
  if (typeof names === 'string') expect(description).toContain(names);
  else expect(description).toMatch(names);
  expect(q.get('state')).toBe(state);
  expect(q.get('code')).toBeNull();
  expect(q.get('iss')).toBe(`${url}/oidc`); // D1, RFC 9207
}

describe('Version 1 non-PAR authorise (/oidc/authorizev1)', () => {
  let endpoint: string;
  beforeAll(async () => {
    const doc = await discover('/.well-known/openid-configuration');
    endpoint = doc.authorization_endpoint;
  });

  /** A valid Version 1 non-PAR verification request for issuer-pkce, with S256 PKCE. */
  function query(overrides: Params = {}): { href: string; state: string; verifier: string } {
    const { verifier, challenge } = pkcePair();
    const state = overrides.state ?? newState();
    const params: Params = {
      client_id: 'issuer-pkce',
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid EmployeeBadge',
      nonce: newNonce(),
      state,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ...overrides,
    };
    const u = new URL(endpoint);
    for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, v);
    return { href: u.href, state, verifier };
  }

  it('Version 1 non-PAR set: the root document names /oidc/authorizev1, /oidc/token and the root jwks; issuer {base_url}/oidc', async () => {
    const doc = await discover('/.well-known/openid-configuration');
    expect(doc.authorization_endpoint).toBe(`${url}/oidc/authorizev1`);
    expect(doc.token_endpoint).toBe(`${url}/oidc/token`);
    expect(doc.jwks_uri).toBe(`${url}/.well-known/openid-configuration/jwks`);
    expect(doc.issuer).toBe(`${url}/oidc`);
    expect(doc.pushed_authorization_request_endpoint).toBeUndefined();
  });

  it('Version 1 non-PAR authorise: success -> the prompt page (200 HTML at /interaction/v1/...) with an openid4vp:// link', async () => {
    const out = await new Browser(REDIRECT).follow(query().href);
    expect(out.final.startsWith(REDIRECT), `redirected to the client: ${out.final}`).toBe(false);
    expect(out.res!.status, out.html?.slice(0, 300)).toBe(200);
    expect(out.res!.headers.get('content-type')).toMatch(/^text\/html/);
    expect(new URL(out.final).pathname).toMatch(/^\/interaction\/v1\//);
    const link = requestFromPage(out.html!);
    const ref = new URL(link);
    expect(ref.searchParams.get('client_id')).toBeTruthy();
    expect(ref.searchParams.get('request_uri')).toMatch(/^http/);
  });

  it('Version 1 non-PAR authorise / ClientId not provided -> 400 invalid_request', async () => {
    await expectDirectError(await get(query({ client_id: undefined }).href), 'invalid_request', 'client_id');
  });

  it('Version 1 non-PAR authorise / ClientId not registered -> 400 invalid_request', async () => {
    await expectDirectError(await get(query({ client_id: 'nobody' }).href), 'invalid_request', 'client_id');
  });

  it('Version 1 non-PAR authorise / RedirectUri not registered in client -> 400 invalid_request (no redirect)', async () => {
    await expectDirectError(
      await get(query({ redirect_uri: 'https://evil.example/cb' }).href),
      'invalid_request',
      'redirect_uri',
    );
  });

  it('Version 1 non-PAR authorise / RedirectUri registered for another client only -> 400 invalid_request (no redirect)', async () => {
    await expectDirectError(
      await get(query({ client_id: 'other', redirect_uri: OTHER_REDIRECT }).href),
      'invalid_request',
      'redirect_uri',
    );
  });

  it('Version 1 non-PAR authorise / RedirectUri not registered, with other errors too (bad scope, response_type) -> still 400, no redirect', async () => {
    const u = query({ redirect_uri: 'https://evil.example/cb', scope: 'openid Passport', response_type: 'token' }).href;
    await expectDirectError(await get(u), 'invalid_request', 'redirect_uri');
  });

  it('Version 1 non-PAR authorise / Scope not registered (other asks MembershipCard) -> redirected invalid_scope with state', async () => {
    const { href, state } = query({ client_id: 'other', scope: 'openid MembershipCard' });
    expectRedirectedError(await followToClient(href), 'invalid_scope', 'MembershipCard', state);
  });

  it('Version 1 non-PAR authorise / Scope of an unknown type -> redirected invalid_scope with state', async () => {
    const { href, state } = query({ scope: 'openid Passport' });
    expectRedirectedError(await followToClient(href), 'invalid_scope', 'Passport', state);
  });

  it('Version 1 non-PAR authorise / Scope not provided -> redirected invalid_scope with state', async () => {
    const { href, state } = query({ scope: undefined });
    expectRedirectedError(await followToClient(href), 'invalid_scope', 'scope', state);
  });

  it('Version 1 non-PAR authorise / Scope without openid ("must contain openid") -> redirected invalid_scope with state', async () => {
    const { href, state } = query({ scope: 'EmployeeBadge' });
    expectRedirectedError(await followToClient(href), 'invalid_scope', 'openid', state);
  });

  it('Version 1 non-PAR authorise / ResponseType not provided -> redirected invalid_request with state', async () => {
    const { href, state } = query({ response_type: undefined });
    expectRedirectedError(await followToClient(href), 'invalid_request', 'response_type', state);
  });

  it('Version 1 non-PAR authorise / ResponseType not code (token) -> redirected unsupported_response_type with state', async () => {
    const { href, state } = query({ response_type: 'token' });
    expectRedirectedError(await followToClient(href), 'unsupported_response_type', 'response_type', state);
  });

  it('Version 1 non-PAR authorise / ResponseType not code (code id_token) -> redirected unsupported_response_type with state', async () => {
    const { href, state } = query({ response_type: 'code id_token' });
    expectRedirectedError(await followToClient(href), 'unsupported_response_type', 'response_type', state);
  });

  it('Version 1 non-PAR authorise / ResponseMode not query (fragment) -> redirected invalid_request with state', async () => {
    const { href, state } = query({ response_mode: 'fragment' });
    expectRedirectedError(await followToClient(href), 'invalid_request', 'response_mode', state);
  });

  it('Version 1 non-PAR authorise / ResponseMode not query (form_post) -> redirected invalid_request with state', async () => {
    const { href, state } = query({ response_mode: 'form_post' });
    expectRedirectedError(await followToClient(href), 'invalid_request', 'response_mode', state);
  });

  it('Version 1 non-PAR authorise / ResponseMode query is accepted -> the prompt page', async () => {
    const out = await new Browser(REDIRECT).follow(query({ response_mode: 'query' }).href);
    expect(out.res?.status, out.final).toBe(200);
    requestFromPage(out.html!);
  });

  it('Version 1 non-PAR authorise / nonce "Required" -> redirected invalid_request with state', async () => {
    const { href, state } = query({ nonce: undefined });
    expectRedirectedError(await followToClient(href), 'invalid_request', 'nonce', state);
  });

  it('Version 1 non-PAR authorise / code_challenge "Required": missing, PKCE-required client -> redirected invalid_request with state', async () => {
    const { href, state } = query({ code_challenge: undefined, code_challenge_method: undefined });
    expectRedirectedError(await followToClient(href), 'invalid_request', 'code_challenge', state);
  });

  it('Version 1 non-PAR authorise / code_challenge "Required" even for a PKCE-optional client (issuer-plain) -> redirected invalid_request (D5)', async () => {
    const { href, state } = query({
      client_id: 'issuer-plain',
      scope: 'openid MembershipCard',
      code_challenge: undefined,
      code_challenge_method: undefined,
    });
    expectRedirectedError(await followToClient(href), 'invalid_request', 'code_challenge', state);
  });

  it('Version 1 non-PAR authorise / code_challenge_method "Required": missing with a challenge -> redirected invalid_request', async () => {
    const { href, state } = query({ code_challenge_method: undefined });
    expectRedirectedError(await followToClient(href), 'invalid_request', 'code_challenge_method', state);
  });

  it('Version 1 non-PAR authorise / code_challenge_method not S256 or plain (S512) -> redirected invalid_request', async () => {
    const { href, state } = query({ code_challenge_method: 'S512' });
    expectRedirectedError(await followToClient(href), 'invalid_request', 'code_challenge_method', state);
  });

  it('Versioning / Non-PAR is verification only: an issuance scope (issue.MembershipCard) at authorizev1 -> redirected invalid_scope', async () => {
    const { href, state } = query({ client_id: 'issuer-plain', scope: 'issue.MembershipCard' });
    expectRedirectedError(await followToClient(href), 'invalid_scope', 'scope', state);
  });

  it('Versioning / Non-PAR is verification only: an issuance scope with openid (openid issue.EmployeeBadge) at authorizev1 -> redirected invalid_scope', async () => {
    const { href, state } = query({ scope: 'openid issue.EmployeeBadge' });
    expectRedirectedError(await followToClient(href), 'invalid_scope', 'scope', state);
  });

  it('Version 1 non-PAR authorise: a request_uri at authorizev1 -> 400 invalid_request (PAR requests go to /oidc/authorize)', async () => {
    const pushed = await par(PAR_VERSIONS[1], verificationPar(PAR_VERSIONS[1]));
    expectCreated(pushed);
    await expectDirectError(
      await get(`${endpoint}?client_id=other&request_uri=${encodeURIComponent(pushed.body.request_uri)}`),
      'invalid_request',
      'request_uri',
    );
  });

  it('Version 1 non-PAR authorise: a request_uri alongside full parameters -> 400 invalid_request (never a redirect)', async () => {
    const pushed = await par(PAR_VERSIONS[1], verificationPar(PAR_VERSIONS[1]));
    await expectDirectError(
      await get(query({ client_id: 'other', request_uri: pushed.body.request_uri }).href),
      'invalid_request',
      'request_uri',
    );
  });

  it('Version 1 non-PAR authorise: an id_token_hint on a verification request -> redirected invalid_request', async () => {
    const hint = await makeHint({
      clientId: 'issuer-pkce',
      secret: SECRETS.pkceIssuer,
      audience: `${url}/oidc`,
      claims: badge,
    });
    const { href, state } = query({ id_token_hint: hint });
    expectRedirectedError(await followToClient(href), 'invalid_request', 'id_token_hint', state);
  });
});

// ------------------------------------------------------------------------------------------------
// Full flows: the token response and the ID token of a verification
// ------------------------------------------------------------------------------------------------

interface FlowCase {
  name: string;
  v: 'v1' | 'v2';
  discovery: string;
  par: boolean;
  pkce: boolean;
  issuer: () => string;
}
const FLOWS: FlowCase[] = [
  {
    name: 'Version 2, PAR',
    v: 'v2',
    discovery: '/v2.0/.well-known/openid-configuration',
    par: true,
    pkce: true,
    issuer: () => url,
  },
  {
    name: 'Version 2, without PAR',
    v: 'v2',
    discovery: '/v2.0/.well-known/openid-configuration',
    par: false,
    pkce: true,
    issuer: () => url,
  },
  {
    name: 'Version 1, PAR',
    v: 'v1',
    discovery: '/oidc/.well-known/openid-configuration',
    par: true,
    pkce: false,
    issuer: () => `${url}/oidc`,
  },
  {
    name: 'Version 1, without PAR (root document)',
    v: 'v1',
    discovery: '/.well-known/openid-configuration',
    par: false,
    pkce: true,
    issuer: () => `${url}/oidc`,
  },
];

interface Completed {
  doc: Discovery;
  code: string;
  state?: string;
  nonce: string;
  verifier?: string;
  callback: URLSearchParams;
}

/** RP starts a verification (discovered endpoints), the holder presents from the wallet, the browser returns with a code. */
async function verify(
  c: FlowCase,
  scope: string,
  opts: { clientId?: ClientId; state?: string | null } = {},
): Promise<Completed> {
  const clientId = opts.clientId ?? 'issuer-pkce';
  const doc = await discover(c.discovery);
  const nonce = newNonce();
  const state = opts.state === null ? undefined : (opts.state ?? newState());
  const pkce = c.pkce ? pkcePair() : undefined;
  const params: Params = {
    client_id: clientId,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope,
    nonce,
    state,
    code_challenge: pkce?.challenge,
    code_challenge_method: pkce ? 'S256' : undefined,
  };
  let authorize: URL;
  if (c.par) {
    const pushed = await postForm(doc.pushed_authorization_request_endpoint!, {
      ...params,
      client_secret: CLIENTS[clientId],
    });
    expectCreated(pushed);
    authorize = new URL(doc.authorization_endpoint);
    authorize.searchParams.set('client_id', clientId);
    authorize.searchParams.set('request_uri', pushed.body.request_uri);
  } else {
    authorize = new URL(doc.authorization_endpoint);
    for (const [k, v] of Object.entries(params)) if (v !== undefined) authorize.searchParams.set(k, v);
  }
  const { callbackUrl, presented } = await holderCompletesVerification(authorize.href, {
    redirectUri: REDIRECT,
    wallet,
  });
  expect(presented.status, JSON.stringify(presented.body)).toBe(200);
  const callback = new URL(callbackUrl).searchParams;
  expect(callback.get('error'), callback.toString()).toBeNull();
  expect(callback.get('code')).toBeTruthy();
  if (state !== undefined) expect(callback.get('state')).toBe(state);
  return { doc, code: callback.get('code')!, state, nonce, verifier: pkce?.verifier, callback };
}

async function redeem(flow: Completed, opts: { clientId?: ClientId; verifier?: string } = {}) {
  const clientId = opts.clientId ?? 'issuer-pkce';
  return postForm(flow.doc.token_endpoint, {
    grant_type: 'authorization_code',
    client_id: clientId,
    client_secret: CLIENTS[clientId],
    code: flow.code,
    redirect_uri: REDIRECT,
    code_verifier: opts.verifier ?? flow.verifier,
  });
}

async function thumbprintOf(vctSuffix: string): Promise<string> {
  const held = wallet.list().find((s) => s.vct?.endsWith(vctSuffix))!;
  const { d: _d, ...holderPublic } = held.holderKey as JWK;
  return calculateJwkThumbprint(holderPublic);
}

/** Claims every ID token carries (`jti` names its grant: docs/decisions.md, "Revocation with the grant"); all others must be credential attributes. */
const REGISTERED = new Set(['iss', 'sub', 'aud', 'exp', 'iat', 'nbf', 'nonce', 'jti']);

function attributeClaims(claims: Record<string, unknown>): Record<string, unknown> {
  return Object.fromEntries(Object.entries(claims).filter(([k]) => !REGISTERED.has(k)));
}

describe('Version 1 non-PAR token (/oidc/token after /oidc/authorizev1)', () => {
  const c = FLOWS[3];

  it("Version 1 non-PAR token success: 200, Cache-Control no-store, Pragma no-cache, id_token, and state = the authorise request's state (D3)", async () => {
    const flow = await verify(c, 'openid EmployeeBadge');
    const res = await redeem(flow);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toContain('no-store');
    expect(res.headers.get('pragma')).toBe('no-cache');
    expect(typeof res.body.id_token).toBe('string');
    expect(res.body.state).toBe(flow.state);
    // D3: the field table too
    expect(res.body.access_token).toBe(res.body.id_token);
    expect(res.body.token_type).toBe('Bearer');
    expect(res.body.scope).toBe('openid EmployeeBadge');
    expect(typeof res.body.expires_in).toBe('number');
  });

  it('Version 1 non-PAR token success without a state on the request: no state in the token response', async () => {
    const flow = await verify(c, 'openid EmployeeBadge', { state: null });
    const res = await redeem(flow);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    expect(res.body.state).toBeUndefined();
  });

  it('D3: only Version 1 non-PAR carries state: Version 1 PAR and Version 2 token responses do not', async () => {
    for (const other of [FLOWS[0], FLOWS[2]]) {
      const flow = await verify(other, 'openid EmployeeBadge');
      const res = await redeem(flow);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      expect(res.body.state, other.name).toBeUndefined();
    }
  });

  it('Version 1 non-PAR token failure: wrong code_verifier -> 400, Cache-Control no-store, Pragma no-cache, JSON error (invalid_grant, Authentication 5)', async () => {
    const flow = await verify(c, 'openid EmployeeBadge');
    const res = await redeem(flow, { verifier: pkcePair().verifier });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.headers.get('content-type')).toMatch(/^application\/json/);
    expect(res.headers.get('cache-control')).toContain('no-store');
    expect(res.headers.get('pragma')).toBe('no-cache');
    expect(res.body.error).toBe('invalid_grant');
    expect(res.body.error_description).toMatch(/code_verifier/);
    expect(res.body.id_token).toBeUndefined();
  });

  it('Version 1 non-PAR token failure: code_verifier missing -> 400 with both headers and JSON error', async () => {
    const flow = await verify(c, 'openid EmployeeBadge');
    const res = await postForm(flow.doc.token_endpoint, {
      grant_type: 'authorization_code',
      client_id: 'issuer-pkce',
      client_secret: SECRETS.pkceIssuer,
      code: flow.code,
      redirect_uri: REDIRECT,
    });
    expect(res.status, JSON.stringify(res.body)).toBe(400);
    expect(res.headers.get('cache-control')).toContain('no-store');
    expect(res.headers.get('pragma')).toBe('no-cache');
    expect(typeof res.body.error).toBe('string');
    expect(res.body.id_token).toBeUndefined();
  });

  it('Version 1 non-PAR token failure: code not provided -> 400 invalid_request with both headers', async () => {
    const res = await postForm(`${url}/oidc/token`, {
      grant_type: 'authorization_code',
      client_id: 'issuer-pkce',
      client_secret: SECRETS.pkceIssuer,
      redirect_uri: REDIRECT,
      code_verifier: pkcePair().verifier,
    });
    expectError(res, 'invalid_request', 'code');
    expect(res.headers.get('pragma')).toBe('no-cache');
  });

  it('Version 1 non-PAR token failure: an unknown code -> 400 invalid_grant with both headers', async () => {
    const res = await postForm(`${url}/oidc/token`, {
      grant_type: 'authorization_code',
      client_id: 'issuer-pkce',
      client_secret: SECRETS.pkceIssuer,
      code: randomBytes(32).toString('base64url'),
      redirect_uri: REDIRECT,
      code_verifier: pkcePair().verifier,
    });
    expectError(res, 'invalid_grant', 'code');
    expect(res.headers.get('pragma')).toBe('no-cache');
  });

  it('Version 1 non-PAR token failure: a code from authorizev1 redeemed at the Version 2 token endpoint -> 400 invalid_grant', async () => {
    const flow = await verify(c, 'openid EmployeeBadge');
    const res = await postForm(`${url}/v2.0/oidc/token`, {
      grant_type: 'authorization_code',
      client_id: 'issuer-pkce',
      client_secret: SECRETS.pkceIssuer,
      code: flow.code,
      redirect_uri: REDIRECT,
      code_verifier: flow.verifier,
    });
    expectError(res, 'invalid_grant', 'code');
  });
});

describe.each(FLOWS)('ID token for verification: $name', (c) => {
  async function idToken(flow: Completed) {
    const res = await redeem(flow);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    const token = res.body.id_token as string;
    // verified with the key set at this version's jwks_uri (Issued ID token: "verifiable with the key set at jwks_uri")
    const { payload, protectedHeader } = await jwtVerify(token, createRemoteJWKSet(new URL(flow.doc.jwks_uri)), {
      issuer: c.issuer(),
      audience: 'issuer-pkce',
      algorithms: ['RS256'],
    });
    expect(protectedHeader).toMatchObject({ alg: 'RS256', typ: 'JWT' });
    expect(typeof protectedHeader.kid).toBe('string');
    return { claims: payload as Record<string, unknown>, token };
  }

  it(`Issued ID token (verification): one claim per requested attribute the credential has, nonce, iss (D1), aud, sub (D2), nbf, exp, iat; no SerialNumber/ExpiresAt (${c.name})`, async () => {
    const flow = await verify(c, 'openid EmployeeBadge');
    expect(flow.doc.issuer).toBe(c.issuer());
    const { claims } = await idToken(flow);
    expect(attributeClaims(claims)).toEqual(badge);
    expect(claims.nonce).toBe(flow.nonce);
    expect(claims.iss).toBe(c.issuer()); // D1: the issuer of the version that served the request
    expect(claims.aud).toBe('issuer-pkce');
    expect(claims.sub).toBe(await thumbprintOf('EmployeeBadge')); // D2: RFC 7638 thumbprint of the holder key
    const now = Math.floor(Date.now() / 1000);
    for (const name of ['nbf', 'exp', 'iat'] as const) expect(Number.isInteger(claims[name]), name).toBe(true);
    expect(claims.nbf as number).toBeLessThanOrEqual(now + 5);
    expect(claims.iat as number).toBeLessThanOrEqual(now + 5);
    expect(claims.exp as number).toBeGreaterThan(now);
    expect(claims.SerialNumber).toBeUndefined();
    expect(claims.ExpiresAt).toBeUndefined();
  });

  it(`Issued ID token (verification of two types): the attributes of every requested type; an optional attribute the credential lacks (Photo) is absent (${c.name})`, async () => {
    const flow = await verify(c, 'openid EmployeeBadge MembershipCard');
    const { claims } = await idToken(flow);
    expect(attributeClaims(claims)).toEqual({ ...badge, ...card });
    expect(claims).not.toHaveProperty('Photo');
    expect(claims.nonce).toBe(flow.nonce);
    expect(claims.iss).toBe(c.issuer());
    // D2: derived from the holder key of a presented credential
    expect([await thumbprintOf('EmployeeBadge'), await thumbprintOf('MembershipCard')]).toContain(claims.sub);
    expect(claims.SerialNumber).toBeUndefined();
    expect(claims.ExpiresAt).toBeUndefined();
  });

  it(`Issued ID token: only what was asked for (MembershipCard only: no EmployeeBadge attributes) (${c.name})`, async () => {
    const flow = await verify(c, 'openid MembershipCard');
    const { claims } = await idToken(flow);
    expect(attributeClaims(claims)).toEqual(card);
    expect(claims.sub).toBe(await thumbprintOf('MembershipCard'));
  });

  it(`Issued ID token: header kid is a key of this version's jwks_uri, which publishes public keys only (${c.name})`, async () => {
    const flow = await verify(c, 'openid EmployeeBadge');
    const res = await redeem(flow);
    const header = decodeProtectedHeader(res.body.id_token);
    const keys = (await (await fetch(flow.doc.jwks_uri)).json()) as { keys: JWK[] };
    expect(keys.keys.map((k) => k.kid)).toContain(header.kid);
    for (const k of keys.keys) expect(k).not.toHaveProperty('d'); // public keys only
  });
});
