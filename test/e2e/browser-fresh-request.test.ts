/**
 * Issue 36, "a way out", as the holder sees it in Chromium: the wallet fetched the request and went silent
 * (stalled), or answered that it could not take it (refused). The page drops the spent QR code and link,
 * says what happened in the holder's language (English, German, and the right-to-left Arabic sample), and
 * offers a new code; the new code's request completes the flow. axe finds nothing in either state.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { decodeJwt } from 'jose';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser.js';
import { axeViolations } from '../helpers/axe.js';
import { startTestService, testConfig, SECRETS, type TestService } from '../helpers/service.js';
import { makeHint, pkcePair, postForm } from '../helpers/rp.js';
import { holderCompletesIssuance, newWallet, pushAuthorization } from '../helpers/flows.js';
import { startRedirectTarget } from '../helpers/rpServer.js';
import type { DevWallet } from '../../src/wallet/holder.js';

// pages do not depend on the store: run once
const run = process.env.TEST_STORE === 'redis' ? describe.skip : describe;
const SAMPLE_LOCALES = fileURLToPath(new URL('../fixtures/locales/', import.meta.url));

let t: TestService;
let browser: Browser;
let rp: Awaited<ReturnType<typeof startRedirectTarget>>;
let wallet: DevWallet;

const par = async (params: Record<string, string>) =>
  (await pushAuthorization(t.url, { redirect_uri: rp.redirectUri, nonce: 'n', ...params })).authorizeUrl;

beforeAll(async () => {
  rp = await startRedirectTarget();
  const defaults = testConfig(0);
  const clients = (defaults.clients as { redirectUris: string[] }[]).map((c) => ({
    ...c,
    redirectUris: [...c.redirectUris, rp.redirectUri],
  }));
  t = await startTestService({
    clients,
    verifier: { ...(defaults.verifier as object), freshRequestAfter: 1 },
    ui: { locales: SAMPLE_LOCALES },
  });
  browser = await launchChromium();
  wallet = await newWallet();
  const hint = await makeHint({
    clientId: 'issuer-pkce',
    secret: SECRETS.pkceIssuer,
    audience: t.url,
    claims: { FirstName: 'Grace', LastName: 'Hopper', PinCode: '2468' },
  });
  const { challenge } = pkcePair();
  await holderCompletesIssuance(
    await par({
      scope: 'openid issue.EmployeeBadge',
      id_token_hint: hint,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }),
    { redirectUri: rp.redirectUri, wallet, pin: '2468' },
  );
});
afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await rp?.stop();
});

/** The prompt of a new verification in `lang`, at `width`; the QR code's request fetched by a wallet that says nothing. */
async function promptWithSilentWallet(lang: string, width: number) {
  // axe is injected as a script of its own: the page's CSP would refuse it
  const page = await browser.newPage({ viewport: { width, height: 900 }, locale: lang, bypassCSP: true });
  const { challenge } = pkcePair();
  await page.goto(
    await par({
      scope: 'openid EmployeeBadge',
      state: `fresh-${lang}`,
      code_challenge: challenge,
      code_challenge_method: 'S256',
      ui_locales: lang,
    }),
  );
  const link = await qrLink(page);
  const res = await fetch(new URL(link).searchParams.get('request_uri')!);
  const request = decodeJwt((await res.text()).trim());
  return { page, link, state: String(request.state), responseUri: String(request.response_uri) };
}

const qrLink = async (page: Page) => (await page.locator('.qr-code').getAttribute('data-wallet-link'))!;

/** What the holder sees of a stuck request: no spent QR code or link, the new-code button. */
async function expectStuck(page: Page, state: 'stalled' | 'refused') {
  await expect.poll(() => page.locator('#prompt').getAttribute('data-state'), { timeout: 10_000 }).toBe(state);
  expect(await page.locator('.qr-code').isVisible()).toBe(false);
  expect(await page.locator('#wallet-link').isVisible()).toBe(false);
  expect(await page.locator('#fresh button').isVisible()).toBe(true);
  expect(await page.locator('#give-up').isVisible()).toBe(state === 'refused');
}

run('a fresh request in the browser (issue 36)', () => {
  it.each([
    { lang: 'en', width: 1280, text: 'Your wallet has not answered yet', button: 'Get a new code' },
    { lang: 'de', width: 390, text: 'Ihre Wallet hat noch nicht geantwortet', button: 'Neuen Code holen' },
  ])(
    'stalled ($lang, $width px): a new code, and its request completes the flow',
    async ({ lang, width, text, button }) => {
      const { page, link } = await promptWithSilentWallet(lang, width);
      await expectStuck(page, 'stalled');
      expect(await page.locator('#fresh').innerText()).toContain(text);
      expect(await page.locator('#fresh button').innerText()).toBe(button);
      await page.screenshot({ path: `/tmp/fresh-stalled-${lang}-${width}.png`, fullPage: true });
      expect(await axeViolations(page)).toBe('');

      await page.setViewportSize({ width, height: 900 });
      await page.locator('#fresh button').click();
      await expect.poll(() => page.locator('#prompt').getAttribute('data-state')).toBe('pending');
      const fresh = await qrLink(page);
      expect(fresh).not.toBe(link);
      expect(await page.locator('.qr-code').isVisible()).toBe(true);
      expect((await wallet.present(fresh)).status).toBe(200);
      await page.waitForURL((u) => u.href.startsWith(rp.redirectUri), { timeout: 15_000 });
      expect(new URL(page.url()).searchParams.get('code')).toBeTruthy();
      await page.close();
    },
  );

  it.each([
    { lang: 'en', width: 390, message: 'The wallet does not support the credential format that was asked for.' },
    { lang: 'ar', width: 1280, message: 'لا تدعم المحفظة' },
  ])(
    "refused ($lang, $width px): the reason in the holder's words, a new code or a way back",
    async ({ lang, width, message }) => {
      const { page, state, responseUri } = await promptWithSilentWallet(lang, width);
      expect((await postForm(responseUri, { state, error: 'vp_formats_not_supported' })).status).toBe(200);
      await expectStuck(page, 'refused');
      expect(await page.locator('#status-text').innerText()).toContain(message);
      if (lang === 'ar') expect(await page.locator('html').getAttribute('dir')).toBe('rtl');
      await page.screenshot({ path: `/tmp/fresh-refused-${lang}-${width}.png`, fullPage: true });
      expect(await axeViolations(page)).toBe('');

      // giving up: the relying party hears what the wallet answered
      await page.setViewportSize({ width, height: 900 });
      await page.locator('#give-up').click();
      await page.waitForURL((u) => u.href.startsWith(rp.redirectUri), { timeout: 15_000 });
      const callback = new URL(page.url());
      expect(callback.searchParams.get('error')).toBe('access_denied');
      expect(callback.searchParams.get('error_description')).toBe('the wallet answered vp_formats_not_supported');
      await page.close();
    },
  );
});
