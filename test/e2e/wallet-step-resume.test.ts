import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { startTestService, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { Browser, offerFromPage } from '../helpers/rp.js';
import { newWallet, pushIssuance, requestFromPage } from '../helpers/flows.js';

/**
 * When the wallet step succeeds, the authorisation is finished from the wallet's own request: the
 * prompt's status answers `done` with the provider's resume URL, and the browser goes there directly
 * (one redirect fewer). The continue step stays for pages without JavaScript, failures and expiry.
 */
let t: TestService;
beforeAll(async () => {
  t = await startTestService();
});
afterAll(async () => t?.stop());

const attributes = { FirstName: 'Ada', LastName: 'Lovelace', Email: 'ada@example.com' };

async function statusOf(browser: Browser, promptUrl: string): Promise<{ status: string; next?: string }> {
  const res = await browser.get(`${promptUrl}/status`);
  expect(res.status).toBe(200);
  return (await res.json()) as { status: string; next?: string };
}

describe('the wallet step finishes the authorisation', () => {
  it('issuance: status done names the resume URL, which leads to the client with a code for the right ID token', async () => {
    const rp = await pushIssuance(t.url, {
      clientId: 'issuer-pkce',
      secret: SECRETS.pkceIssuer,
      attributes,
      pin: '4321',
      redirectUri: REDIRECT,
    });
    const browser = new Browser(REDIRECT);
    const prompt = await browser.follow(rp.authorizeUrl.href);
    expect(await statusOf(browser, prompt.final)).toEqual({ status: 'pending' });

    const wallet = await newWallet();
    await wallet.receive(offerFromPage(prompt.html!), { pin: '4321' });
    const done = await statusOf(browser, prompt.final);
    expect(done.status).toBe('done');
    expect(done.next).toBe(`${t.url}/v2.0/oidc/authorize/${prompt.final.split('/').pop()}`);

    const back = await browser.follow(done.next!);
    expect(back.final.startsWith(REDIRECT)).toBe(true);
    const tokens = await oidc.authorizationCodeGrant(rp.config, new URL(back.final), {
      pkceCodeVerifier: rp.verifier,
      expectedState: rp.state,
      expectedNonce: rp.nonce,
      idTokenExpected: true,
    });
    const claims = tokens.claims()!;
    expect(claims).toMatchObject(attributes);
    expect(claims.sub).toBe(claims.SerialNumber); // D2
    const [held] = wallet.list();
    expect(held.claims).toMatchObject(attributes);
  });

  it('issuance: the continue step still works afterwards (no JavaScript), once', async () => {
    const rp = await pushIssuance(t.url, {
      clientId: 'issuer-pkce',
      secret: SECRETS.pkceIssuer,
      attributes,
      redirectUri: REDIRECT,
    });
    const browser = new Browser(REDIRECT);
    const prompt = await browser.follow(rp.authorizeUrl.href);
    await (await newWallet()).receive(offerFromPage(prompt.html!));
    const back = await browser.follow(`${prompt.final}/continue`);
    expect(back.final.startsWith(REDIRECT)).toBe(true);
    expect(new URL(back.final).searchParams.get('code')).toBeTruthy();
    // the interaction is over: the prompt, its status and continue answer as expired
    const again = await browser.follow(`${prompt.final}/continue`);
    expect(again.res?.status).toBe(400);
    expect((await browser.get(`${prompt.final}/status`)).status).toBe(404);
  });

  it('verification: status done names the resume URL, which leads to the client with the verified claims', async () => {
    const wallet = await newWallet();
    const issuance = await pushIssuance(t.url, {
      clientId: 'issuer-pkce',
      secret: SECRETS.pkceIssuer,
      attributes,
      redirectUri: REDIRECT,
    });
    const b1 = new Browser(REDIRECT);
    const p1 = await b1.follow(issuance.authorizeUrl.href);
    await wallet.receive(offerFromPage(p1.html!));

    const config = await oidc.discovery(
      new URL(`${t.url}/v2.0/.well-known/openid-configuration`),
      'other',
      SECRETS.other,
      oidc.ClientSecretPost(SECRETS.other),
      {
        execute: [oidc.allowInsecureRequests],
      },
    );
    const nonce = oidc.randomNonce();
    const url = await oidc.buildAuthorizationUrlWithPAR(config, {
      redirect_uri: REDIRECT,
      scope: 'openid EmployeeBadge',
      nonce,
      state: 'v-state',
    });
    const browser = new Browser(REDIRECT);
    const prompt = await browser.follow(url.href);
    await wallet.present(requestFromPage(prompt.html!));
    const done = await statusOf(browser, prompt.final);
    expect(done).toEqual({ status: 'done', next: `${t.url}/v2.0/oidc/authorize/${prompt.final.split('/').pop()}` });
    const back = await browser.follow(done.next!);
    const tokens = await oidc.authorizationCodeGrant(config, new URL(back.final), {
      expectedState: 'v-state',
      expectedNonce: nonce,
    });
    expect(tokens.claims()).toMatchObject(attributes);
  });

  it('another browser cannot use the resume URL (it has no interaction cookie)', async () => {
    const rp = await pushIssuance(t.url, {
      clientId: 'issuer-pkce',
      secret: SECRETS.pkceIssuer,
      attributes,
      redirectUri: REDIRECT,
    });
    const browser = new Browser(REDIRECT);
    const prompt = await browser.follow(rp.authorizeUrl.href);
    await (await newWallet()).receive(offerFromPage(prompt.html!));
    const { next } = await statusOf(browser, prompt.final);
    const stranger = await new Browser(REDIRECT).follow(next!);
    expect(stranger.final.startsWith(REDIRECT) && new URL(stranger.final).searchParams.get('code')).toBeFalsy();
    // the holder's browser still gets its code
    const back = await browser.follow(next!);
    expect(new URL(back.final).searchParams.get('code')).toBeTruthy();
  });
});
