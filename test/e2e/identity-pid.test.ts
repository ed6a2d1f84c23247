import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { calculateJwkThumbprint } from 'jose';
import { ENDPOINT_SETS, discoverRp, type EndpointSet } from '../helpers/endpointSets.js';
import { startTestService, testConfig, REDIRECT, type TestService } from '../helpers/service.js';
import { holderCompletesVerification, requestFromPage } from '../helpers/flows.js';
import { Browser } from '../helpers/rp.js';
import { testPidIssuer, type PidIssuer } from '../helpers/pid.js';
import type { DevWallet } from '../../src/wallet/holder.js';

/**
 * Issue 18, VerifiedIdentity (D12): the holder presents a person-identification credential (an SD-JWT VC
 * PID from an issuer other than this service) with the dev wallet; the relying party is openid-client
 * unmodified, in the spec's four endpoint sets. Spec Scope format row: "First identity-verification flow:
 * VerifiedIdentity; must contain openid".
 */
let t: TestService;
let pidIssuer: PidIssuer;
let untrusted: PidIssuer;
const person = {
  given_name: 'Ada',
  family_name: 'Lovelace',
  birthdate: '1815-12-10',
  nationalities: ['GB'],
  personal_administrative_number: 'PAN-1815',
};

beforeAll(async () => {
  pidIssuer = await testPidIssuer('https://pid.test');
  untrusted = await testPidIssuer('https://rogue-pid.test');
  const base = testConfig(0) as { clients: Array<{ clientId: string; scopes: string[] }> };
  t = await startTestService({
    clients: base.clients.map((c) =>
      c.clientId === 'issuer-plain' ? c : { ...c, scopes: [...c.scopes, 'VerifiedIdentity'] },
    ),
    identity: {
      VerifiedIdentity: {
        vct: ['urn:eudi:pid:1', 'https://example.eu/pid'],
        claims: ['given_name', 'family_name', 'birthdate'],
        optionalClaims: ['nationalities', 'address'],
        subjectClaim: 'personal_administrative_number',
        trustedIssuers: [{ issuer: pidIssuer.issuer, jwks: pidIssuer.jwks }],
      },
    },
  });
});
afterAll(async () => t?.stop());

type Case = EndpointSet;
const cases = ENDPOINT_SETS;

async function rp(c: Case) {
  return discoverRp(t.url, c);
}

/** The relying party's whole flow; returns the ID token's claims, or the error the redirect carried. */
async function identify(
  c: Case,
  wallet: DevWallet,
): Promise<{ claims?: oidc.IDToken; error?: URLSearchParams; nonce: string }> {
  const config = await rp(c);
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const params: Record<string, string> = { redirect_uri: REDIRECT, scope: 'openid VerifiedIdentity', state, nonce };
  if (c.pkce)
    Object.assign(params, {
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
  const url = c.par
    ? await oidc.buildAuthorizationUrlWithPAR(config, params)
    : oidc.buildAuthorizationUrl(config, params);
  const { callbackUrl } = await holderCompletesVerification(url.href, { redirectUri: REDIRECT, wallet });
  const back = new URL(callbackUrl);
  if (back.searchParams.get('error')) {
    expect(back.searchParams.get('state')).toBe(state);
    return { error: back.searchParams, nonce };
  }
  const tokens = await oidc.authorizationCodeGrant(config, back, {
    pkceCodeVerifier: c.pkce ? verifier : undefined,
    expectedState: state,
    expectedNonce: nonce,
    idTokenExpected: true,
  });
  return { claims: tokens.claims()!, nonce };
}

describe.each(cases)('VerifiedIdentity end to end: $name', (c) => {
  it('returns an ID token with the presented PID claims under their own names, the nonce, and a pairwise sub', async () => {
    const wallet = await pidIssuer.walletWith(person);
    const { claims, nonce } = await identify(c, wallet);
    expect(claims).toMatchObject({
      given_name: 'Ada',
      family_name: 'Lovelace',
      birthdate: '1815-12-10',
      nationalities: ['GB'],
      iss: c.issuer(t.url),
      aud: c.clientId,
      nonce,
    });
    // the subject claim identifies the person for `sub`; it is not a claim the block lists, so it stays out
    expect(claims!.personal_administrative_number).toBeUndefined();
    expect(claims!.sub).toMatch(/^[A-Za-z0-9_-]{43}$/);
  });
});

describe('VerifiedIdentity: the subject (OIDC Core §8.1 pairwise)', () => {
  const v2par = cases[0];
  const v2 = cases[1];
  const v1par = cases[2];

  it('is the same for the same person with another PID in another wallet, and differs between clients', async () => {
    const first = await identify(v2par, await pidIssuer.walletWith(person));
    const second = await identify(v2, await pidIssuer.walletWith({ ...person, given_name: 'Augusta Ada' }));
    expect(second.claims!.sub).toBe(first.claims!.sub);
    const atOtherClient = await identify(v1par, await pidIssuer.walletWith(person));
    expect(atOtherClient.claims!.sub).not.toBe(first.claims!.sub);
  });

  it('without the subject claim it comes from the holder key: stable for one wallet, never the bare key thumbprint', async () => {
    const { personal_administrative_number: _, ...withoutNumber } = person;
    const wallet = await pidIssuer.walletWith(withoutNumber);
    const once = await identify(v2par, wallet);
    const twice = await identify(v2, wallet);
    expect(twice.claims!.sub).toBe(once.claims!.sub);
    const { d: _d, ...holderPublic } = wallet.list()[0].holderKey;
    expect(once.claims!.sub).not.toBe(await calculateJwkThumbprint(holderPublic));
    const other = await identify(v2par, await pidIssuer.walletWith(withoutNumber));
    expect(other.claims!.sub).not.toBe(once.claims!.sub);
  });

  it('withheld optional claims are simply absent; another accepted vct is accepted', async () => {
    const { nationalities: _, ...required } = person;
    const { claims } = await identify(
      cases[0],
      await pidIssuer.walletWith(required, { vct: 'https://example.eu/pid' }),
    );
    expect(claims).toMatchObject({ given_name: 'Ada', family_name: 'Lovelace', birthdate: '1815-12-10' });
    expect(claims!.nationalities).toBeUndefined();
  });
});

/** The browser's part around an independent holder: the prompt, the PID presented by `present`, then continue. */
async function identifyDirectly(c: Case, present: (link: string) => Promise<{ status: number; body: any }>) {
  const config = await rp(c);
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const params: Record<string, string> = {
    redirect_uri: REDIRECT,
    scope: 'openid VerifiedIdentity',
    state,
    nonce: 'n',
  };
  if (c.pkce)
    Object.assign(params, {
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
    });
  const url = c.par
    ? await oidc.buildAuthorizationUrlWithPAR(config, params)
    : oidc.buildAuthorizationUrl(config, params);
  const browser = new Browser(REDIRECT);
  const prompt = await browser.follow(url.href);
  const presented = await present(requestFromPage(prompt.html!));
  const status = JSON.parse((await browser.follow(`${prompt.final}/status`)).html!);
  const done = await browser.follow(`${prompt.final}/continue`);
  const back = new URL(done.final).searchParams;
  expect(back.get('state')).toBe(state);
  return {
    presented,
    status,
    back,
    prompt: prompt.html!,
    tokens: back.get('code')
      ? await oidc.authorizationCodeGrant(config, new URL(done.final), {
          pkceCodeVerifier: c.pkce ? verifier : undefined,
          expectedState: state,
          expectedNonce: 'n',
        })
      : undefined,
  };
}

describe('VerifiedIdentity: an independent holder (no dev wallet code) presents a PID', () => {
  it("is accepted like the dev wallet's", async () => {
    const { presented, tokens } = await identifyDirectly(cases[0], (link) => pidIssuer.presentDirectly(link, person));
    expect(presented.status).toBe(200);
    expect(tokens!.claims()).toMatchObject({
      given_name: 'Ada',
      family_name: 'Lovelace',
      birthdate: '1815-12-10',
      nationalities: ['GB'],
    });
  });
});

describe('VerifiedIdentity: what the prompt lists is what the ID token carries', () => {
  it('the required claims all, the optional ones the PID has, nothing the prompt did not list', async () => {
    const { tokens, prompt } = await identifyDirectly(cases[0], (link) => pidIssuer.presentDirectly(link, person));
    const listed = [...prompt.matchAll(/<li data-attribute="([^"]+)"( data-optional)?>/g)].map((m) => ({
      name: m[1],
      optional: Boolean(m[2]),
    }));
    expect(listed).toEqual([
      { name: 'given_name', optional: false },
      { name: 'family_name', optional: false },
      { name: 'birthdate', optional: false },
      { name: 'personal_administrative_number', optional: true },
      { name: 'nationalities', optional: true },
      { name: 'address', optional: true },
    ]);
    const claims = tokens!.claims() as Record<string, unknown>;
    const protocol = new Set([
      'iss',
      'sub',
      'aud',
      'exp',
      'iat',
      'nbf',
      'jti',
      'auth_time',
      'nonce',
      'at_hash',
      'c_hash',
      'sid',
      'acr',
      'amr',
      'azp',
    ]);
    const carried = Object.keys(claims).filter((name) => !protocol.has(name));
    for (const { name, optional } of listed) {
      // the subject claim makes `sub` and is carried only when it is also a listed claim of the block
      if (name === 'personal_administrative_number') continue;
      if (!optional || Object.hasOwn(person, name))
        expect(claims[name], name).toEqual(person[name as keyof typeof person]);
      else expect(claims[name], name).toBeUndefined();
    }
    expect(carried.filter((name) => !listed.some((l) => l.name === name))).toEqual([]);
  });
});

describe('VerifiedIdentity: a PID that is not good enough ends the flow with access_denied and says which', () => {
  it("lacks a required claim; the prompt tells the person in plain words, the page never reads the relying party's description", async () => {
    const { birthdate: _, ...withoutBirthdate } = person;
    const { presented, status, back, prompt } = await identifyDirectly(cases[1], (link) =>
      pidIssuer.presentDirectly(link, withoutBirthdate),
    );
    expect(presented.status).toBe(400);
    expect(back.get('error')).toBe('access_denied');
    expect(back.get('error_description')).toMatch(/does not disclose birthdate/);
    expect(prompt).toContain('Prove your identity');
    expect(prompt).toContain('Birthdate');
    expect(status).toEqual({
      status: 'failed',
      message: 'The presented credential does not contain everything that was asked for.',
    });
  });

  it('comes from an untrusted issuer (even one the service trusts for other credentials)', async () => {
    const { error } = await identify(cases[1], await untrusted.walletWith(person));
    expect(error!.get('error')).toBe('access_denied');
    expect(error!.get('error_description')).toMatch(/the credential's issuer \(iss\) is not trusted/);
  });

  it('is expired', async () => {
    const { error } = await identify(
      cases[2],
      await pidIssuer.walletWith(person, { exp: Math.floor(Date.now() / 1000) - 3600 }),
    );
    expect(error!.get('error')).toBe('access_denied');
    expect(error!.get('error_description')).toMatch(/expired/);
  });

  it('is of a type the block does not accept', async () => {
    const { back } = await identifyDirectly(cases[3], (link) =>
      pidIssuer.presentDirectly(link, person, { vct: 'https://example.eu/not-a-pid' }),
    );
    expect(back.get('error')).toBe('access_denied');
    expect(back.get('error_description')).toMatch(/vct/);
  });
});
