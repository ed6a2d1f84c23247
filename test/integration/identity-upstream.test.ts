import { createHash } from 'node:crypto';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser.js';
import { startRedirectTarget } from '../helpers/rpServer.js';
import {
  confirmUpstreamLogin,
  declineUpstreamLogin,
  startUpstreamIdv,
  type TestUpstreamIdv,
  type UpstreamPerson,
} from '../helpers/upstreamIdv.js';
import { UpstreamError, UpstreamIdv, UPSTREAM_BODY_LIMIT, type UpstreamStart } from '../../src/identity/upstream.js';
import type { UpstreamIdvConfig } from '../../src/config/schema.js';
import { loopbackOutbound } from '../helpers/outbound.js';
import { OutboundFetch } from '../../src/http/outboundFetch.js';

/** the provider runs on 127.0.0.1: allowed as for a service on a loopback base URL */
const outbound = loopbackOutbound();

/**
 * Issue 18, VerifiedIdentity_Other (D12): the upstream client (src/identity/upstream.ts) against a real
 * oidc-provider instance on loopback (the built-in test identity provider, src/demo/idvProvider.ts),
 * whose login page Chromium fills in. Nothing here uses the store, so it runs in the memory project only.
 */
const run = process.env.TEST_STORE === 'redis' ? describe.skip : describe;

const SECRET_BASIC = 'basic-secret-at-the-provider-0123456789';
const SECRET_POST = 'post-secret-at-the-provider-0123456789';
const GRACE: UpstreamPerson = { givenName: 'Grace', familyName: 'Hopper', birthDate: '1906-12-09' };

let rp: Awaited<ReturnType<typeof startRedirectTarget>>;
let idv: TestUpstreamIdv;
let browser: Browser;
/** our callback, `{base_url}/identity/callback` (the redirect target records whatever path) */
let callback: string;

beforeAll(async () => {
  rp = await startRedirectTarget();
  callback = new URL('/identity/callback', rp.redirectUri).href;
  idv = await startUpstreamIdv({
    clients: [
      { clientId: 'rp-basic', clientSecret: SECRET_BASIC, clientAuth: 'client_secret_basic', redirectUris: [callback] },
      { clientId: 'rp-post', clientSecret: SECRET_POST, clientAuth: 'client_secret_post', redirectUris: [callback] },
    ],
    verifiedClaims: true,
  });
  browser = await launchChromium();
});
afterEach(async () => {
  idv.reset();
  await idv.restart();
});
afterAll(async () => {
  await outbound.close();
  await browser?.close();
  await idv?.close();
  await rp?.stop();
});

function config(over: Partial<UpstreamIdvConfig> = {}): UpstreamIdvConfig {
  return {
    displayName: 'Example ID check',
    issuer: idv.issuer,
    clientId: 'rp-basic',
    clientSecret: SECRET_BASIC,
    clientAuth: 'client_secret_basic',
    scopes: ['openid', 'profile'],
    // email: a claim this provider never gives
    claims: { given_name: 'FirstName', family_name: 'LastName', birthdate: 'BirthDate', email: 'Email' },
    verifiedClaims: false,
    ...over,
  };
}

const client = (over: Partial<UpstreamIdvConfig> = {}, timeoutMs?: number) =>
  new UpstreamIdv(config(over), { redirectUri: callback, timeoutMs, outbound });

/** The person's part in a fresh browser: from the authorization URL to where the provider sends the browser back. */
async function atProvider(
  start: UpstreamStart,
  act: (page: Page) => Promise<URL> = (page) => confirmUpstreamLogin(page, GRACE),
): Promise<URL> {
  const context = await browser.newContext();
  try {
    const page = await context.newPage();
    await page.goto(start.url);
    return await act(page);
  } finally {
    await context.close();
  }
}

/** The UpstreamError a step ends with; its message must be plain printable ASCII and carry none of `secrets`. */
async function failure(step: Promise<unknown>, secrets: Array<string | null | undefined> = []): Promise<UpstreamError> {
  const err = await step.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(UpstreamError);
  const { message } = err as UpstreamError;
  expect(message).toMatch(/^[\x20-\x7E]+$/);
  // issue: never claim values, codes, tokens or the client secret in messages
  for (const s of [SECRET_BASIC, SECRET_POST, 'Grace', 'Hopper', '1906-12-09', ...secrets])
    if (s) expect(message).not.toContain(s);
  return err as UpstreamError;
}

const secretsOf = (start: UpstreamStart, back?: URL) => [
  start.state,
  start.nonce,
  start.codeVerifier,
  back?.searchParams.get('code'),
];

run('the upstream identity provider (VerifiedIdentity_Other)', () => {
  // issue: authorization code with PKCE (S256), state and nonce; claims of the provider's ID token mapped as configured
  it('sends the person with PKCE S256, state and nonce, and maps the validated claims', async () => {
    const upstream = client();
    expect(upstream.displayName).toBe('Example ID check');
    const start = await upstream.start();
    const url = new URL(start.url);
    expect(`${url.origin}${url.pathname}`).toBe(`${idv.issuer}/auth`);
    const q = url.searchParams;
    expect(q.get('response_type')).toBe('code');
    expect(q.get('client_id')).toBe('rp-basic');
    expect(q.get('redirect_uri')).toBe(callback);
    expect(q.get('scope')).toBe('openid profile');
    expect(q.get('code_challenge_method')).toBe('S256');
    expect(q.get('code_challenge')).toBe(createHash('sha256').update(start.codeVerifier).digest('base64url'));
    expect(q.get('state')).toBe(start.state);
    expect(q.get('nonce')).toBe(start.nonce);
    expect(q.has('claims')).toBe(false);
    for (const v of [start.state, start.nonce, start.codeVerifier]) expect(v).toMatch(/^[A-Za-z0-9_-]{43,}$/);
    // fresh for every start
    const again = await upstream.start();
    expect(
      new Set([start.state, again.state, start.nonce, again.nonce, start.codeVerifier, again.codeVerifier]).size,
    ).toBe(6);

    const back = await atProvider(start);
    expect(back.pathname).toBe('/identity/callback');
    expect(back.searchParams.get('state')).toBe(start.state);
    expect(back.searchParams.get('iss')).toBe(idv.issuer);
    expect(back.searchParams.get('code')).toBeTruthy();

    const identity = await upstream.finish(back, start);
    expect(identity.issuer).toBe(idv.issuer);
    expect(identity.subject).toMatch(/^[A-Za-z0-9_-]{43}$/);
    // a claim the provider did not give (email) is left out
    expect(identity.claims).toEqual({ FirstName: 'Grace', LastName: 'Hopper', BirthDate: '1906-12-09' });
    expect(idv.lastTokenAuth).toBe('client_secret_basic');
    // the provider's ID token itself carried them, with the journey's nonce
    expect(decodeJwt(idv.lastIdToken!)).toMatchObject({
      iss: idv.issuer,
      aud: 'rp-basic',
      nonce: start.nonce,
      sub: identity.subject,
      given_name: 'Grace',
      family_name: 'Hopper',
      birthdate: '1906-12-09',
    });
  });

  // issue: clientAuth maps to client_secret_post; config example: sub stable for the same person
  it('authenticates with client_secret_post, and another instance can finish what one started', async () => {
    const first = await client({ clientId: 'rp-basic' }).start();
    const firstIdentity = await client({ clientId: 'rp-basic' }).finish(await atProvider(first), first);

    const start = await client({
      clientId: 'rp-post',
      clientSecret: SECRET_POST,
      clientAuth: 'client_secret_post',
    }).start();
    const back = await atProvider(start);
    // a fresh instance (another process of the service) discovers on its own
    const identity = await client({
      clientId: 'rp-post',
      clientSecret: SECRET_POST,
      clientAuth: 'client_secret_post',
    }).finish(back, start);
    expect(identity.claims).toEqual({ FirstName: 'Grace', LastName: 'Hopper', BirthDate: '1906-12-09' });
    expect(identity.subject).toBe(firstIdentity.subject);
    expect(idv.lastTokenAuth).toBe('client_secret_post');
    expect(decodeJwt(idv.lastIdToken!).aud).toBe('rp-post');
  });

  // an identity check that verified none of the configured claims ends the flow (with what to check), not an empty ID token
  it('ends invalid when the provider gives none of the configured claims', async () => {
    const upstream = client({ clientId: 'rp-basic', scopes: ['openid'], claims: { nickname: 'nickname' } });
    const start = await upstream.start();
    const err = await failure(upstream.finish(await atProvider(start), start), secretsOf(start));
    expect(err.reason).toBe('invalid');
    expect(err.message).toContain('none of the configured claims');
  });

  // issue: never the client secret in messages; a provider that refuses our client is a clear error
  it('ends unavailable when the provider does not accept the client secret', async () => {
    const wrong = 'not-the-secret-0123456789';
    const start = await client({ clientSecret: wrong }).start();
    const back = await atProvider(start);
    const err = await failure(client({ clientSecret: wrong }).finish(back, start), [...secretsOf(start, back), wrong]);
    expect(err.reason).toBe('unavailable');
    expect(err.message).toBe(
      "the identity provider did not accept this service's client authentication (invalid_client)",
    );
  });

  // issue: verifiedClaims true: the claims request parameter (OIDC Core 5.5) for verified_claims (OIDC4IDA), mapped from verified_claims.claims
  it('asks for verified_claims and maps them under verified_claims', async () => {
    const upstream = client({ verifiedClaims: true });
    const start = await upstream.start();
    const asked = {
      verified_claims: {
        verification: { trust_framework: null },
        claims: { given_name: null, family_name: null, birthdate: null, email: null },
      },
    };
    expect(JSON.parse(new URL(start.url).searchParams.get('claims')!)).toEqual({ id_token: asked, userinfo: asked });

    const identity = await upstream.finish(await atProvider(start, (page) => confirmUpstreamLogin(page)), start);
    expect(identity.claims).toEqual({
      verified_claims: {
        verification: { trust_framework: 'demo' },
        claims: { FirstName: 'Ada', LastName: 'Lovelace', BirthDate: '1815-12-10' },
      },
    });
    expect(decodeJwt(idv.lastIdToken!).verified_claims).toEqual({
      verification: { trust_framework: 'demo' },
      claims: { given_name: 'Ada', family_name: 'Lovelace', birthdate: '1815-12-10' },
    });
  });

  // issue: the test provider's login page: escaped, no JavaScript, accessible (labels, a <main>), a CSP without inline scripts
  it("shows the test provider's login page without script, and a page for an interaction that has ended", async () => {
    const start = await client().start();
    const context = await browser.newContext();
    const page = await context.newPage();
    const response = await page.goto(start.url);
    const csp = response!.headers()['content-security-policy'];
    expect(csp).toMatch(/default-src 'none'/);
    expect(csp).not.toMatch(/script-src/);
    expect(csp).toMatch(/form-action 'self' http:\/\/127\.0\.0\.1:\d+;/);
    expect(await page.locator('script').count()).toBe(0);
    await expect.poll(() => page.locator('main h1').innerText()).toBe('Example ID check (demo)');
    expect(await page.getByLabel('Given name').inputValue()).toBe('Ada');
    expect(await page.getByLabel('Family name').inputValue()).toBe('Lovelace');
    expect(await page.getByLabel('Birth date').inputValue()).toBe('1815-12-10');
    expect(await page.getByRole('button', { name: 'Decline' }).count()).toBe(1);
    // what a person enters comes back escaped when the form is refused
    await page.getByLabel('Given name').fill('<b>Ada</b>');
    await page.getByLabel('Birth date').fill('2999-01-01');
    await page.getByRole('button', { name: 'Confirm identity' }).click();
    await expect.poll(() => page.getByRole('alert').innerText()).toMatch(/birth date/);
    expect(await page.getByLabel('Given name').inputValue()).toBe('<b>Ada</b>');
    expect(await page.locator('main b').count()).toBe(0);
    await context.close();

    const ended = await fetch(`${idv.issuer}/interaction/no-such-interaction`);
    expect(ended.status).toBe(400);
    expect(await ended.text()).toContain('This identity check has ended');
  });

  // issue: provider error (access_denied from it) ends as a clear error naming it
  it('ends refused, naming access_denied, when the person declines at the provider', async () => {
    const upstream = client();
    const start = await upstream.start();
    const back = await atProvider(start, declineUpstreamLogin);
    expect(back.searchParams.get('error')).toBe('access_denied');
    const err = await failure(upstream.finish(back, start), secretsOf(start, back));
    expect(err.reason).toBe('refused');
    expect(err.message).toBe('the identity provider answered access_denied: The person declined the identity check.');
  });

  // issue: the provider's description sanitised to printable ASCII, at most 200 characters
  it('quotes an error answer sanitised, and takes temporarily_unavailable as unavailable', async () => {
    const upstream = client();
    const start = await upstream.start();
    const answer = (error: string, description: string) => {
      const u = new URL(callback);
      u.search = new URLSearchParams({
        error,
        error_description: description,
        state: start.state,
        iss: idv.issuer,
      }).toString();
      return u;
    };
    const refused = await failure(
      upstream.finish(answer('access_denied', `no\u0000\u001b[31m thanks\n\u00e9\u202e${'x'.repeat(500)}`), start),
      secretsOf(start),
    );
    expect(refused.reason).toBe('refused');
    const prefix = 'the identity provider answered access_denied: ';
    expect(refused.message.startsWith(`${prefix}no [31m thanks `)).toBe(true);
    expect(refused.message.length).toBeLessThanOrEqual(prefix.length + 200);

    const down = await failure(
      upstream.finish(answer('temporarily_unavailable', 'maintenance'), start),
      secretsOf(start),
    );
    expect(down.reason).toBe('unavailable');
    expect(down.message).toBe('the identity provider answered temporarily_unavailable: maintenance');
  });

  // issue: wrong state ends as a clear error
  it('ends invalid when the answer carries another state', async () => {
    const upstream = client();
    const start = await upstream.start();
    const other = await upstream.start();
    const back = await atProvider(start);
    const err = await failure(upstream.finish(back, { ...start, state: other.state }), [
      ...secretsOf(start, back),
      other.state,
    ]);
    expect(err.reason).toBe('invalid');
    expect(err.message).toMatch(/state/);
  });

  // issue: wrong nonce ends as a clear error (the ID token's nonce is checked)
  it('ends invalid when the ID token carries another nonce', async () => {
    idv.tamper.replaceNonce = true;
    const upstream = client();
    const start = await upstream.start();
    const back = await atProvider(start);
    const err = await failure(upstream.finish(back, start), secretsOf(start, back));
    expect(err.reason).toBe('invalid');
    expect(err.message).toMatch(/nonce/);
    expect(decodeJwt(idv.lastIdToken!).nonce).not.toBe(start.nonce);
  });

  // issue: the ID token's signature is validated with the provider's JWKS; a bad one ends as a clear error
  it('ends invalid when the ID token signature does not verify', async () => {
    idv.tamper.corruptSignature = true;
    const upstream = client();
    const start = await upstream.start();
    const back = await atProvider(start);
    const err = await failure(upstream.finish(back, start), secretsOf(start, back));
    expect(err.reason).toBe('invalid');
    expect(err.message).toBe("the identity provider's ID token signature does not verify");
  });

  // issue: provider down ends as a clear error; discovery is cached after success only
  it('ends unavailable when the provider is down at the start, and discovers once it is back', async () => {
    const upstream = client();
    await idv.stop();
    const err = await failure(upstream.start());
    expect(err.reason).toBe('unavailable');
    expect(err.message).toBe('the identity provider is unavailable');
    await idv.restart();
    const start = await upstream.start();
    expect(new URL(start.url).searchParams.get('state')).toBe(start.state);
  });

  // issue: provider down ends as a clear error (at the code exchange)
  it('ends unavailable when the provider is down at the finish', async () => {
    const upstream = client();
    const start = await upstream.start();
    const back = await atProvider(start);
    await idv.stop();
    const err = await failure(upstream.finish(back, start), secretsOf(start, back));
    expect(err.reason).toBe('unavailable');
    expect(err.message).toBe('the identity provider is unavailable');
  });

  // issue: timeouts via openid-client's options: a provider that does not answer is unavailable
  it('ends unavailable when the provider does not answer in time', async () => {
    const upstream = client({}, 300);
    const start = await upstream.start();
    const back = await atProvider(start);
    idv.tamper.holdTokenMs = 10_000;
    const err = await failure(upstream.finish(back, start), secretsOf(start, back));
    expect(err.reason).toBe('unavailable');
    expect(err.message).toBe('the identity provider did not answer in time');
  });

  // a hostile or broken provider's answer is read within a bound, never into memory whole
  it('ends invalid when an answer of the provider is over its size limit', async () => {
    const upstream = client();
    const start = await upstream.start();
    const back = await atProvider(start);
    idv.tamper.padTokenBytes = UPSTREAM_BODY_LIMIT + 1;
    const err = await failure(upstream.finish(back, start), secretsOf(start, back));
    expect(err.reason).toBe('invalid');
    expect(err.message).toBe("the identity provider's answer is over 256 KiB");
  });

  // issue: http issuers only on loopback hosts (allowInsecureRequests for those only)
  it('uses an http issuer on loopback, and no http issuer elsewhere', async () => {
    expect(new URL(idv.issuer).protocol).toBe('http:');
    expect((await client().start()).url.startsWith(`${idv.issuer}/auth?`)).toBe(true);
    const err = await failure(client({ issuer: 'http://idv.example' }).start());
    expect(err.reason).toBe('unavailable');
    expect(err.message).toBe('the identity provider is not reachable over https');
  });

  // docs/decisions.md "Outbound fetches": the provider and every endpoint its discovery names meet the outbound rules
  it('does not reach a provider on a loopback address that the outbound rules do not allow', async () => {
    const strict = new OutboundFetch();
    try {
      const upstream = new UpstreamIdv(config(), { redirectUri: callback, outbound: strict });
      const err = await failure(upstream.start());
      expect(err.reason).toBe('unavailable');
      expect(err.message).toBe(
        'the identity provider is at a loopback address, which outboundFetch.allowedPrivateTargets does not allow',
      );
    } finally {
      await strict.close();
    }
  });
});
