/**
 * Discovery from the issuer (OIDC Discovery 1.0 §4: the document is at the issuer +
 * `/.well-known/openid-configuration`, and its `issuer` must equal the issuer it was looked up from), under
 * the two operator settings that make it work for Version 2, each beside the interface's defaults:
 * - `versions.v2Issuer: v2.0`: Version 2's issuer is `{base_url}/v2.0`, where its document already is; ID
 *   tokens' `iss` and hints' `aud` follow (D1); Version 1 is unchanged.
 * - `versions.v1: false`: Version 1 is off (no /oidc endpoints or documents), and the root document is
 *   Version 2's (issuer `{base_url}`).
 * Each: a library-like check (fetch the issuer's document, compare `issuer`), openid-client's `discovery()`
 * from the bare issuer URL, and a full Version 2 flow (PAR, the holder, the code, the ID token, UserInfo).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { decodeJwt } from 'jose';
import { startTestService, testConfig, REDIRECT, SECRETS, type TestService } from '../helpers/service.js';
import { makeHint, pkcePair, postForm } from '../helpers/rp.js';
import { holderCompletesIssuance, newWallet } from '../helpers/flows.js';
import { expectError } from '../helpers/assertions.js';

const LEGACY = { clientId: 'legacy-iss', secret: 'legacy-issuer-secret-0123456789' };

interface Setting {
  name: string;
  versions: Record<string, unknown>;
  /** Version 2's issuer at `base` */
  v2Issuer: (base: string) => string;
  v1: boolean;
}

const SETTINGS: Setting[] = [
  { name: 'versions.v2Issuer: v2.0', versions: { v2Issuer: 'v2.0' }, v2Issuer: (b) => `${b}/v2.0`, v1: true },
  { name: 'versions.v1: false', versions: { v1: false }, v2Issuer: (b) => b, v1: false },
];

const getJson = async (url: string) => {
  const res = await fetch(url);
  const text = await res.text();
  let body: any = text;
  try {
    body = JSON.parse(text);
  } catch {
    /* not JSON */
  }
  return { status: res.status, body };
};

/** openid-client at its defaults: discovery from the bare issuer URL, the client's secret (client_secret_post). */
const discover = (issuer: string, client = { id: 'issuer-pkce', secret: SECRETS.pkceIssuer }, auth?: oidc.ClientAuth) =>
  oidc.discovery(new URL(issuer), client.id, client.secret, auth, { execute: [oidc.allowInsecureRequests] });

/** A full Version 2 issuance as a relying party at its defaults lives it, from discovery by issuer to UserInfo. */
async function issuanceFlow(config: oidc.Configuration, issuer: string) {
  const verifier = oidc.randomPKCECodeVerifier();
  const nonce = oidc.randomNonce();
  const state = oidc.randomState();
  const hint = await makeHint({
    clientId: 'issuer-pkce',
    secret: SECRETS.pkceIssuer,
    audience: issuer, // D1: the hint's aud is the version's issuer
    claims: { FirstName: 'Ada', LastName: 'Lovelace', PinCode: '1234' },
  });
  const url = await oidc.buildAuthorizationUrlWithPAR(config, {
    redirect_uri: REDIRECT,
    scope: 'openid issue.EmployeeBadge',
    nonce,
    state,
    id_token_hint: hint,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
  });
  const { callbackUrl } = await holderCompletesIssuance(url.href, {
    redirectUri: REDIRECT,
    wallet: await newWallet(),
    pin: '1234',
  });
  // RFC 9207: openid-client compares the callback's iss with the discovered issuer
  expect(new URL(callbackUrl).searchParams.get('iss')).toBe(issuer);
  const tokens = await oidc.authorizationCodeGrant(config, new URL(callbackUrl), {
    pkceCodeVerifier: verifier,
    expectedNonce: nonce,
    expectedState: state,
    idTokenExpected: true,
  });
  const claims = tokens.claims()!;
  expect(claims).toMatchObject({ iss: issuer, aud: 'issuer-pkce', FirstName: 'Ada', nonce });
  const info = await oidc.fetchUserInfo(config, tokens.access_token, claims.sub);
  expect(info).toMatchObject({ sub: claims.sub, FirstName: 'Ada', SerialNumber: claims.SerialNumber });
  return tokens;
}

describe.each(SETTINGS)('discovery from the issuer: $name', (s) => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService((base) => ({
      versions: s.versions,
      clients: [
        ...(testConfig(Number(new URL(base).port)) as { clients: unknown[] }).clients,
        {
          clientId: LEGACY.clientId,
          clientSecret: LEGACY.secret,
          redirectUris: [REDIRECT],
          scopes: ['issue.EmployeeBadge'],
          legacyV2Issuer: true,
        },
      ],
    }));
  });
  afterAll(async () => t?.stop());

  it('OIDC Discovery 4: the issuer + /.well-known/openid-configuration is a Version 2 document whose issuer is that issuer', async () => {
    const issuer = s.v2Issuer(t.url);
    const { status, body } = await getJson(`${issuer}/.well-known/openid-configuration`);
    expect(status).toBe(200);
    expect(body.issuer).toBe(issuer);
    // the same document as at the interface's Version 2 address
    expect(body).toEqual((await getJson(`${t.url}/v2.0/.well-known/openid-configuration`)).body);
    expect(body.pushed_authorization_request_endpoint).toBe(`${t.url}/v2.0/oidc/par`);
    expect(body.authorization_endpoint).toBe(`${t.url}/v2.0/oidc/authorize`);
  });

  it("openid-client's discovery() at its defaults from the bare issuer URL, and with client_secret_basic", async () => {
    const issuer = s.v2Issuer(t.url);
    const config = await discover(issuer);
    expect(config.serverMetadata().issuer).toBe(issuer);
    const basic = await discover(issuer, undefined, oidc.ClientSecretBasic(SECRETS.pkceIssuer));
    expect(basic.serverMetadata().token_endpoint).toBe(`${t.url}/v2.0/oidc/token`);
  });

  it('a full Version 2 flow: PAR, the holder, the code, ID token iss = the issuer (D1), UserInfo', async () => {
    const issuer = s.v2Issuer(t.url);
    await issuanceFlow(await discover(issuer), issuer);
  });

  it("D1: a hint whose aud is not Version 2's issuer fails PAR (400 invalid_request naming aud)", async () => {
    const wrong = s.v2Issuer(t.url) === t.url ? `${t.url}/v2.0` : t.url;
    const { challenge } = pkcePair();
    const res = await postForm(`${t.url}/v2.0/oidc/par`, {
      client_id: 'issuer-pkce',
      client_secret: SECRETS.pkceIssuer,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid issue.EmployeeBadge',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      id_token_hint: await makeHint({
        clientId: 'issuer-pkce',
        secret: SECRETS.pkceIssuer,
        audience: wrong,
        claims: { FirstName: 'Ada', LastName: 'Lovelace' },
      }),
    });
    expectError(res, 'invalid_request', 'aud');
  });

  it('D1: a client flagged legacyV2Issuer still gets {base_url}/oidc as iss (the sample value, whatever the setting)', async () => {
    const { verifier, challenge } = pkcePair();
    void verifier;
    const issuer = s.v2Issuer(t.url);
    const par = await postForm(`${t.url}/v2.0/oidc/par`, {
      client_id: LEGACY.clientId,
      client_secret: LEGACY.secret,
      response_type: 'code',
      redirect_uri: REDIRECT,
      scope: 'openid issue.EmployeeBadge',
      nonce: 'n',
      code_challenge: challenge,
      code_challenge_method: 'S256',
      id_token_hint: await makeHint({
        clientId: LEGACY.clientId,
        secret: LEGACY.secret,
        audience: issuer,
        claims: { FirstName: 'Ada', LastName: 'Lovelace' },
      }),
    });
    expect(par.status, JSON.stringify(par.body)).toBe(201);
    const authorize = `${t.url}/v2.0/oidc/authorize?${new URLSearchParams({ client_id: LEGACY.clientId, request_uri: par.body.request_uri })}`;
    const { callbackUrl } = await holderCompletesIssuance(authorize, {
      redirectUri: REDIRECT,
      wallet: await newWallet(),
    });
    const callback = new URL(callbackUrl);
    expect(callback.searchParams.get('iss')).toBe(issuer); // RFC 9207: the document's issuer
    const token = await postForm(`${t.url}/v2.0/oidc/token`, {
      grant_type: 'authorization_code',
      client_id: LEGACY.clientId,
      client_secret: LEGACY.secret,
      code: callback.searchParams.get('code')!,
      redirect_uri: REDIRECT,
      code_verifier: verifier,
    });
    expect(token.status, JSON.stringify(token.body)).toBe(200);
    expect(decodeJwt(token.body.id_token).iss).toBe(`${t.url}/oidc`);
    const info = await fetch(`${t.url}/v2.0/oidc/userinfo`, {
      headers: { authorization: `Bearer ${token.body.access_token}` },
    });
    expect(info.status).toBe(200);
  });

  if (s.v1) {
    it('Version 1 is unchanged: its documents, issuer {base_url}/oidc, and the root document is still its own', async () => {
      const root = await getJson(`${t.url}/.well-known/openid-configuration`);
      expect(root.body.issuer).toBe(`${t.url}/oidc`);
      expect(root.body.authorization_endpoint).toBe(`${t.url}/oidc/authorizev1`);
      const par = await getJson(`${t.url}/oidc/.well-known/openid-configuration`);
      expect(par.body.issuer).toBe(`${t.url}/oidc`);
      const config = await discover(`${t.url}/oidc`, { id: 'other', secret: SECRETS.other });
      expect(config.serverMetadata().require_pushed_authorization_requests).toBe(true);
    });
  } else {
    it('Version 1 is off: every /oidc endpoint and document answers 404, the root key set too', async () => {
      for (const path of [
        '/oidc/.well-known/openid-configuration',
        '/oidc/.well-known/openid-configuration/jwks',
        '/.well-known/openid-configuration/jwks',
        '/oidc/authorize?client_id=other&request_uri=urn:x',
        '/oidc/authorizev1?client_id=issuer-pkce',
        '/oidc/userinfo',
      ])
        expect((await fetch(`${t.url}${path}`, { redirect: 'manual' })).status, path).toBe(404);
      for (const path of ['/oidc/par', '/oidc/token'])
        expect(
          (await postForm(`${t.url}${path}`, { client_id: 'other', client_secret: SECRETS.other })).status,
          path,
        ).toBe(404);
    });
  }
});

describe('both settings at once: versions.v1: false and versions.v2Issuer: v2.0', () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService({ versions: { v1: false, v2Issuer: 'v2.0' } });
  });
  afterAll(async () => t?.stop());

  it('discovery from {base_url}/v2.0 works; the root document is not served (it would name another issuer)', async () => {
    const config = await discover(`${t.url}/v2.0`);
    expect(config.serverMetadata().issuer).toBe(`${t.url}/v2.0`);
    expect((await fetch(`${t.url}/.well-known/openid-configuration`)).status).toBe(404);
    expect((await fetch(`${t.url}/oidc/.well-known/openid-configuration`)).status).toBe(404);
  });
});

describe("the interface's defaults: discovery from {base_url} finds Version 1's root document and is refused", () => {
  let t: TestService;
  beforeAll(async () => {
    t = await startTestService();
  });
  afterAll(async () => t?.stop());

  it('OIDC Discovery 4.3: the issuers differ, so a library refuses; the full discovery URL is what the recipes use', async () => {
    await expect(discover(t.url)).rejects.toThrow(/issuer/);
    const config = await oidc.discovery(
      new URL(`${t.url}/v2.0/.well-known/openid-configuration`),
      'issuer-pkce',
      SECRETS.pkceIssuer,
      undefined,
      { execute: [oidc.allowInsecureRequests] },
    );
    expect(config.serverMetadata().issuer).toBe(t.url);
    await issuanceFlow(config, t.url);
  });
});
