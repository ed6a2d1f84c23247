/**
 * Verification through the W3C Digital Credentials API in Chromium (OpenID4VP 1.0 Appendix A): where the
 * browser offers the API, the prompt's main action is "Use a wallet on this device"; the holder's click
 * calls navigator.credentials.get, Chromium's virtual wallet (DevTools Protocol
 * `DigitalCredentials.setVirtualWalletBehavior`) answers with what an independent holder
 * (@openid4vc/openid4vp, @sd-jwt/sd-jwt-vc) made for the page's request and origin, and the browser goes on
 * to the relying party as in every flow. A decline keeps the link and the QR code; a browser without the
 * API sees today's page.
 */
import { X509Certificate } from 'node:crypto';
import * as oidc from 'openid-client';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.js';
import {
  startTestService,
  testConfig,
  REDIRECT,
  SECRETS,
  VERIFIER_CA_PEM,
  type TestService,
} from '../helpers/service.js';
import { makeHint, pkcePair } from '../helpers/rp.js';
import { holderCompletesIssuance, newWallet, pushAuthorization } from '../helpers/flows.js';
import { discoverRp, ENDPOINT_SETS, type EndpointSet } from '../helpers/endpointSets.js';
import { firstClaimSet, presentSdJwtDisclosing, type ResolvedRequest } from '../helpers/openid4vpHolder.js';
import { holderAnswersDcApi, type DigitalRequest } from '../helpers/dcApiHolder.js';
import { testPidIssuer, type PidIssuer } from '../helpers/pid.js';
import { startWebhookReceiver, webhookSecret } from '../helpers/webhookReceiver.js';
import type { DevWallet, StoredCredential } from '../../src/wallet/holder.js';

const trust = new X509Certificate(VERIFIER_CA_PEM);
const EXTERNAL = { id: 'ext-dc', secret: 'ext-dc-secret-0123456789abcdef' };
const secret = webhookSecret();
const person = { given_name: 'Ada', family_name: 'Lovelace', birthdate: '1815-12-10' };

let t: TestService;
let browser: Browser;
let wallet: DevWallet;
let badge: StoredCredential;
let pidIssuer: PidIssuer;
let pid: StoredCredential;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

beforeAll(async () => {
  pidIssuer = await testPidIssuer('https://pid.test');
  receiver = await startWebhookReceiver(secret);
  const base = testConfig(0) as { clients: Array<{ clientId: string; scopes: string[] }> };
  t = await startTestService({
    clients: [
      ...base.clients.map((c) =>
        c.clientId === 'issuer-plain' ? c : { ...c, scopes: [...c.scopes, 'VerifiedIdentity'] },
      ),
      {
        clientId: EXTERNAL.id,
        clientName: 'Kiosk App',
        clientSecret: EXTERNAL.secret,
        redirectUris: [REDIRECT],
        scopes: ['EmployeeBadge', 'External'],
        webhook: { url: receiver.url, secret },
      },
    ],
    identity: {
      VerifiedIdentity: {
        vct: ['urn:eudi:pid:1'],
        claims: ['given_name', 'family_name', 'birthdate'],
        trustedIssuers: [{ issuer: pidIssuer.issuer, jwks: pidIssuer.jwks }],
      },
    },
  });
  browser = await launchChromium();
  wallet = await newWallet();
  const { challenge } = pkcePair();
  const { authorizeUrl } = await pushAuthorization(t.url, {
    scope: 'openid issue.EmployeeBadge',
    nonce: 'n',
    id_token_hint: await makeHint({
      clientId: 'issuer-pkce',
      secret: SECRETS.pkceIssuer,
      audience: t.url,
      claims: { FirstName: 'Grace', LastName: 'Hopper' },
    }),
    code_challenge: challenge,
    code_challenge_method: 'S256',
  });
  await holderCompletesIssuance(authorizeUrl, { redirectUri: REDIRECT, wallet });
  badge = wallet.list()[0];
  pid = (await pidIssuer.walletWith(person)).list()[0];
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await receiver?.close();
});

/** The relying party's authorise URL for `scope` through one endpoint set (openid-client, unmodified). */
async function authorizeUrl(c: EndpointSet, scope: string): Promise<{ url: string; state: string }> {
  const config = await discoverRp(t.url, c);
  const state = oidc.randomState();
  const params: Record<string, string> = { redirect_uri: REDIRECT, scope, state, nonce: 'n' };
  if (c.pkce)
    Object.assign(params, {
      code_challenge: await oidc.calculatePKCECodeChallenge(oidc.randomPKCECodeVerifier()),
      code_challenge_method: 'S256',
    });
  const url = c.par
    ? await oidc.buildAuthorizationUrlWithPAR(config, params)
    : oidc.buildAuthorizationUrl(config, params);
  return { url: url.href, state };
}

/** An independent holder's presentation of `held`, bound to the origin (Appendix A.4). */
const present = (held: StoredCredential) => async (request: ResolvedRequest) => {
  const query = request.dcql_query.credentials[0];
  const disclose = firstClaimSet(query, Object.keys(held.claims))!;
  const vp = await presentSdJwtDisclosing(held.credential, held.holderKey, disclose, {
    aud: `origin:${new URL(t.url).origin}`,
    nonce: request.nonce,
  });
  return { [query.id]: [vp] };
};

/** The requests the page got (the same cookie's GET the page made), and the virtual wallet told to answer with the holder's answer. */
async function walletWillAnswer(page: Page, held: StoredCredential): Promise<void> {
  const requests = (await page.evaluate(async () => {
    const url = document.getElementById('dc-api')!.getAttribute('data-url')!;
    return ((await (await fetch(url)).json()) as { requests: unknown[] }).requests;
  })) as DigitalRequest[];
  const answer = await holderAnswersDcApi(requests, {
    protocol: 'openid4vp-v1-signed',
    origin: new URL(t.url).origin,
    trust,
    answer: present(held),
  });
  await virtualWallet(page, { action: 'respond', protocol: answer.protocol, response: answer.data });
}

async function virtualWallet(page: Page, behaviour: Record<string, unknown>): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('DigitalCredentials.setVirtualWalletBehavior' as never, behaviour as never);
}

/** A page; its visit to the relying party's redirect URI (served by no one here) is read from its request. */
async function newPage(options: Parameters<Browser['newPage']>[0] = {}): Promise<Page> {
  return browser.newPage({ viewport: { width: 1280, height: 900 }, ...options });
}

async function openPrompt(url: string): Promise<Page> {
  const page = await newPage();
  await page.goto(url);
  await page.locator('#dc-api-button').waitFor({ state: 'visible', timeout: 10_000 });
  return page;
}

/** The browser goes on to the relying party with a code and the request's state. */
async function expectCode(arrival: Promise<{ url(): string }>, state: string): Promise<void> {
  const q = new URL((await arrival).url()).searchParams;
  expect(q.get('error'), q.toString()).toBeNull();
  expect(q.get('code')).toBeTruthy();
  expect(q.get('state')).toBe(state);
}

const arrivalAt = (page: Page) => page.waitForRequest((r) => r.url().startsWith(REDIRECT), { timeout: 15_000 });

// the browser's part does not depend on the store; test/integration/dc-api.test.ts runs the answers on both
const run = process.env.TEST_STORE === 'redis' ? describe.skip : describe;

run('a wallet on this device through the Digital Credentials API', () => {
  it.each(ENDPOINT_SETS.slice(0, 3))('$name: the click asks, the wallet answers, the browser goes on', async (c) => {
    const { url, state } = await authorizeUrl(c, 'openid EmployeeBadge');
    const page = await openPrompt(url);
    // the main action; the link stays beside it, the QR code too
    expect(await page.locator('#wallet-link').getAttribute('class')).toContain('button--secondary');
    await expect.poll(() => page.locator('.qr-code svg').count()).toBe(1);
    await page.screenshot({ path: `/tmp/dc-api-prompt-${c.name.replace(/\W+/g, '-')}.png`, fullPage: true });
    await walletWillAnswer(page, badge);
    const arrival = arrivalAt(page);
    const posted = page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/dc-api'));
    await page.locator('#dc-api-button').click();
    expect(JSON.parse((await posted).postData()!)).toMatchObject({ protocol: 'openid4vp-v1-signed' });
    await expectCode(arrival, state);
    await page.close();
  });

  it('an answer bound to another origin: the browser arrives with access_denied naming the rule', async () => {
    const { url, state } = await authorizeUrl(ENDPOINT_SETS[0], 'openid EmployeeBadge');
    const page = await openPrompt(url);
    const requests = (await page.evaluate(async () => {
      const at = document.getElementById('dc-api')!.getAttribute('data-url')!;
      return ((await (await fetch(at)).json()) as { requests: unknown[] }).requests;
    })) as DigitalRequest[];
    const answer = await holderAnswersDcApi(requests, {
      protocol: 'openid4vp-v1-unsigned',
      origin: 'https://evil.example',
      trust,
      answer: async (request) => {
        const query = request.dcql_query.credentials[0];
        const vp = await presentSdJwtDisclosing(badge.credential, badge.holderKey, ['FirstName', 'LastName'], {
          aud: 'origin:https://evil.example',
          nonce: request.nonce,
        });
        return { [query.id]: [vp] };
      },
    });
    await virtualWallet(page, { action: 'respond', protocol: answer.protocol, response: answer.data });
    const arrival = arrivalAt(page);
    await page.locator('#dc-api-button').click();
    const q = new URL((await arrival).url()).searchParams;
    expect(q.get('error')).toBe('access_denied');
    expect(q.get('state')).toBe(state);
    expect(q.get('error_description')).toMatch(/aud is not origin:http:\/\/127\.0\.0\.1:\d+/);
    await page.close();
  });

  it('VerifiedIdentity: the PID comes through the browser', async () => {
    const { url, state } = await authorizeUrl(ENDPOINT_SETS[0], 'openid VerifiedIdentity');
    const page = await openPrompt(url);
    await walletWillAnswer(page, pid);
    const arrival = arrivalAt(page);
    await page.locator('#dc-api-button').click();
    await expectCode(arrival, state);
    await page.close();
  });

  it('External: the page says the client has been told, and the webhook comes', async () => {
    const { challenge } = pkcePair();
    const { authorizeUrl: url } = await pushAuthorization(t.url, {
      client_id: EXTERNAL.id,
      client_secret: EXTERNAL.secret,
      scope: 'openid EmployeeBadge External',
      state: 'ext-state',
      nonce: 'n',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const page = await openPrompt(url);
    await walletWillAnswer(page, badge);
    await page.locator('#dc-api-button').click();
    await expect
      .poll(() => page.locator('#status-text').innerText(), { timeout: 10_000 })
      .toContain('Kiosk App will continue from here');
    const hook = await receiver.next((h) => h.payload.type.startsWith('flow.'));
    expect(hook.payload.type).toBe('flow.completed');
    await page.close();
  });

  it('declined: the page says so in the holder language, and the QR code still finishes the flow', async () => {
    const { url, state } = await authorizeUrl(ENDPOINT_SETS[0], 'openid EmployeeBadge');
    const page = await newPage({ viewport: { width: 390, height: 844 }, locale: 'de-DE' });
    await page.goto(url);
    await page.locator('#dc-api-button').waitFor({ state: 'visible', timeout: 10_000 });
    await virtualWallet(page, { action: 'decline' });
    await page.locator('#dc-api-button').click();
    await expect
      .poll(() => page.locator('#dc-api-status').innerText(), { timeout: 10_000 })
      .toContain('Es wurde nichts geteilt');
    expect(await page.locator('#dc-api-button').isEnabled()).toBe(true);
    await page.screenshot({ path: '/tmp/dc-api-declined-de-390.png', fullPage: true });
    const qr = await page.locator('[data-wallet-link^="openid4vp://"]').getAttribute('data-wallet-link');
    const arrival = arrivalAt(page);
    expect((await wallet.present(qr!)).status).toBe(200);
    await expectCode(arrival, state);
    await page.close();
  });

  it('a browser that allows only org-iso-mdoc (as Safari): the page is the link and the QR code, as before', async () => {
    const { url } = await authorizeUrl(ENDPOINT_SETS[0], 'openid EmployeeBadge');
    const context = await browser.newContext();
    await context.addInitScript(() => {
      const api = (window as unknown as { DigitalCredential: { userAgentAllowsProtocol(p: string): boolean } })
        .DigitalCredential;
      api.userAgentAllowsProtocol = (protocol) => protocol === 'org-iso-mdoc';
    });
    const page = await context.newPage();
    await page.goto(url);
    await expect.poll(() => page.locator('#status-text').innerText()).toContain('Waiting for your wallet');
    await page.waitForLoadState('networkidle');
    expect(await page.locator('#dc-api').isHidden()).toBe(true);
    expect(await page.locator('#wallet-link').getAttribute('class')).toContain('button--primary');
    await context.close();
  });

  it('a browser without the API: the page is the link and the QR code, as before', async () => {
    const { url } = await authorizeUrl(ENDPOINT_SETS[0], 'openid EmployeeBadge');
    const context = await browser.newContext();
    await context.addInitScript(() => {
      delete (window as { DigitalCredential?: unknown }).DigitalCredential;
    });
    const page = await context.newPage();
    const requests: string[] = [];
    page.on('request', (r) => requests.push(r.url()));
    await page.goto(url);
    await expect.poll(() => page.locator('#status-text').innerText()).toContain('Waiting for your wallet');
    expect(await page.locator('#dc-api').isHidden()).toBe(true);
    expect(await page.locator('#wallet-link').getAttribute('class')).toContain('button--primary');
    expect(requests.some((u) => u.endsWith('/dc-api'))).toBe(false);
    await context.close();
  });
});
