import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser.js';
import { startTestService, REDIRECT, type TestService } from '../helpers/service.js';
import { makeHint, pkcePair } from '../helpers/rp.js';
import { newWallet, pushAuthorization } from '../helpers/flows.js';
import { startWebhookReceiver, webhookSecret } from '../helpers/webhookReceiver.js';

/**
 * D13 from the holder's side, in Chromium: in an External Client flow the prompt stays where it is when
 * the wallet step ends, and says that the app continues (or was told of the failure) and that the page
 * may be closed. It never navigates to the client.
 */
const CLIENT = { id: 'ext-browser', secret: 'ext-browser-secret-012345678' };
const secret = webhookSecret();
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;
let t: TestService;
let browser: Browser;

beforeAll(async () => {
  receiver = await startWebhookReceiver(secret);
  t = await startTestService({
    clients: [
      {
        clientId: CLIENT.id,
        clientName: 'Kiosk App',
        clientSecret: CLIENT.secret,
        redirectUris: [REDIRECT],
        scopes: ['issue.EmployeeBadge', 'External'],
        webhook: { url: receiver.url, secret },
      },
    ],
  });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await receiver?.close();
});

async function pushExternal(pin?: string): Promise<string> {
  const { challenge } = pkcePair();
  const hint = await makeHint({
    clientId: CLIENT.id,
    secret: CLIENT.secret,
    audience: t.url,
    claims: { FirstName: 'Grace', LastName: 'Hopper', ...(pin ? { PinCode: pin } : {}) },
  });
  const { authorizeUrl } = await pushAuthorization(t.url, {
    client_id: CLIENT.id,
    client_secret: CLIENT.secret,
    scope: 'openid issue.EmployeeBadge External',
    state: `st-${Math.random()}`,
    nonce: 'n',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    id_token_hint: hint,
  });
  return authorizeUrl;
}

describe('the External Client flow in a browser', () => {
  it('after the wallet took the credential, the page says the app continues and stays', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const navigations: string[] = [];
    page.on('framenavigated', (f) => f === page.mainFrame() && navigations.push(f.url()));
    await page.goto(await pushExternal());
    const promptUrl = page.url();
    const offer = await page.locator('a[href^="openid-credential-offer://"]').getAttribute('href');
    await (await newWallet()).receive(offer!);
    await expect
      .poll(() => page.locator('#status-text').innerText(), { timeout: 10_000 })
      .toContain('Kiosk App will continue from here. You can close this page.');
    await page.waitForTimeout(1_500); // a normal flow would have left by now
    expect(page.url()).toBe(promptUrl);
    expect(navigations.some((u) => u.startsWith(REDIRECT))).toBe(false);
    await page.screenshot({ path: '/tmp/prompt-external-done.png', fullPage: true });
    await page.close();
  });

  it('after the last wrong PIN, the page says the app has been told, and stays', async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    await page.goto(await pushExternal('1357'));
    const promptUrl = page.url();
    const offer = await page.locator('a[href^="openid-credential-offer://"]').getAttribute('href');
    const wallet = await newWallet();
    for (let i = 0; i < 3; i++) await wallet.receive(offer!, { pin: '0000' }).catch(() => undefined);
    await expect
      .poll(() => page.locator('#status-text').innerText(), { timeout: 10_000 })
      .toContain('Kiosk App has been told. You can close this page.');
    await page.waitForTimeout(3_500);
    expect(page.url()).toBe(promptUrl);
    await page.screenshot({ path: '/tmp/prompt-external-failed.png', fullPage: true });
    await page.close();
  });
});
