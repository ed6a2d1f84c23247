/**
 * ISO/IEC 18013-7 Annex C (`org-iso-mdoc`, issue 48) in Chromium: the prompt hands the browser the Annex C
 * entry beside the OpenID4VP ones when every credential asked for has an mdoc form; Chromium's virtual wallet
 * (DevTools Protocol `DigitalCredentials.setVirtualWalletBehavior`) answers with what an independent holder
 * (test/helpers/annexCHolder.ts: @auth0/mdl, @hpke/core) sealed for the page's request and origin, and the
 * browser goes on to the relying party. A browser that allows only `org-iso-mdoc` (as Safari) gets the button
 * and that entry alone; a mixed request has none; a decline keeps the QR code.
 */
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { base64url, calculateJwkThumbprint, type JWK } from 'jose';
import * as oidc from 'openid-client';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium } from '../helpers/browser.js';
import { startTestService, testConfig, REDIRECT, VERIFIER_CA_PEM, type TestService } from '../helpers/service.js';
import { pkcePair } from '../helpers/rp.js';
import { pushAuthorization } from '../helpers/flows.js';
import { discoverRp, ENDPOINT_SETS, type EndpointSet } from '../helpers/endpointSets.js';
import { createTestMdocIssuer, presentWithAuth0 } from '../helpers/mdoc.js';
import { independentHolderAnswers } from '../helpers/openid4vpHolder.js';
import type { DigitalRequest } from '../helpers/dcApiHolder.js';
import { ANNEX_C, holderAnswersAnnexC, type AnnexCRequestRead } from '../helpers/annexCHolder.js';
import { keyPair } from '../helpers/keys.js';
import { startWebhookReceiver, webhookSecret } from '../helpers/webhookReceiver.js';

const DOCTYPE = 'org.iso.18013.5.1.mDL';
const NAMESPACE = 'org.iso.18013.5.1';
const EXTERNAL = { id: 'ext-annex-c', secret: 'ext-annex-c-secret-0123456789abcdef' };
const secret = webhookSecret();

let t: TestService;
let origin: string;
let browser: Browser;
let holder: { privateJwk: JWK; publicJwk: JWK };
let issuerSigned: string;
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

beforeAll(async () => {
  const iaca = await createTestMdocIssuer({ name: 'Browser Annex C IACA' });
  holder = await keyPair();
  const dir = mkdtempSync(join(tmpdir(), 'vc-annexc-browser-'));
  writeFileSync(join(dir, 'iaca.pem'), iaca.iacaPem);
  receiver = await startWebhookReceiver(secret);
  const base = testConfig(0) as {
    clients: Array<{ clientId: string; scopes: string[] }>;
    credentialTypes: object[];
    verifier: object;
  };
  t = await startTestService({
    credentialTypes: [
      ...base.credentialTypes,
      {
        name: 'DrivingLicence',
        displayName: 'Driving licence',
        mdoc: { doctype: DOCTYPE, namespace: NAMESPACE },
        attributes: { family_name: { type: 'string' }, given_name: { type: 'string' } },
      },
    ],
    clients: [
      ...base.clients.map((c) =>
        c.clientId === 'issuer-plain' ? c : { ...c, scopes: [...c.scopes, 'DrivingLicence'] },
      ),
      {
        clientId: EXTERNAL.id,
        clientName: 'Kiosk App',
        clientSecret: EXTERNAL.secret,
        redirectUris: [REDIRECT],
        scopes: ['DrivingLicence', 'External'],
        webhook: { url: receiver.url, secret },
      },
    ],
    verifier: { ...base.verifier, trustAnchors: [{ certificates: join(dir, 'iaca.pem'), formats: ['mso_mdoc'] }] },
  });
  origin = new URL(t.url).origin;
  ({ issuerSigned } = await iaca.issue({
    doctype: DOCTYPE,
    namespace: NAMESPACE,
    claims: { family_name: 'Lovelace', given_name: 'Ada' },
    deviceKey: holder.publicJwk,
  }));
  browser = await launchChromium();
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

const presentLicence = (read: AnnexCRequestRead, transcript: Uint8Array) =>
  presentWithAuth0({
    issuerSigned,
    doctype: DOCTYPE,
    namespace: NAMESPACE,
    elements: [...read.docs[0].namespaces.get(NAMESPACE)!.keys()],
    deviceKey: holder.privateJwk,
    clientId: '',
    nonce: '',
    responseUri: '',
    sessionTranscriptBytes: transcript,
  });

/** The requests the page got (the same cookie's GET the page made). */
const pageRequests = async (page: Page) =>
  (await page.evaluate(async () => {
    const url = document.getElementById('dc-api')!.getAttribute('data-url')!;
    return ((await (await fetch(url)).json()) as { requests: unknown[] }).requests;
  })) as DigitalRequest[];

/** The virtual wallet will answer with the independent holder's Annex C answer to the page's request. */
async function walletWillAnswer(page: Page): Promise<void> {
  const answer = await holderAnswersAnnexC(await pageRequests(page), { origin, present: presentLicence });
  await virtualWallet(page, { action: 'respond', protocol: answer.protocol, response: answer.data });
}

async function virtualWallet(page: Page, behaviour: Record<string, unknown>): Promise<void> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send('DigitalCredentials.setVirtualWalletBehavior' as never, behaviour as never);
}

async function openPrompt(url: string, context?: BrowserContext): Promise<Page> {
  const page = await (context ?? browser).newPage({ viewport: { width: 1280, height: 900 } });
  await page.goto(url);
  await page.locator('#dc-api-button').waitFor({ state: 'visible', timeout: 10_000 });
  return page;
}

async function expectCode(arrival: Promise<{ url(): string }>, state: string): Promise<void> {
  const q = new URL((await arrival).url()).searchParams;
  expect(q.get('error'), q.toString()).toBeNull();
  expect(q.get('code')).toBeTruthy();
  expect(q.get('state')).toBe(state);
}

const arrivalAt = (page: Page) => page.waitForRequest((r) => r.url().startsWith(REDIRECT), { timeout: 15_000 });

/** A context whose browser allows only `org-iso-mdoc` (as Safari); `asked` gets the protocols each call of the page hands the browser. */
async function safariLike(asked: string[][] = []): Promise<BrowserContext> {
  const context = await browser.newContext();
  await context.exposeFunction('recordAsked', (protocols: string[]) => asked.push(protocols));
  await context.addInitScript(() => {
    const w = window as unknown as {
      DigitalCredential: { userAgentAllowsProtocol(p: string): boolean };
      recordAsked(protocols: string[]): void;
    };
    w.DigitalCredential.userAgentAllowsProtocol = (protocol) => protocol === 'org-iso-mdoc';
    const get = navigator.credentials.get.bind(navigator.credentials);
    navigator.credentials.get = (options?: CredentialRequestOptions) => {
      const digital = (options as { digital?: { requests: Array<{ protocol: string }> } } | undefined)?.digital;
      w.recordAsked(digital?.requests.map((r) => r.protocol) ?? []);
      return get(options);
    };
  });
  return context;
}

// the browser's part does not depend on the store; test/integration/dc-api-annex-c.test.ts runs the answers on both
const run = process.env.TEST_STORE === 'redis' ? describe.skip : describe;

run('Annex C through the Digital Credentials API in the browser (issue 48)', () => {
  it.each(ENDPOINT_SETS.slice(0, 3))('$name: the wallet answers org-iso-mdoc, the browser goes on', async (c) => {
    const { url, state } = await authorizeUrl(c, 'openid DrivingLicence');
    const page = await openPrompt(url);
    await walletWillAnswer(page);
    const arrival = arrivalAt(page);
    const posted = page.waitForRequest((r) => r.method() === 'POST' && r.url().endsWith('/dc-api'));
    await page.locator('#dc-api-button').click();
    expect(JSON.parse((await posted).postData()!)).toMatchObject({ protocol: ANNEX_C });
    await expectCode(arrival, state);
    await page.close();
  });

  it('External: the page says the client has been told, and the webhook comes', async () => {
    const { challenge } = pkcePair();
    const { authorizeUrl: url } = await pushAuthorization(t.url, {
      client_id: EXTERNAL.id,
      client_secret: EXTERNAL.secret,
      scope: 'openid DrivingLicence External',
      state: 'ext-annex-c',
      nonce: 'n',
      code_challenge: challenge,
      code_challenge_method: 'S256',
    });
    const page = await openPrompt(url);
    await walletWillAnswer(page);
    await page.locator('#dc-api-button').click();
    await expect
      .poll(() => page.locator('#status-text').innerText(), { timeout: 10_000 })
      .toContain('Kiosk App will continue from here');
    const hook = await receiver.next((h) => h.payload.type.startsWith('flow.'));
    expect(hook.payload.type).toBe('flow.completed');
    await page.close();
  });

  it('a browser that allows only org-iso-mdoc (as Safari): the button, that entry alone, and the flow completes', async () => {
    const { url, state } = await authorizeUrl(ENDPOINT_SETS[0], 'openid DrivingLicence');
    const asked: string[][] = [];
    const context = await safariLike(asked);
    const page = await openPrompt(url, context);
    expect(await page.locator('#wallet-link').getAttribute('class')).toContain('button--secondary');
    await page.screenshot({ path: '/tmp/dc-api-annex-c-safari-like.png', fullPage: true });
    await walletWillAnswer(page);
    const arrival = arrivalAt(page);
    await page.locator('#dc-api-button').click();
    await expectCode(arrival, state);
    expect(asked).toEqual([[ANNEX_C]]);
    await context.close();
  });

  it('a mixed request (an SD-JWT VC only type beside the mdoc one) in that browser: no button, the QR code and link', async () => {
    const { url } = await authorizeUrl(ENDPOINT_SETS[0], 'openid DrivingLicence EmployeeBadge');
    const context = await safariLike();
    const page = await context.newPage();
    await page.goto(url);
    await expect.poll(() => page.locator('#status-text').innerText()).toContain('Waiting for your wallet');
    await page.waitForLoadState('networkidle');
    expect((await pageRequests(page)).map((r) => r.protocol)).not.toContain(ANNEX_C);
    expect(await page.locator('#dc-api').isHidden()).toBe(true);
    expect(await page.locator('#wallet-link').getAttribute('class')).toContain('button--primary');
    await context.close();
  });

  it('declined: the page says so, and the QR code still finishes the flow', async () => {
    const { url, state } = await authorizeUrl(ENDPOINT_SETS[0], 'openid DrivingLicence');
    const page = await openPrompt(url);
    await virtualWallet(page, { action: 'decline' });
    await page.locator('#dc-api-button').click();
    await expect
      .poll(() => page.locator('#dc-api-status').innerText(), { timeout: 10_000 })
      .toMatch(/nothing was shared/i);
    expect(await page.locator('#dc-api-button').isEnabled()).toBe(true);
    const qr = await page.locator('[data-wallet-link^="openid4vp://"]').getAttribute('data-wallet-link');
    const arrival = arrivalAt(page);
    const answered = await independentHolderAnswers(qr!, new X509Certificate(VERIFIER_CA_PEM), async (request) => {
      const [key] = request.client_metadata.jwks.keys;
      const vp = await presentWithAuth0({
        issuerSigned,
        doctype: DOCTYPE,
        namespace: NAMESPACE,
        elements: ['family_name', 'given_name'],
        deviceKey: holder.privateJwk,
        clientId: request.client_id,
        nonce: request.nonce,
        responseUri: request.response_uri,
        jwkThumbprint: base64url.decode(await calculateJwkThumbprint(key)),
      });
      return { 'DrivingLicence-mdoc': [vp] };
    });
    expect(answered.status).toBe(200);
    await expectCode(arrival, state);
    await page.close();
  });
});
