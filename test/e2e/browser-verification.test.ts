import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium } from '../helpers/browser.js';
import { startTestService, testConfig, SECRETS, type TestService } from '../helpers/service.js';
import { makeHint, pkcePair } from '../helpers/rp.js';
import { holderCompletesIssuance, newWallet, pushAuthorization } from '../helpers/flows.js';
import { startRedirectTarget } from '../helpers/rpServer.js';
import type { DevWallet } from '../../src/wallet/holder.js';

/**
 * A person's view of verification (D10): Chromium opens the authorise URL, the prompt shows what is
 * asked for and by whom, the dev wallet presents, and the page continues to the relying party with a code.
 */
let t: TestService;
let browser: Browser;
let rp: Awaited<ReturnType<typeof startRedirectTarget>>;
let wallet: DevWallet;

async function par(params: Record<string, string>): Promise<string> {
  return (await pushAuthorization(t.url, { redirect_uri: rp.redirectUri, nonce: 'n', ...params })).authorizeUrl;
}

beforeAll(async () => {
  rp = await startRedirectTarget();
  const clients = (testConfig(0).clients as { redirectUris: string[] }[]).map((c) => ({
    ...c,
    redirectUris: [...c.redirectUris, rp.redirectUri],
  }));
  t = await startTestService({ clients });
  browser = await launchChromium();
  wallet = await newWallet();
  const hint = await makeHint({
    clientId: 'issuer-pkce',
    secret: SECRETS.pkceIssuer,
    audience: t.url,
    claims: { FirstName: 'Grace', LastName: 'Hopper' },
  });
  const { challenge } = pkcePair();
  await holderCompletesIssuance(
    await par({
      scope: 'openid issue.EmployeeBadge',
      id_token_hint: hint,
      code_challenge: challenge,
      code_challenge_method: 'S256',
    }),
    { redirectUri: rp.redirectUri, wallet },
  );
});
afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await rp?.stop();
});

describe('verification in a browser', () => {
  it('goes from the authorise URL to the redirect URI with a code once the wallet has presented', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const consoleErrors: string[] = [];
    page.on('console', (m) => m.type() === 'error' && consoleErrors.push(m.text()));
    const { challenge } = pkcePair();
    await page.goto(
      await par({
        scope: 'openid EmployeeBadge',
        state: 'verify-state',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }),
    );
    const link = page.locator('a[href^="openid4vp://"]');
    await expect.poll(() => link.count()).toBe(1);
    const body = await page.locator('body').innerText();
    expect(body).toContain('PKCE Issuer');
    expect(body).toMatch(/Employee badge/);
    expect(body).toMatch(/First name/);
    await page.screenshot({ path: '/tmp/prompt-verification.png', fullPage: true });

    // same-device (OpenID4VP 1.0 §8.2): the page waits for the browser the wallet sends back
    const answer = await wallet.present((await link.getAttribute('href'))!);
    expect(answer.status).toBe(200);
    await expect
      .poll(() => page.locator('body').innerText(), { timeout: 10_000 })
      .toMatch(/Finishing in the browser your wallet opened/);
    await page.screenshot({ path: '/tmp/prompt-verification-returning.png', fullPage: true });
    expect(page.url()).not.toContain(rp.redirectUri);
    await page.goto(answer.redirectUri!);
    await page.waitForURL((u) => u.href.startsWith(rp.redirectUri), { timeout: 15_000 });
    const url = new URL(page.url());
    expect(url.searchParams.get('code')).toBeTruthy();
    expect(url.searchParams.get('state')).toBe('verify-state');
    expect(consoleErrors).toEqual([]);
    await page.close();
  });

  it("cross-device: the QR code's request finishes on its own once the wallet has presented", async () => {
    const page = await browser.newPage({ viewport: { width: 390, height: 844 } });
    const { challenge } = pkcePair();
    await page.goto(
      await par({
        scope: 'openid EmployeeBadge',
        state: 'qr-state',
        code_challenge: challenge,
        code_challenge_method: 'S256',
      }),
    );
    const qr = page.locator('[data-wallet-link^="openid4vp://"]');
    await expect.poll(() => qr.count()).toBe(1);
    const answer = await wallet.present((await qr.getAttribute('data-wallet-link'))!);
    expect(answer).toMatchObject({ status: 200 });
    expect(answer.redirectUri).toBeUndefined();
    await page.waitForURL((u) => u.href.startsWith(rp.redirectUri), { timeout: 15_000 });
    expect(new URL(page.url()).searchParams.get('state')).toBe('qr-state');
    await page.close();
  });
});
