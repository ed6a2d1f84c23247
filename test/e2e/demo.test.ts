import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser.js';
import { startTestService, testConfig, type TestService } from '../helpers/service.js';
import { newWallet } from '../helpers/flows.js';
import type { DevWallet } from '../../src/wallet/holder.js';

/**
 * The README's "try it" path: the built-in demo relying party (config demo: true) in Chromium, the dev
 * wallet as the holder. Issue, then verify, and read the ID token the relying party received.
 */
let t: TestService;
let browser: Browser;
let wallet: DevWallet;

beforeAll(async () => {
  t = await startTestService((baseUrl) => ({
    demo: true,
    clients: (testConfig(0).clients as { clientId: string; redirectUris: string[] }[]).map((c) =>
      c.clientId === 'issuer-pkce' ? { ...c, redirectUris: [...c.redirectUris, `${baseUrl}/demo/callback`] } : c),
  }));
  browser = await launchChromium();
  wallet = await newWallet();
});
afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

async function walletLink(page: Page, scheme: string): Promise<string> {
  const link = page.locator(`a[href^="${scheme}"]`);
  await expect.poll(() => link.count(), { timeout: 10_000 }).toBe(1);
  return (await link.getAttribute('href'))!;
}

describe('the demo relying party', () => {
  it('issues an employee badge into the dev wallet and shows the ID token it received', async () => {
    const page = await browser.newPage();
    await page.goto(`${t.url}/demo`);
    const form = page.locator('form', { has: page.locator('input[name="type"][value="EmployeeBadge"]') });
    await form.locator('input[name="attr.FirstName"]').fill('Katherine');
    await form.locator('input[name="pin"]').fill('9876');
    await form.locator('button').click();
    await wallet.receive(await walletLink(page, 'openid-credential-offer://'), { pin: '9876' });
    await page.waitForURL(/\/demo\/callback/, { timeout: 15_000 });
    const shown = JSON.parse(await page.locator('pre').innerText());
    expect(shown).toMatchObject({ FirstName: 'Katherine', iss: t.url, aud: 'issuer-pkce' });
    expect(shown.sub).toBe(shown.SerialNumber);
    await page.close();
  });

  it('verifies it through Version 1 without PAR and shows the verified attributes', async () => {
    const page = await browser.newPage();
    await page.goto(`${t.url}/demo`);
    const form = page.locator('form', { has: page.locator('input[name="kind"][value="verify"]') });
    await form.locator('select[name="mode"]').selectOption('v1');
    await form.locator('button').click();
    expect((await wallet.present(await walletLink(page, 'openid4vp://'))).status).toBe(200);
    await page.waitForURL(/\/demo\/callback/, { timeout: 15_000 });
    const shown = JSON.parse(await page.locator('pre').innerText());
    expect(shown).toMatchObject({ FirstName: 'Katherine', iss: `${t.url}/oidc`, aud: 'issuer-pkce' });
    await page.close();
  });
});
