import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser } from 'playwright-core';
import { launchChromium, readQrCode } from '../helpers/browser.js';
import { startTestService, SECRETS, type TestService } from '../helpers/service.js';
import { makeHint, pkcePair } from '../helpers/rp.js';
import { newWallet, pushAuthorization } from '../helpers/flows.js';
import { startRedirectTarget } from '../helpers/rpServer.js';
import { testConfig } from '../helpers/service.js';

/**
 * A person's view of issuance (D10): Chromium opens the authorise URL, the prompt shows the offer and
 * the PIN notice, the dev wallet redeems the offer, and the page continues to the relying party by
 * itself, arriving with a code and the state.
 */
let t: TestService;
let browser: Browser;
let rp: Awaited<ReturnType<typeof startRedirectTarget>>;

beforeAll(async () => {
  rp = await startRedirectTarget();
  const clients = (testConfig(0).clients as { redirectUris: string[] }[]).map((c) => ({
    ...c,
    redirectUris: [...c.redirectUris, rp.redirectUri],
  }));
  t = await startTestService({ clients });
  browser = await launchChromium();
});
afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await rp?.stop();
});

async function pushIssuance(pin: string | undefined) {
  const { challenge } = pkcePair();
  const hint = await makeHint({
    clientId: 'issuer-pkce',
    secret: SECRETS.pkceIssuer,
    audience: t.url,
    claims: { FirstName: 'Grace', LastName: 'Hopper', ...(pin ? { PinCode: pin } : {}) },
  });
  const { authorizeUrl } = await pushAuthorization(t.url, {
    redirect_uri: rp.redirectUri,
    scope: 'openid issue.EmployeeBadge',
    state: 'browser-state',
    nonce: 'n',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    id_token_hint: hint,
  });
  return authorizeUrl;
}

describe('issuance in a browser', () => {
  it('goes from the authorise URL to the redirect URI with a code once the wallet has the credential', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    const cspErrors: string[] = [];
    page.on('console', (m) => m.type() === 'error' && cspErrors.push(m.text()));

    await page.goto(await pushIssuance('2468'));
    await expect.poll(() => page.locator('a[href^="openid-credential-offer://"]').count()).toBe(1);
    const offer = await page.locator('a[href^="openid-credential-offer://"]').getAttribute('href');
    const body = await page.locator('body').innerText();
    expect(body).toContain('PKCE Issuer'); // who asks
    expect(body).toMatch(/Employee badge/); // what is issued
    expect(body).toMatch(/4[- ]digit|4 digits/i); // the PIN notice states the length
    // the QR code, drawn by Chromium and read back by an independent decoder, is the same wallet link
    expect(await readQrCode(page, '.qr-code svg')).toBe(offer);
    await page.screenshot({ path: '/tmp/prompt-issuance.png', fullPage: true });

    const wallet = await newWallet();
    await wallet.receive(offer!, { pin: '2468' });
    await page.waitForURL((u) => u.href.startsWith(rp.redirectUri), { timeout: 15_000 });
    const url = new URL(page.url());
    expect(url.searchParams.get('code')).toBeTruthy();
    expect(url.searchParams.get('state')).toBe('browser-state');
    expect(cspErrors).toEqual([]);
    await page.close();
  });

  it('tells the person about a wrong PIN, then returns to the app with access_denied after the last attempt', async () => {
    const page = await browser.newPage();
    await page.goto(await pushIssuance('1357'));
    const offer = await page.locator('a[href^="openid-credential-offer://"]').getAttribute('href');
    const wallet = await newWallet();
    await expect(wallet.receive(offer!, { pin: '0000' })).rejects.toThrow(/invalid_grant/);
    await expect.poll(() => page.locator('body').innerText(), { timeout: 10_000 }).toMatch(/wrong PIN|2 attempts/i);
    await expect(wallet.receive(offer!, { pin: '0001' })).rejects.toThrow(/invalid_grant/);
    await expect(wallet.receive(offer!, { pin: '0002' })).rejects.toThrow(/invalid_grant/);
    await page.waitForURL((u) => u.href.startsWith(rp.redirectUri), { timeout: 15_000 });
    const url = new URL(page.url());
    expect(url.searchParams.get('error')).toBe('access_denied');
    expect(url.searchParams.get('error_description')).toMatch(/PIN/);
    expect(url.searchParams.get('state')).toBe('browser-state');
    await page.close();
  });
});
