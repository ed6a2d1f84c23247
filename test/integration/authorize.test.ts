/**
 * GET authorise against the real app, with a cookie-keeping user agent (Browser) that follows redirects
 * and stops at the relying party's redirect URI: the spec's "Authorise errors" tables (PAR authorise for
 * both versions; Version 2 adds; Version 2 non-PAR per D6), D4's redirected error shape, D5 (plain PKCE)
 * and D16 (request_uri single use and lifetime).
 */
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, SECRETS, REDIRECT, OTHER_REDIRECT, type TestService } from '../helpers/service.js';
import { Browser, makeHint, offerFromPage, pkcePair, postForm } from '../helpers/rp.js';
import { versionsAt, type VersionAt } from '../helpers/versions.js';
import { leaks } from '../helpers/logSecrets.js';

let svc: TestService;
let url: string;

beforeAll(async () => {
  svc = await startTestService();
  url = svc.url;
});
afterAll(async () => {
  await svc?.stop();
});

type Params = Record<string, string | undefined>;

type VersionCase = VersionAt;
const { V2, V1, VERSIONS } = versionsAt(() => url);

const CLIENTS = {
  'issuer-pkce': SECRETS.pkceIssuer,
  'issuer-plain': SECRETS.plainIssuer,
  other: SECRETS.other,
} as const;
type ClientId = keyof typeof CLIENTS;

const membership = () => ({ MemberName: 'Ada Lovelace', MemberNumber: 1815 });
const badge = () => ({ FirstName: 'Ada', LastName: 'Lovelace' });

/** A valid 1x1 RGBA PNG. */
const PNG_1X1 = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

const hint = (
  vc: VersionCase,
  clientId: ClientId,
  claims: Record<string, unknown>,
  extra: Partial<Parameters<typeof makeHint>[0]> = {},
) => makeHint({ clientId, secret: CLIENTS[clientId], audience: vc.issuer(), claims, ...extra });

const newState = () => `st-${randomBytes(8).toString('hex')}`;

/** Pushes a MembershipCard issuance for `issuer-plain` with the given hint claims; returns request_uri and state. */
async function pushMembership(
  vc: VersionCase,
  claims: Record<string, unknown> = membership(),
  overrides: Params = {},
  base = url,
): Promise<{ requestUri: string; state: string; expiresIn: number }> {
  const state = newState();
  const res = await postForm(`${base}${vc.par}`, {
    client_id: 'issuer-plain',
    client_secret: SECRETS.plainIssuer,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: vc.issue('MembershipCard'),
    nonce: randomBytes(8).toString('hex'),
    state,
    id_token_hint: await makeHint({
      clientId: 'issuer-plain',
      secret: SECRETS.plainIssuer,
      audience: base === url ? vc.issuer() : vc.v === 'v2' ? base : `${base}/oidc`,
      claims,
    }),
    ...overrides,
  });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return { requestUri: res.body.request_uri, state, expiresIn: res.body.expires_in };
}

function authorizeUrl(vc: VersionCase, params: Params, base = url): string {
  const u = new URL(`${base}${vc.authorize}`);
  for (const [k, v] of Object.entries(params)) if (v !== undefined) u.searchParams.set(k, v);
  return u.href;
}

/** A direct error answer (D4): JSON, status, code, description naming the parameter, no-store, no redirect. */
async function expectDirectError(
  res: Response | undefined,
  error: string,
  names: string | RegExp,
  status = 400,
): Promise<void> {
  expect(res, 'expected a direct answer, not a redirect to the client').toBeDefined();
  const r = res!;
  const text = await r.text();
  expect(r.status, text).toBe(status);
  expect(r.headers.get('location'), 'a direct error must not redirect').toBeNull();
  expect(r.headers.get('content-type')).toMatch(/^application\/json/);
  const body = JSON.parse(text);
  expect(body.error).toBe(error);
  expect(typeof body.error_description).toBe('string');
  if (typeof names === 'string') expect(body.error_description).toContain(names);
  else expect(body.error_description).toMatch(names);
  expect(r.headers.get('cache-control')).toContain('no-store');
}

/**
 * One GET without following redirects; never a 500. Direct errors are read as JSON, as an API client asks
 * for them (a browser gets the same status and code as a page: authorize-error-page.test.ts).
 */
async function get(u: string, browser = new Browser(REDIRECT)): Promise<Response> {
  const res = await browser.get(u, 'application/json, text/html;q=0.5');
  expect(res.status, 'never a 500').toBeLessThan(500);
  return res;
}

/** Follows the flow to the client's redirect URI; returns its query. */
async function followToClient(u: string, browser = new Browser(REDIRECT)): Promise<URLSearchParams> {
  const out = await browser.follow(u);
  if (out.res) expect(out.res.status, `never a 500 (${out.final}): ${out.html?.slice(0, 300)}`).toBeLessThan(500);
  expect(
    out.final.startsWith(REDIRECT),
    `expected a redirect to the client, stopped at ${out.final} (${out.res?.status}): ${out.html?.slice(0, 300)}`,
  ).toBe(true);
  const target = new URL(out.final);
  expect(`${target.origin}${target.pathname}`).toBe(REDIRECT);
  return target.searchParams;
}

/** A redirected error (D4): `error`, `error_description` naming the parameter, the request's `state`; no code. */
function expectRedirectedError(
  q: URLSearchParams,
  vc: VersionCase,
  error: string,
  names: string | RegExp,
  state: string | undefined,
): void {
  expect(q.get('error'), q.toString()).toBe(error);
  const description = q.get('error_description') ?? '';
  if (typeof names === 'string') expect(description).toContain(names);
  else expect(description).toMatch(names);
  if (state !== undefined) expect(q.get('state')).toBe(state);
  expect(q.get('code')).toBeNull();
  // RFC 9207 §2: every redirect carries `iss`, the issuer of the version that served the request (D1)
  expect(q.get('iss')).toBe(vc.issuer());
}

/** Follows the flow to the prompt page (D10) and returns its HTML. */
async function followToPrompt(u: string, browser = new Browser(REDIRECT)): Promise<{ html: string; final: string }> {
  const out = await browser.follow(u);
  expect(out.final.startsWith(REDIRECT), `expected the prompt, was redirected to the client: ${out.final}`).toBe(false);
  expect(out.res!.status, out.html?.slice(0, 300)).toBe(200);
  expect(out.res!.headers.get('content-type')).toMatch(/^text\/html/);
  expect(new URL(out.final).pathname).toMatch(/^\/interaction\//);
  return { html: out.html!, final: out.final };
}

function expectOffer(html: string): void {
  const offer = offerFromPage(html);
  expect(offer).toMatch(/^openid-credential-offer:\/\//);
}

// ------------------------------------------------------------------------------------------------
// PAR authorise, Version 1 and 2
// ------------------------------------------------------------------------------------------------

describe.each(VERSIONS)('PAR authorise ($v)', (vc) => {
  const tag = `(${vc.v})`;

  it(`Flows 2: a valid PAR at authorise -> the prompt page (200 HTML at /interaction/...) with an openid-credential-offer:// link ${tag}`, async () => {
    const { requestUri } = await pushMembership(vc);
    const { html, final } = await followToPrompt(
      authorizeUrl(vc, { client_id: 'issuer-plain', request_uri: requestUri }),
    );
    expect(new URL(final).pathname).toMatch(new RegExp(`^/interaction/${vc.v}/`));
    expectOffer(html);
  });

  it(`PAR authorise / client_id not in the request -> 400 invalid_request ${tag}`, async () => {
    const { requestUri } = await pushMembership(vc);
    await expectDirectError(await get(authorizeUrl(vc, { request_uri: requestUri })), 'invalid_request', 'client_id');
  });

  it(`PAR authorise / client_id not registered -> 400 invalid_request ${tag}`, async () => {
    const { requestUri } = await pushMembership(vc);
    await expectDirectError(
      await get(authorizeUrl(vc, { client_id: 'nobody', request_uri: requestUri })),
      'invalid_request',
      'client_id',
    );
  });

  it(`PAR authorise / client_id different from the PAR's -> 400 invalid_request ${tag}`, async () => {
    const { requestUri } = await pushMembership(vc);
    await expectDirectError(
      await get(authorizeUrl(vc, { client_id: 'other', request_uri: requestUri })),
      'invalid_request',
      /client_id|request_uri/,
    );
  });

  it(`PAR authorise / client_id different from the PAR's does not burn the request_uri for its owner ${tag}`, async () => {
    const { requestUri } = await pushMembership(vc);
    await expectDirectError(
      await get(authorizeUrl(vc, { client_id: 'other', request_uri: requestUri })),
      'invalid_request',
      /client_id|request_uri/,
    );
    const { html } = await followToPrompt(authorizeUrl(vc, { client_id: 'issuer-plain', request_uri: requestUri }));
    expectOffer(html);
  });

  it(`PAR authorise / request_uri unknown -> 400 invalid_request ${tag}`, async () => {
    const u = authorizeUrl(vc, {
      client_id: 'issuer-plain',
      request_uri: `urn:ietf:params:oauth:request_uri:${randomBytes(16).toString('base64url')}`,
    });
    await expectDirectError(await get(u), 'invalid_request', 'request_uri');
  });

  it(`PAR authorise / request_uri not a PAR reference (https URL) -> 400 invalid_request ${tag}`, async () => {
    const u = authorizeUrl(vc, { client_id: 'issuer-plain', request_uri: 'https://evil.example/request.jwt' });
    await expectDirectError(await get(u), 'invalid_request', 'request_uri');
  });

  it(`PAR authorise / request_uri of the other version -> 400 invalid_request ${tag}`, async () => {
    const other = vc.v === 'v2' ? V1 : V2;
    const { requestUri } = await pushMembership(other);
    await expectDirectError(
      await get(authorizeUrl(vc, { client_id: 'issuer-plain', request_uri: requestUri })),
      'invalid_request',
      'request_uri',
    );
  });

  it(`PAR authorise / request_uri already used (authorise twice, D16 single use) -> 400 invalid_request ${tag}`, async () => {
    const { requestUri } = await pushMembership(vc);
    const first = await followToPrompt(authorizeUrl(vc, { client_id: 'issuer-plain', request_uri: requestUri }));
    expectOffer(first.html);
    // a second user agent (no cookies) with the same request_uri
    await expectDirectError(
      await get(authorizeUrl(vc, { client_id: 'issuer-plain', request_uri: requestUri })),
      'invalid_request',
      'request_uri',
    );
  });

  it(`PAR authorise / request_uri already used, same browser -> no second credential offer ${tag}`, async () => {
    const { requestUri } = await pushMembership(vc);
    const browser = new Browser(REDIRECT);
    const first = await followToPrompt(
      authorizeUrl(vc, { client_id: 'issuer-plain', request_uri: requestUri }),
      browser,
    );
    const firstOffer = offerFromPage(first.html);
    const again = await browser.follow(authorizeUrl(vc, { client_id: 'issuer-plain', request_uri: requestUri }));
    if (again.res) expect(again.res.status).toBeLessThan(500);
    const secondOffer =
      again.html && /openid-credential-offer/.test(again.html) ? offerFromPage(again.html) : undefined;
    // D7/D16: one PAR, one hint -> at most one credential offer
    if (secondOffer !== undefined) expect(secondOffer).toBe(firstOffer);
    else expect(again.res?.status ?? 400).toBe(400);
  });

  it(`PAR authorise / RedirectUri: a redirect_uri on the authorise query is not used (only the PAR's counts) ${tag}`, async () => {
    const { requestUri } = await pushMembership(vc);
    const out = await new Browser('https://evil.example/').follow(
      authorizeUrl(vc, { client_id: 'issuer-plain', request_uri: requestUri, redirect_uri: 'https://evil.example/cb' }),
    );
    expect(out.final.startsWith('https://evil.example/')).toBe(false);
    if (out.res) expect(out.res.status).toBeLessThan(500);
  });

  describe('PAR authorise / TokenHint claims do not match the credential template -> redirected invalid_scope (D4, D8)', () => {
    it(`TokenHint claims: a required attribute missing (MemberNumber) -> redirected invalid_scope with state ${tag}`, async () => {
      const { requestUri, state } = await pushMembership(vc, { MemberName: 'Ada' });
      const q = await followToClient(authorizeUrl(vc, { client_id: 'issuer-plain', request_uri: requestUri }));
      expectRedirectedError(q, vc, 'invalid_scope', 'MemberNumber', state);
    });

    it(`TokenHint claims: an attribute not in the template -> redirected invalid_scope with state ${tag}`, async () => {
      const { requestUri, state } = await pushMembership(vc, { ...membership(), Nickname: 'Ada' });
      const q = await followToClient(authorizeUrl(vc, { client_id: 'issuer-plain', request_uri: requestUri }));
      expectRedirectedError(q, vc, 'invalid_scope', 'Nickname', state);
    });

    it(`TokenHint claims: a wrong type (MemberNumber as a string) -> redirected invalid_scope with state ${tag}`, async () => {
      const { requestUri, state } = await pushMembership(vc, { MemberName: 'Ada', MemberNumber: '1815' });
      const q = await followToClient(authorizeUrl(vc, { client_id: 'issuer-plain', request_uri: requestUri }));
      expectRedirectedError(q, vc, 'invalid_scope', 'MemberNumber', state);
    });

    it(`TokenHint claims: a wrong type (MemberName null) -> redirected invalid_scope with state ${tag}`, async () => {
      const { requestUri, state } = await pushMembership(vc, { MemberName: null, MemberNumber: 1 });
      const q = await followToClient(authorizeUrl(vc, { client_id: 'issuer-plain', request_uri: requestUri }));
      expectRedirectedError(q, vc, 'invalid_scope', 'MemberName', state);
    });

    it(`TokenHint claims: an attribute of another credential type (FirstName on a MembershipCard) -> redirected invalid_scope ${tag}`, async () => {
      const { requestUri, state } = await pushMembership(vc, { ...membership(), FirstName: 'Ada' });
      const q = await followToClient(authorizeUrl(vc, { client_id: 'issuer-plain', request_uri: requestUri }));
      expectRedirectedError(q, vc, 'invalid_scope', 'FirstName', state);
    });
  });

  describe('PAR authorise / TokenHint image not valid -> redirected invalid_request (D4, D9)', () => {
    it(`TokenHint image: random bytes labelled image/png -> redirected invalid_request with state ${tag}`, async () => {
      const photo = `data:image/png;base64,${randomBytes(64).toString('base64')}`;
      const { requestUri, state } = await pushMembership(vc, { ...membership(), Photo: photo });
      const q = await followToClient(authorizeUrl(vc, { client_id: 'issuer-plain', request_uri: requestUri }));
      expectRedirectedError(q, vc, 'invalid_request', 'Photo', state);
    });

    it(`TokenHint image: a PNG labelled image/gif (format not allowed) -> redirected invalid_request ${tag}`, async () => {
      const { requestUri, state } = await pushMembership(vc, {
        ...membership(),
        Photo: `data:image/gif;base64,${PNG_1X1}`,
      });
      const q = await followToClient(authorizeUrl(vc, { client_id: 'issuer-plain', request_uri: requestUri }));
      expectRedirectedError(q, vc, 'invalid_request', 'Photo', state);
    });

    it(`TokenHint image: not a data: URI -> redirected invalid_request ${tag}`, async () => {
      const { requestUri, state } = await pushMembership(vc, { ...membership(), Photo: 'https://example.com/a.png' });
      const q = await followToClient(authorizeUrl(vc, { client_id: 'issuer-plain', request_uri: requestUri }));
      expectRedirectedError(q, vc, 'invalid_request', 'Photo', state);
    });

    it(`TokenHint image: a valid PNG -> the prompt page ${tag}`, async () => {
      const { requestUri } = await pushMembership(vc, { ...membership(), Photo: `data:image/png;base64,${PNG_1X1}` });
      const { html } = await followToPrompt(authorizeUrl(vc, { client_id: 'issuer-plain', request_uri: requestUri }));
      expectOffer(html);
    });
  });
});

describe.each(VERSIONS)('PAR authorise / request_uri expired ($v)', (vc) => {
  let short: TestService;
  beforeAll(async () => {
    short = await startTestService({
      lifetimes: { par: 1, code: 60, token: 60, offer: 300, interaction: 600, continuation: 300 },
    });
  });
  afterAll(async () => {
    await short?.stop();
  });

  it(`PAR authorise / request_uri expired (PAR lifetime 1 s, used after 2 s) -> 400 invalid_request (${vc.v})`, async () => {
    const { requestUri, expiresIn } = await pushMembership(vc, membership(), {}, short.url);
    expect(expiresIn).toBe(1); // Limits: expires_in reports the configured lifetime
    await new Promise((r) => setTimeout(r, 2000));
    const res = await get(authorizeUrl(vc, { client_id: 'issuer-plain', request_uri: requestUri }, short.url));
    expect(res.status).toBeLessThan(500);
    await expectDirectError(res, 'invalid_request', 'request_uri');
  });
});

// ------------------------------------------------------------------------------------------------
// Version 2 non-PAR (D6): the full request on the authorise query
// ------------------------------------------------------------------------------------------------

describe('Version 2 non-PAR authorise (D6)', () => {
  /** A full non-PAR issuance for the PKCE client (EmployeeBadge), with a fresh hint and state. */
  async function badgeQuery(overrides: Params = {}, claims: Record<string, unknown> = badge()): Promise<Params> {
    return {
      client_id: 'issuer-pkce',
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid issue.EmployeeBadge',
      nonce: randomBytes(8).toString('hex'),
      state: newState(),
      code_challenge: pkcePair().challenge,
      code_challenge_method: 'S256',
      id_token_hint: await hint(V2, 'issuer-pkce', claims),
      ...overrides,
    };
  }

  /** A full non-PAR issuance for the PKCE-optional client (MembershipCard). */
  async function membershipQuery(
    overrides: Params = {},
    claims: Record<string, unknown> = membership(),
  ): Promise<Params> {
    return {
      client_id: 'issuer-plain',
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid issue.MembershipCard',
      nonce: randomBytes(8).toString('hex'),
      state: newState(),
      id_token_hint: await hint(V2, 'issuer-plain', claims),
      ...overrides,
    };
  }

  async function redirected(params: Params): Promise<URLSearchParams> {
    return followToClient(authorizeUrl(V2, params));
  }

  it('D6: a full query request with id_token_hint -> the prompt page with an openid-credential-offer:// link (v2)', async () => {
    const { html } = await followToPrompt(authorizeUrl(V2, await badgeQuery()));
    expectOffer(html);
  });

  it('D6: a full query request without PKCE for the PKCE-optional client -> the prompt page (v2)', async () => {
    const { html } = await followToPrompt(authorizeUrl(V2, await membershipQuery()));
    expectOffer(html);
  });

  it('D5: code_challenge_method plain is accepted -> the prompt page (v2)', async () => {
    const { html } = await followToPrompt(
      authorizeUrl(V2, await badgeQuery({ code_challenge: pkcePair().verifier, code_challenge_method: 'plain' })),
    );
    expectOffer(html);
  });

  it('D6: a PIN-protected issuance (valid PinCode) -> the prompt page (v2)', async () => {
    const { html } = await followToPrompt(authorizeUrl(V2, await badgeQuery({}, { ...badge(), PinCode: '4321' })));
    expectOffer(html);
    // D17: the PIN is never shown on the page, as a value of its own (the QR code's path data and the random
    // ids may contain the same four digits)
    expect(leaks([html], [{ what: 'PIN', value: '4321', isolated: true }])).toEqual([]);
  });

  describe('direct errors (redirect URI not validated) -> 400', () => {
    it('Authorise errors / ClientId not provided -> 400 invalid_request (v2 non-PAR)', async () => {
      await expectDirectError(
        await get(authorizeUrl(V2, await badgeQuery({ client_id: undefined }))),
        'invalid_request',
        'client_id',
      );
    });

    it('Authorise errors / ClientId not registered -> 400 invalid_request (v2 non-PAR)', async () => {
      await expectDirectError(
        await get(authorizeUrl(V2, await badgeQuery({ client_id: 'nobody' }))),
        'invalid_request',
        'client_id',
      );
    });

    it('Authorise errors / RedirectUri not registered in client -> 400 invalid_request, no redirect (v2 non-PAR)', async () => {
      await expectDirectError(
        await get(authorizeUrl(V2, await badgeQuery({ redirect_uri: 'https://evil.example/cb' }))),
        'invalid_request',
        'redirect_uri',
      );
    });

    it('Authorise errors / RedirectUri registered for another client only -> 400 invalid_request (v2 non-PAR)', async () => {
      await expectDirectError(
        await get(authorizeUrl(V2, await membershipQuery({ redirect_uri: OTHER_REDIRECT }))),
        'invalid_request',
        'redirect_uri',
      );
    });

    it('Authorise errors / RedirectUri missing -> 400 invalid_request (v2 non-PAR)', async () => {
      await expectDirectError(
        await get(authorizeUrl(V2, await badgeQuery({ redirect_uri: undefined }))),
        'invalid_request',
        'redirect_uri',
      );
    });

    it('Authorise errors / RedirectUri not registered, with other errors too -> still 400, never a redirect (v2 non-PAR)', async () => {
      const params = await badgeQuery({
        redirect_uri: 'https://evil.example/cb',
        response_type: 'token',
        scope: 'openid issue.Nope',
      });
      await expectDirectError(await get(authorizeUrl(V2, params)), 'invalid_request', 'redirect_uri');
    });
  });

  describe('redirected errors (redirect URI validated) carry error, error_description and state (D4)', () => {
    it('Authorise errors / Scope not registered for the client -> redirected invalid_scope (v2 non-PAR)', async () => {
      const p = await membershipQuery({ scope: 'openid issue.EmployeeBadge' });
      expectRedirectedError(await redirected(p), V2, 'invalid_scope', 'scope', p.state);
    });

    it('Authorise errors / Scope not provided -> redirected invalid_scope (v2 non-PAR)', async () => {
      const p = await badgeQuery({ scope: undefined });
      expectRedirectedError(await redirected(p), V2, 'invalid_scope', 'scope', p.state);
    });

    it('Scope format / Version 2 issuance without openid -> redirected invalid_scope (v2 non-PAR)', async () => {
      const p = await badgeQuery({ scope: 'issue.EmployeeBadge' });
      expectRedirectedError(await redirected(p), V2, 'invalid_scope', 'openid', p.state);
    });

    it('Authorise errors / ResponseType not provided -> redirected invalid_request (v2 non-PAR)', async () => {
      const p = await badgeQuery({ response_type: undefined });
      expectRedirectedError(await redirected(p), V2, 'invalid_request', 'response_type', p.state);
    });

    it('Authorise errors / ResponseType not code -> redirected unsupported_response_type (v2 non-PAR)', async () => {
      const p = await badgeQuery({ response_type: 'token' });
      expectRedirectedError(await redirected(p), V2, 'unsupported_response_type', 'response_type', p.state);
    });

    it('Authorise errors / ResponseMode not query -> redirected invalid_request (v2 non-PAR)', async () => {
      const p = await badgeQuery({ response_mode: 'fragment' });
      const q = await redirected(p);
      expectRedirectedError(q, V2, 'invalid_request', 'response_mode', p.state);
    });

    it('Endpoints / authorise: nonce required for non-PAR -> redirected invalid_request (v2 non-PAR)', async () => {
      const p = await badgeQuery({ nonce: undefined });
      expectRedirectedError(await redirected(p), V2, 'invalid_request', 'nonce', p.state);
    });

    it('Version 2 adds / code_challenge: PKCE required and challenge not provided -> redirected invalid_request (v2 non-PAR)', async () => {
      const p = await badgeQuery({ code_challenge: undefined, code_challenge_method: undefined });
      expectRedirectedError(await redirected(p), V2, 'invalid_request', 'code_challenge', p.state);
    });

    it('Version 2 adds / code_challenge_method: PKCE required and method not supported (S512) -> redirected invalid_request (v2 non-PAR)', async () => {
      const p = await badgeQuery({ code_challenge_method: 'S512' });
      expectRedirectedError(await redirected(p), V2, 'invalid_request', 'code_challenge_method', p.state);
    });

    it('D5: code_challenge_method missing with a challenge -> redirected invalid_request (v2 non-PAR)', async () => {
      const p = await badgeQuery({ code_challenge_method: undefined });
      expectRedirectedError(await redirected(p), V2, 'invalid_request', 'code_challenge_method', p.state);
    });

    it('D6 / IdTokenHint missing for issuance -> redirected invalid_request (v2 non-PAR)', async () => {
      const p = await badgeQuery({ id_token_hint: undefined });
      expectRedirectedError(await redirected(p), V2, 'invalid_request', 'id_token_hint', p.state);
    });

    it('D6 / IdTokenHint not valid (garbage) -> redirected invalid_request (v2 non-PAR)', async () => {
      const p = await badgeQuery({ id_token_hint: 'not-a-jwt' });
      expectRedirectedError(await redirected(p), V2, 'invalid_request', 'id_token_hint', p.state);
    });

    it('D6 / IdTokenHint signed with another secret -> redirected invalid_request (v2 non-PAR)', async () => {
      const forged = await makeHint({
        clientId: 'issuer-pkce',
        secret: 'not-the-registered-secret-000',
        audience: url,
        claims: badge(),
      });
      const p = await badgeQuery({ id_token_hint: forged });
      expectRedirectedError(await redirected(p), V2, 'invalid_request', 'id_token_hint', p.state);
    });

    it('D6 / IdTokenHint with aud of Version 1 (D1) -> redirected invalid_request (v2 non-PAR)', async () => {
      const wrong = await makeHint({
        clientId: 'issuer-pkce',
        secret: SECRETS.pkceIssuer,
        audience: `${url}/oidc`,
        claims: badge(),
      });
      const p = await badgeQuery({ id_token_hint: wrong });
      expectRedirectedError(await redirected(p), V2, 'invalid_request', /id_token_hint.*aud/, p.state);
    });

    it('D6 / IdTokenHint expired -> redirected invalid_request (v2 non-PAR)', async () => {
      const p = await badgeQuery({ id_token_hint: await hint(V2, 'issuer-pkce', badge(), { expiresIn: -3600 }) });
      expectRedirectedError(await redirected(p), V2, 'invalid_request', /id_token_hint.*exp/, p.state);
    });

    it('D6, D7 / IdTokenHint replayed (the same hint twice) -> redirected invalid_request (v2 non-PAR)', async () => {
      const h = await hint(V2, 'issuer-pkce', badge());
      const { html } = await followToPrompt(authorizeUrl(V2, await badgeQuery({ id_token_hint: h })));
      expectOffer(html);
      const p = await badgeQuery({ id_token_hint: h });
      expectRedirectedError(await redirected(p), V2, 'invalid_request', 'id_token_hint', p.state);
    });

    it('D4 / PIN violation: PinCode not numeric -> redirected invalid_request (v2 non-PAR)', async () => {
      const p = await badgeQuery({}, { ...badge(), PinCode: '12a4' });
      expectRedirectedError(await redirected(p), V2, 'invalid_request', 'PinCode', p.state);
    });

    it('D4 / PIN violation: PinCode of the wrong length -> redirected invalid_request (v2 non-PAR)', async () => {
      const p = await badgeQuery({}, { ...badge(), PinCode: '123' });
      expectRedirectedError(await redirected(p), V2, 'invalid_request', 'PinCode', p.state);
    });

    it('D4 / PIN violation: PinCode for a type without pinCodeLength -> redirected invalid_request (v2 non-PAR)', async () => {
      const p = await membershipQuery({}, { ...membership(), PinCode: '1234' });
      expectRedirectedError(await redirected(p), V2, 'invalid_request', 'PinCode', p.state);
    });

    it('D6 / TokenHint claims do not match the template -> redirected invalid_scope (v2 non-PAR)', async () => {
      const p = await membershipQuery({}, { MemberName: 'Ada', MemberNumber: 'x' });
      expectRedirectedError(await redirected(p), V2, 'invalid_scope', 'MemberNumber', p.state);
    });

    it('D6 / TokenHint image not valid -> redirected invalid_request (v2 non-PAR)', async () => {
      const p = await membershipQuery(
        {},
        { ...membership(), Photo: `data:image/png;base64,${randomBytes(48).toString('base64')}` },
      );
      expectRedirectedError(await redirected(p), V2, 'invalid_request', 'Photo', p.state);
    });

    it('D4: a redirected error without state in the request carries no state (v2 non-PAR)', async () => {
      const p = await badgeQuery({ state: undefined, response_type: 'token' });
      const q = await redirected(p);
      expectRedirectedError(q, V2, 'unsupported_response_type', 'response_type', undefined);
      expect(q.has('state')).toBe(false);
    });
  });
});

// ------------------------------------------------------------------------------------------------
// Version 1 authorise takes PAR requests only
// ------------------------------------------------------------------------------------------------

describe('Version 1 /oidc/authorize', () => {
  it('Versioning / Non-PAR: Version 1 /oidc/authorize without request_uri -> 400 invalid_request (v1)', async () => {
    const params = {
      client_id: 'issuer-plain',
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'issue.MembershipCard',
      nonce: 'n',
      state: newState(),
      id_token_hint: await hint(V1, 'issuer-plain', membership()),
    };
    await expectDirectError(await get(authorizeUrl(V1, params)), 'invalid_request', 'request_uri');
  });

  it('Versioning / Non-PAR: Version 1 /oidc/authorize with only client_id -> 400 invalid_request (v1)', async () => {
    await expectDirectError(
      await get(authorizeUrl(V1, { client_id: 'issuer-plain' })),
      'invalid_request',
      'request_uri',
    );
  });

  it('Versioning / Non-PAR: Version 1 /oidc/authorizev1 refuses a request_uri -> 400 invalid_request (v1)', async () => {
    const { requestUri } = await pushMembership(V1);
    const u = new URL(`${url}/oidc/authorizev1`);
    u.searchParams.set('client_id', 'issuer-plain');
    u.searchParams.set('request_uri', requestUri);
    await expectDirectError(await get(u.href), 'invalid_request', 'request_uri');
  });

  it('Versioning / Non-PAR: Version 1 /oidc/authorizev1 is verification only: an issuance scope -> redirected invalid_scope (v1)', async () => {
    const state = newState();
    const pkce = pkcePair();
    const u = new URL(`${url}/oidc/authorizev1`);
    for (const [k, v] of Object.entries({
      client_id: 'issuer-plain',
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'issue.MembershipCard',
      nonce: 'n',
      state,
      code_challenge: pkce.challenge,
      code_challenge_method: 'S256',
      id_token_hint: await hint(V1, 'issuer-plain', membership()),
    }))
      u.searchParams.set(k, v);
    const q = await followToClient(u.href);
    expectRedirectedError(q, V1, 'invalid_scope', 'scope', state);
  });
});
