/**
 * POST {base}/v2.0/oidc/par and {base}/oidc/par against the real app: the 201 answer and every row of
 * the spec's "PAR errors" table (D4 codes), the scope format rules, the id_token_hint rules (D7), the PIN
 * rules (Authentication 7, D8), hint replay (D7) and PKCE at PAR (Version 2; Version 1 refuses it).
 */
import { randomBytes } from 'node:crypto';
import { SignJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestService, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { makeHint, pkcePair, postForm } from '../helpers/rp.js';
import { expectError } from '../helpers/assertions.js';
import { oidcRecordKey } from '../../src/store/oidcAdapter.js';
import { versionsAt, type VersionAt } from '../helpers/versions.js';

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
const badge = () => ({ FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' });

function hint(
  vc: VersionCase,
  clientId: ClientId,
  claims: Record<string, unknown>,
  extra: Partial<Parameters<typeof makeHint>[0]> = {},
): Promise<string> {
  return makeHint({ clientId, secret: CLIENTS[clientId], audience: vc.issuer(), claims, ...extra });
}

/** A valid issuance PAR for `issuer-plain` (MembershipCard, PKCE optional). */
async function membershipPar(vc: VersionCase, overrides: Params = {}): Promise<Params> {
  return {
    client_id: 'issuer-plain',
    client_secret: SECRETS.plainIssuer,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: vc.issue('MembershipCard'),
    nonce: randomBytes(8).toString('hex'),
    state: randomBytes(8).toString('hex'),
    response_mode: 'query',
    id_token_hint: await hint(vc, 'issuer-plain', membership()),
    ...overrides,
  };
}

/** A valid issuance PAR for `other` (EmployeeBadge, pinCodeLength 4, PKCE optional). */
async function badgePar(
  vc: VersionCase,
  claims: Record<string, unknown> = badge(),
  overrides: Params = {},
): Promise<Params> {
  return {
    client_id: 'other',
    client_secret: SECRETS.other,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: vc.issue('EmployeeBadge'),
    nonce: randomBytes(8).toString('hex'),
    state: randomBytes(8).toString('hex'),
    id_token_hint: await hint(vc, 'other', claims),
    ...overrides,
  };
}

async function par(vc: VersionCase, params: Params) {
  const res = await postForm(`${url}${vc.par}`, params);
  expect(res.status, `never a 500: ${JSON.stringify(res.body)}`).toBeLessThan(500);
  return res;
}

function expectCreated(res: { status: number; body: any; headers: Headers }): void {
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  expect(res.headers.get('content-type')).toMatch(/^application\/json/);
  expect(res.body.request_uri).toMatch(/^urn:ietf:params:oauth:request_uri:.+/);
  expect(Number.isInteger(res.body.expires_in)).toBe(true);
  expect(res.body.expires_in).toBeGreaterThan(0);
}

const b64url = (v: unknown) => Buffer.from(JSON.stringify(v)).toString('base64url');

/** A JWT with `alg: none`, crafted by hand (no library will make one). */
function unsignedHint(vc: VersionCase, clientId: string, claims: Record<string, unknown>): string {
  const now = Math.floor(Date.now() / 1000);
  return `${b64url({ alg: 'none', typ: 'JWT' })}.${b64url({ ...claims, iss: clientId, aud: vc.issuer(), iat: now, exp: now + 300, jti: randomBytes(8).toString('hex') })}.`;
}

/** An HS256 hint with exactly the given registered claims (for missing exp, nbf in the future...). */
function rawHint(secret: string, payload: Record<string, unknown>): Promise<string> {
  return new SignJWT(payload).setProtectedHeader({ alg: 'HS256', typ: 'JWT' }).sign(new TextEncoder().encode(secret));
}

describe.each(VERSIONS)('PAR ($v)', (vc) => {
  const tag = `(${vc.v})`;

  describe('PAR response', () => {
    it(`Endpoints / PAR: a valid issuance request -> 201 with request_uri urn:ietf:params:oauth:request_uri:<id> and integer expires_in ${tag}`, async () => {
      const res = await par(vc, await membershipPar(vc));
      expectCreated(res);
      expect(res.body.expires_in).toBe(60); // Limits: samples show 60 s (the default lifetime, D16)
      expect(res.headers.get('cache-control')).toContain('no-store');
    });

    it(`Endpoints / PAR: response_mode and state are optional; a minimal issuance request -> 201 ${tag}`, async () => {
      const res = await par(vc, await membershipPar(vc, { response_mode: undefined, state: undefined }));
      expectCreated(res);
    });

    it(`Endpoints / PAR: each request gets its own request_uri ${tag}`, async () => {
      const a = await par(vc, await membershipPar(vc));
      const b = await par(vc, await membershipPar(vc));
      expectCreated(a);
      expectCreated(b);
      expect(a.body.request_uri).not.toBe(b.body.request_uri);
    });

    it(`PIN protection: a hint with a valid PinCode (digits, length = pinCodeLength) -> 201 ${tag}`, async () => {
      expectCreated(await par(vc, await badgePar(vc, { ...badge(), PinCode: '0123' })));
    });
  });

  describe('How a pushed request is kept (the edge stores what it checked; anything else goes to oidc-provider)', () => {
    const stored = async (requestUri: string) => {
      const id = requestUri.slice('urn:ietf:params:oauth:request_uri:'.length);
      const key = oidcRecordKey(vc.v, 'PushedAuthorizationRequest', id);
      const record = await svc.service.store.get<{
        request: string;
        trusted: boolean;
        exp: number;
        iat: number;
        jti: string;
        kind: string;
        hint?: { clientId: string };
      }>(key);
      expect(record, 'stored under the provider model').toBeDefined();
      const [header, payload] = record!.request
        .split('.')
        .slice(0, 2)
        .map((p) => JSON.parse(Buffer.from(p, 'base64url').toString()));
      return { key, record: record!, header, payload };
    };

    it(`a request of spec fields only is stored as oidc-provider's own PAR endpoint stores it (an upgrade that changes the format fails here) ${tag}`, async () => {
      const params = await membershipPar(vc);
      const edge = await par(vc, params);
      expectCreated(edge);
      // ui_locales is not a spec field: the edge leaves such a request to oidc-provider's PAR endpoint
      const provider = await par(vc, {
        ...(await membershipPar(vc, { nonce: params.nonce, state: params.state })),
        ui_locales: 'en',
      });
      expectCreated(provider);
      const a = await stored(edge.body.request_uri);
      const b = await stored(provider.body.request_uri);
      delete b.payload.ui_locales;
      expect(a.header).toEqual(b.header);
      expect(a.header).toEqual({ alg: 'none' });
      expect(a.record.trusted).toBe(b.record.trusted);
      // the record's own fields, as the provider writes them; the edge's record also carries the hint's data
      const { hint: carried, ...edgeRecord } = a.record;
      expect(Object.keys(edgeRecord).sort()).toEqual(Object.keys(b.record).sort());
      expect([a.record.kind, a.record.jti]).toEqual([b.record.kind, edge.body.request_uri.split(':').pop()]);
      expect(carried?.clientId).toBe('issuer-plain');
      expect(a.payload.vc_hint, 'the request names the record that carries its hint').toBe(a.key);
      const timeless = ({ iat, nbf, exp, vc_hint, ...rest }: Record<string, unknown>) => rest; // vc_hint names each hint
      expect(timeless(a.payload)).toEqual(timeless(b.payload));
      expect(Object.keys(a.payload).sort()).toEqual(Object.keys(b.payload).sort());
      expect(a.payload).not.toHaveProperty('client_secret');
      expect(a.payload).not.toHaveProperty('id_token_hint');
      expect(a.payload.exp - a.payload.iat).toBe(edge.body.expires_in);
      expect(a.record.exp - a.record.iat).toBe(edge.body.expires_in);
    });

    it(`a request from a browser origin goes to oidc-provider, which refuses it for a confidential client -> 400 invalid_request ${tag}`, async () => {
      const res = await postForm(`${url}${vc.par}`, await membershipPar(vc), { origin: 'https://rp.example' });
      expectError(res, 'invalid_request', 'origin');
    });
  });

  describe('PAR errors / ClientId and ClientSecret -> 400 unauthorised_client (D4)', () => {
    it(`PAR errors / ClientId not registered -> 400 unauthorised_client ${tag}`, async () => {
      const res = await par(vc, await membershipPar(vc, { client_id: 'nobody' }));
      expectError(res, 'unauthorised_client', 'client_id');
    });

    it(`PAR errors / ClientId missing -> 400 unauthorised_client ${tag}`, async () => {
      const res = await par(vc, await membershipPar(vc, { client_id: undefined }));
      expectError(res, 'unauthorised_client', 'client_id');
    });

    it(`PAR errors / ClientSecret wrong -> 400 unauthorised_client ${tag}`, async () => {
      const res = await par(vc, await membershipPar(vc, { client_secret: 'wrong-secret-0123456789' }));
      expectError(res, 'unauthorised_client', 'client_secret');
    });

    it(`PAR errors / ClientSecret missing -> 400 unauthorised_client ${tag}`, async () => {
      const res = await par(vc, await membershipPar(vc, { client_secret: undefined }));
      expectError(res, 'unauthorised_client', 'client_secret');
    });

    it(`PAR errors / ClientSecret of another client -> 400 unauthorised_client ${tag}`, async () => {
      const res = await par(vc, await membershipPar(vc, { client_secret: SECRETS.other }));
      expectError(res, 'unauthorised_client', 'client_secret');
    });

    it(`Authentication 1 and RFC 6749 2.3.1: client_secret_basic is accepted beside client_secret_post -> 201 ${tag}`, async () => {
      const params = await membershipPar(vc, { client_secret: undefined });
      const basic = Buffer.from(`issuer-plain:${SECRETS.plainIssuer}`).toString('base64');
      const res = await postForm(
        `${url}${vc.par}`,
        Object.fromEntries(Object.entries(params).filter(([, v]) => v !== undefined)) as Record<string, string>,
        { authorization: `Basic ${basic}` },
      );
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    });
  });

  describe('PAR errors / RedirectUri -> 400 invalid_request', () => {
    it(`PAR errors / RedirectUri not registered on client -> 400 invalid_request ${tag}`, async () => {
      const res = await par(vc, await membershipPar(vc, { redirect_uri: 'https://evil.example/cb' }));
      expectError(res, 'invalid_request', 'redirect_uri');
    });

    it(`PAR errors / RedirectUri registered for another client only -> 400 invalid_request ${tag}`, async () => {
      // OTHER_REDIRECT is registered for issuer-pkce, not for issuer-plain
      const res = await par(vc, await membershipPar(vc, { redirect_uri: 'https://rp.example/other' }));
      expectError(res, 'invalid_request', 'redirect_uri');
    });

    it(`Authentication 3: RedirectUri must match exactly (trailing slash, case, extra query) -> 400 invalid_request ${tag}`, async () => {
      for (const redirect_uri of [`${REDIRECT}/`, REDIRECT.toUpperCase(), `${REDIRECT}?x=1`]) {
        const res = await par(vc, await membershipPar(vc, { redirect_uri }));
        expectError(res, 'invalid_request', 'redirect_uri');
      }
    });

    it(`PAR errors / RedirectUri missing -> 400 invalid_request ${tag}`, async () => {
      const res = await par(vc, await membershipPar(vc, { redirect_uri: undefined }));
      expectError(res, 'invalid_request', 'redirect_uri');
    });
  });

  describe('PAR errors / Scope -> 400 invalid_scope', () => {
    it(`PAR errors / Scope not provided -> 400 invalid_scope ${tag}`, async () => {
      const res = await par(vc, await membershipPar(vc, { scope: undefined }));
      expectError(res, 'invalid_scope', 'scope');
    });

    it(`PAR errors / Scope not registered for the client (issuer-plain asks issue.EmployeeBadge) -> 400 invalid_scope ${tag}`, async () => {
      const res = await par(vc, await membershipPar(vc, { scope: vc.issue('EmployeeBadge') }));
      expectError(res, 'invalid_scope', 'scope');
    });

    it(`PAR errors / Scope of an unknown credential type -> 400 invalid_scope ${tag}`, async () => {
      const res = await par(vc, await membershipPar(vc, { scope: vc.issue('NoSuchType') }));
      expectError(res, 'invalid_scope', 'scope');
    });

    it(`Scope format / issuance with two issue.* scopes -> 400 invalid_scope ${tag}`, async () => {
      const pkce = pkcePair();
      const res = await par(vc, {
        client_id: 'issuer-pkce',
        client_secret: SECRETS.pkceIssuer,
        response_type: 'code',
        redirect_uri: REDIRECT,
        scope: `${vc.v === 'v2' ? 'openid ' : ''}issue.EmployeeBadge issue.MembershipCard`,
        nonce: 'n',
        id_token_hint: await hint(vc, 'issuer-pkce', badge()),
        ...(vc.v === 'v2' ? { code_challenge: pkce.challenge, code_challenge_method: 'S256' } : {}),
      });
      expectError(res, 'invalid_scope', 'scope');
    });

    it(`Scope format / issuance mixed with a verification type -> 400 invalid_scope ${tag}`, async () => {
      const res = await par(vc, await membershipPar(vc, { scope: `${vc.issue('MembershipCard')} MembershipCard` }));
      expectError(res, 'invalid_scope', 'scope');
    });

    if (vc.v === 'v2') {
      it('Scope format / Version 2 issuance without openid -> 400 invalid_scope (v2)', async () => {
        const res = await par(vc, await membershipPar(vc, { scope: 'issue.MembershipCard' }));
        expectError(res, 'invalid_scope', 'openid');
      });
    } else {
      it('Scope format / Version 1 issuance with openid -> 400 invalid_scope (v1)', async () => {
        const res = await par(vc, await membershipPar(vc, { scope: 'openid issue.MembershipCard' }));
        expectError(res, 'invalid_scope', 'openid');
      });
    }

    it(`Scope format / verification without openid -> 400 invalid_scope ${tag}`, async () => {
      const res = await par(vc, await membershipPar(vc, { scope: 'MembershipCard', id_token_hint: undefined }));
      expectError(res, 'invalid_scope', 'openid');
    });
  });

  describe('PAR errors / ResponseType and ResponseMode', () => {
    it(`PAR errors / ResponseType not code (token) -> 400 unsupported_response_type ${tag}`, async () => {
      const res = await par(vc, await membershipPar(vc, { response_type: 'token' }));
      expectError(res, 'unsupported_response_type', 'response_type');
    });

    it(`PAR errors / ResponseType not code (code id_token) -> 400 unsupported_response_type ${tag}`, async () => {
      const res = await par(vc, await membershipPar(vc, { response_type: 'code id_token' }));
      expectError(res, 'unsupported_response_type', 'response_type');
    });

    it(`PAR errors / ResponseType missing -> 400 invalid_request (as the non-PAR "Not provided" row) ${tag}`, async () => {
      const res = await par(vc, await membershipPar(vc, { response_type: undefined }));
      expectError(res, 'invalid_request', 'response_type');
    });

    it.each(['fragment', 'form_post', 'query.jwt'])(
      `PAR errors / ResponseMode not query (%s) -> 400 invalid_request ${tag}`,
      async (mode) => {
        const res = await par(vc, await membershipPar(vc, { response_mode: mode }));
        expectError(res, 'invalid_request', 'response_mode');
      },
    );
  });

  describe('PAR errors / IdTokenHint not valid -> 400 invalid_request (D4, D7)', () => {
    it(`PAR errors / IdTokenHint missing for issuance -> 400 invalid_request ${tag}`, async () => {
      const res = await par(vc, await membershipPar(vc, { id_token_hint: undefined }));
      expectError(res, 'invalid_request', 'id_token_hint');
    });

    it.each(['garbage', 'a.b.c', 'eyJhbGciOiJIUzI1NiJ9.e30', '...'])(
      `PAR errors / IdTokenHint garbage (%s) -> 400 invalid_request ${tag}`,
      async (garbage) => {
        const res = await par(vc, await membershipPar(vc, { id_token_hint: garbage }));
        expectError(res, 'invalid_request', 'id_token_hint');
      },
    );

    it(`PAR errors / IdTokenHint with alg none (D7) -> 400 invalid_request ${tag}`, async () => {
      const res = await par(
        vc,
        await membershipPar(vc, { id_token_hint: unsignedHint(vc, 'issuer-plain', membership()) }),
      );
      expectError(res, 'invalid_request', 'id_token_hint');
    });

    it(`PAR errors / IdTokenHint with alg none and a signature copied from a valid hint -> 400 invalid_request ${tag}`, async () => {
      const valid = await hint(vc, 'issuer-plain', membership());
      const [, payload, sig] = valid.split('.');
      const forged = `${b64url({ alg: 'none', typ: 'JWT' })}.${payload}.${sig}`;
      const res = await par(vc, await membershipPar(vc, { id_token_hint: forged }));
      expectError(res, 'invalid_request', 'id_token_hint');
    });

    it(`PAR errors / IdTokenHint signed with another secret -> 400 invalid_request ${tag}`, async () => {
      const forged = await makeHint({
        clientId: 'issuer-plain',
        secret: 'not-the-registered-secret-000',
        audience: vc.issuer(),
        claims: membership(),
      });
      const res = await par(vc, await membershipPar(vc, { id_token_hint: forged }));
      expectError(res, 'invalid_request', 'id_token_hint');
    });

    it(`PAR errors / IdTokenHint signed with another client's secret -> 400 invalid_request ${tag}`, async () => {
      const forged = await makeHint({
        clientId: 'issuer-plain',
        secret: SECRETS.other,
        audience: vc.issuer(),
        claims: membership(),
      });
      const res = await par(vc, await membershipPar(vc, { id_token_hint: forged }));
      expectError(res, 'invalid_request', 'id_token_hint');
    });

    it(`PAR errors / IdTokenHint with a tampered payload -> 400 invalid_request ${tag}`, async () => {
      const valid = await hint(vc, 'issuer-plain', membership());
      const [h, , s] = valid.split('.');
      const now = Math.floor(Date.now() / 1000);
      const tampered = `${h}.${b64url({ ...membership(), MemberNumber: 1, iss: 'issuer-plain', aud: vc.issuer(), exp: now + 300 })}.${s}`;
      const res = await par(vc, await membershipPar(vc, { id_token_hint: tampered }));
      expectError(res, 'invalid_request', 'id_token_hint');
    });

    it(`id_token_hint rules / iss not the client_id -> 400 invalid_request ${tag}`, async () => {
      const wrong = await makeHint({
        clientId: 'other',
        secret: SECRETS.plainIssuer,
        audience: vc.issuer(),
        claims: membership(),
      });
      const res = await par(vc, await membershipPar(vc, { id_token_hint: wrong }));
      expectError(res, 'invalid_request', /id_token_hint.*iss/);
    });

    it(`id_token_hint rules / aud is the other version's issuer (D1) -> 400 invalid_request ${tag}`, async () => {
      const wrong = await makeHint({
        clientId: 'issuer-plain',
        secret: SECRETS.plainIssuer,
        audience: vc.otherIssuer(),
        claims: membership(),
      });
      const res = await par(vc, await membershipPar(vc, { id_token_hint: wrong }));
      expectError(res, 'invalid_request', /id_token_hint.*aud/);
    });

    it(`id_token_hint rules / aud is the PAR endpoint, not the issuer -> 400 invalid_request ${tag}`, async () => {
      const wrong = await makeHint({
        clientId: 'issuer-plain',
        secret: SECRETS.plainIssuer,
        audience: `${url}${vc.par}`,
        claims: membership(),
      });
      const res = await par(vc, await membershipPar(vc, { id_token_hint: wrong }));
      expectError(res, 'invalid_request', /id_token_hint.*aud/);
    });

    it(`id_token_hint rules / exp has passed -> 400 invalid_request ${tag}`, async () => {
      const expired = await hint(vc, 'issuer-plain', membership(), { expiresIn: -3600 });
      const res = await par(vc, await membershipPar(vc, { id_token_hint: expired }));
      expectError(res, 'invalid_request', /id_token_hint.*exp/);
    });

    it(`id_token_hint rules / exp missing -> 400 invalid_request ${tag}`, async () => {
      const noExp = await rawHint(SECRETS.plainIssuer, {
        ...membership(),
        iss: 'issuer-plain',
        aud: vc.issuer(),
        iat: Math.floor(Date.now() / 1000),
      });
      const res = await par(vc, await membershipPar(vc, { id_token_hint: noExp }));
      expectError(res, 'invalid_request', /id_token_hint.*exp/);
    });

    it(`id_token_hint rules / iss missing -> 400 invalid_request ${tag}`, async () => {
      const now = Math.floor(Date.now() / 1000);
      const noIss = await rawHint(SECRETS.plainIssuer, { ...membership(), aud: vc.issuer(), exp: now + 300 });
      const res = await par(vc, await membershipPar(vc, { id_token_hint: noIss }));
      expectError(res, 'invalid_request', /id_token_hint.*iss/);
    });

    it(`id_token_hint rules / aud missing -> 400 invalid_request ${tag}`, async () => {
      const now = Math.floor(Date.now() / 1000);
      const noAud = await rawHint(SECRETS.plainIssuer, { ...membership(), iss: 'issuer-plain', exp: now + 300 });
      const res = await par(vc, await membershipPar(vc, { id_token_hint: noAud }));
      expectError(res, 'invalid_request', /id_token_hint.*aud/);
    });

    it(`id_token_hint rules / nbf in the future -> 400 invalid_request ${tag}`, async () => {
      const now = Math.floor(Date.now() / 1000);
      const early = await rawHint(SECRETS.plainIssuer, {
        ...membership(),
        iss: 'issuer-plain',
        aud: vc.issuer(),
        iat: now,
        nbf: now + 3600,
        exp: now + 7200,
      });
      const res = await par(vc, await membershipPar(vc, { id_token_hint: early }));
      expectError(res, 'invalid_request', /id_token_hint.*nbf/);
    });

    it(`id_token_hint rules / nbf in the past is accepted -> 201 ${tag}`, async () => {
      const now = Math.floor(Date.now() / 1000);
      const ok = await rawHint(SECRETS.plainIssuer, {
        ...membership(),
        iss: 'issuer-plain',
        aud: vc.issuer(),
        iat: now,
        nbf: now - 10,
        exp: now + 300,
        jti: randomBytes(8).toString('hex'),
      });
      expectCreated(await par(vc, await membershipPar(vc, { id_token_hint: ok })));
    });

    it(`D7: an RS256 hint when the client has no registered public key -> 400 invalid_request ${tag}`, async () => {
      const { generateKeyPair } = await import('jose');
      const { privateKey } = await generateKeyPair('RS256');
      const now = Math.floor(Date.now() / 1000);
      const rs = await new SignJWT({ ...membership(), iss: 'issuer-plain', aud: vc.issuer(), exp: now + 300 })
        .setProtectedHeader({ alg: 'RS256' })
        .sign(privateKey);
      const res = await par(vc, await membershipPar(vc, { id_token_hint: rs }));
      expectError(res, 'invalid_request', 'id_token_hint');
    });

    it(`id_token_hint: a verification request must not carry an id_token_hint -> 400 invalid_request ${tag}`, async () => {
      const res = await par(vc, await membershipPar(vc, { scope: 'openid MembershipCard' }));
      expectError(res, 'invalid_request', 'id_token_hint');
    });
  });

  describe('PAR errors / PIN rules -> 400 invalid_request (Authentication 7, D4, D8)', () => {
    it(`PIN rules / PinCode for a type without pinCodeLength (MembershipCard) -> 400 invalid_request ${tag}`, async () => {
      const h = await hint(vc, 'issuer-plain', { ...membership(), PinCode: '1234' });
      const res = await par(vc, await membershipPar(vc, { id_token_hint: h }));
      expectError(res, 'invalid_request', 'PinCode');
    });

    it.each(['12a4', '12 4', '١٢٣٤', '-123', '12.4'])(
      `PIN rules / PinCode not numeric (%s) -> 400 invalid_request ${tag}`,
      async (pin) => {
        const res = await par(vc, await badgePar(vc, { ...badge(), PinCode: pin }));
        expectError(res, 'invalid_request', 'PinCode');
      },
    );

    it.each(['123', '12345', '0'])(
      `PIN rules / PinCode of the wrong length (%s, pinCodeLength 4) -> 400 invalid_request ${tag}`,
      async (pin) => {
        const res = await par(vc, await badgePar(vc, { ...badge(), PinCode: pin }));
        expectError(res, 'invalid_request', 'PinCode');
      },
    );

    it(`id_token_hint rules / PinCode as a JSON number -> 400 invalid_request (a string of digits) ${tag}`, async () => {
      const res = await par(vc, await badgePar(vc, { ...badge(), PinCode: 1234 }));
      expectError(res, 'invalid_request', 'PinCode');
    });

    it(`D4: the PIN value never appears in the error ${tag}`, async () => {
      const res = await par(vc, await badgePar(vc, { ...badge(), PinCode: '98765' }));
      expectError(res, 'invalid_request', 'PinCode');
      expect(JSON.stringify(res.body)).not.toContain('98765');
    });
  });

  describe('D7: a hint backs at most one credential', () => {
    it(`D7: a replayed hint (same hint in a second PAR) -> 400 invalid_request ${tag}`, async () => {
      const h = await hint(vc, 'issuer-plain', membership());
      expectCreated(await par(vc, await membershipPar(vc, { id_token_hint: h })));
      const res = await par(vc, await membershipPar(vc, { id_token_hint: h }));
      expectError(res, 'invalid_request', 'id_token_hint');
    });

    it(`D7: a replayed hint without jti (keyed by its hash) -> 400 invalid_request ${tag}`, async () => {
      const now = Math.floor(Date.now() / 1000);
      const h = await rawHint(SECRETS.plainIssuer, {
        ...membership(),
        iss: 'issuer-plain',
        aud: vc.issuer(),
        iat: now,
        exp: now + 300,
      });
      expectCreated(await par(vc, await membershipPar(vc, { id_token_hint: h })));
      const res = await par(vc, await membershipPar(vc, { id_token_hint: h }));
      expectError(res, 'invalid_request', 'id_token_hint');
    });

    it(`D7: two different hints with the same jti -> the second is refused (400 invalid_request) ${tag}`, async () => {
      const jti = randomBytes(8).toString('hex');
      expectCreated(
        await par(
          vc,
          await membershipPar(vc, { id_token_hint: await hint(vc, 'issuer-plain', membership(), { jti }) }),
        ),
      );
      const res = await par(
        vc,
        await membershipPar(vc, {
          id_token_hint: await hint(vc, 'issuer-plain', { ...membership(), MemberNumber: 2 }, { jti }),
        }),
      );
      expectError(res, 'invalid_request', 'id_token_hint');
    });

    it(`D7: a request that fails another check does not burn its hint ${tag}`, async () => {
      const h = await hint(vc, 'issuer-plain', membership());
      expectError(
        await par(vc, await membershipPar(vc, { id_token_hint: h, redirect_uri: 'https://evil.example/cb' })),
        'invalid_request',
        'redirect_uri',
      );
      expectError(
        await par(vc, await membershipPar(vc, { id_token_hint: h, client_secret: 'wrong-secret-0123456789' })),
        'unauthorised_client',
        'client_secret',
      );
      expectCreated(await par(vc, await membershipPar(vc, { id_token_hint: h })));
    });
  });
});

describe('PKCE at PAR', () => {
  const badgeForPkce = async (overrides: Params = {}): Promise<Params> => ({
    client_id: 'issuer-pkce',
    client_secret: SECRETS.pkceIssuer,
    response_type: 'code',
    redirect_uri: REDIRECT,
    scope: 'openid issue.EmployeeBadge',
    nonce: 'n-1',
    state: 's-1',
    id_token_hint: await hint(V2, 'issuer-pkce', badge()),
    ...overrides,
  });

  it('Version 2 adds / code_challenge: PKCE required and challenge not provided -> 400 invalid_request (v2 PAR)', async () => {
    const res = await par(V2, await badgeForPkce());
    expectError(res, 'invalid_request', 'code_challenge');
  });

  it('Version 2 adds / code_challenge_method: PKCE required and method not supported (S512) -> 400 invalid_request (v2 PAR)', async () => {
    const res = await par(
      V2,
      await badgeForPkce({ code_challenge: pkcePair().challenge, code_challenge_method: 'S512' }),
    );
    expectError(res, 'invalid_request', 'code_challenge_method');
  });

  it('D5: code_challenge_method missing with a challenge -> 400 invalid_request (v2 PAR)', async () => {
    const res = await par(V2, await badgeForPkce({ code_challenge: pkcePair().challenge }));
    expectError(res, 'invalid_request', 'code_challenge_method');
  });

  it('RFC 7636 4.2: an S256 challenge that is not 43 base64url characters -> 400 invalid_request (v2 PAR)', async () => {
    const res = await par(V2, await badgeForPkce({ code_challenge: 'short', code_challenge_method: 'S256' }));
    expectError(res, 'invalid_request', 'code_challenge');
  });

  it('Endpoints / PAR: code_challenge_method S256 with a challenge -> 201 (v2 PAR, PKCE client)', async () => {
    expectCreated(
      await par(V2, await badgeForPkce({ code_challenge: pkcePair().challenge, code_challenge_method: 'S256' })),
    );
  });

  it('D5: code_challenge_method plain with a challenge -> 201 (v2 PAR, PKCE client)', async () => {
    expectCreated(
      await par(V2, await badgeForPkce({ code_challenge: pkcePair().verifier, code_challenge_method: 'plain' })),
    );
  });

  it('PKCE optional client: no code_challenge -> 201; with one -> 201 (v2 PAR)', async () => {
    expectCreated(await par(V2, await membershipPar(V2)));
    expectCreated(
      await par(V2, await membershipPar(V2, { code_challenge: pkcePair().challenge, code_challenge_method: 'S256' })),
    );
  });

  it('Versioning / PKCE: Version 1 PAR with code_challenge -> 400 invalid_request (v1)', async () => {
    const res = await par(
      V1,
      await membershipPar(V1, { code_challenge: pkcePair().challenge, code_challenge_method: 'S256' }),
    );
    expectError(res, 'invalid_request', 'code_challenge');
  });

  it('Versioning / PKCE: Version 1 PAR with only code_challenge_method -> 400 invalid_request (v1)', async () => {
    const res = await par(V1, await membershipPar(V1, { code_challenge_method: 'S256' }));
    expectError(res, 'invalid_request', 'code_challenge');
  });

  it('Versioning / PKCE: Version 1 PAR for the PKCE-required client without code_challenge -> 201 (v1 has no PKCE at PAR)', async () => {
    const res = await par(V1, {
      client_id: 'issuer-pkce',
      client_secret: SECRETS.pkceIssuer,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'issue.EmployeeBadge',
      nonce: 'n-1',
      id_token_hint: await hint(V1, 'issuer-pkce', badge()),
    });
    expectCreated(res);
  });
});
