/**
 * Issue 22, Languages: the prompt in the holder's language, chosen by the request's `ui_locales` (OIDC
 * Core §3.1.2.1), then the browser's Accept-Language, then `ui.defaultLocale`; plurals by the language's
 * rules; credential type and attribute names per language from the config; `lang` and `dir` on the page
 * and a right-to-left layout (the Arabic sample catalogue in test/fixtures/locales). Chromium throughout.
 */
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser.js';
import { axeViolations } from '../helpers/axe.js';
import { startTestService, SECRETS, REDIRECT, testConfig, type TestService } from '../helpers/service.js';
import { newWallet, pushIssuance } from '../helpers/flows.js';

// pages and languages do not depend on the store: run once
const run = process.env.TEST_STORE === 'redis' ? describe.skip : describe;
const SAMPLE_LOCALES = fileURLToPath(new URL('../fixtures/locales/', import.meta.url));

let t: TestService;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  const types = testConfig(0).credentialTypes as {
    name: string;
    attributes: Record<string, Record<string, unknown>>;
  }[];
  const localized = types.map((type) =>
    type.name === 'EmployeeBadge'
      ? {
          ...type,
          displayName: { en: 'Employee badge', de: 'Mitarbeiterausweis', fr: 'Badge d’employé', ar: 'بطاقة الموظف' },
          attributes: {
            ...type.attributes,
            FirstName: { ...type.attributes.FirstName, label: { en: 'First name', de: 'Vorname', fr: 'Prénom' } },
          },
        }
      : type,
  );
  t = await startTestService({ credentialTypes: localized, ui: { locales: SAMPLE_LOCALES } });
  browser = await launchChromium();
});
afterAll(async () => {
  for (const c of contexts) await c.close().catch(() => undefined);
  await browser?.close();
  await t?.stop();
});

/** A prompt for an issuance pushed with these parameters, in a browser whose language is `locale`. */
async function prompt(o: { uiLocales?: string; locale: string; width?: number; bypassCSP?: boolean }): Promise<Page> {
  const rp = await pushIssuance(t.url, {
    clientId: 'issuer-pkce',
    secret: SECRETS.pkceIssuer,
    attributes: { FirstName: 'Ada', LastName: 'Lovelace' },
    pin: '4821',
    redirectUri: REDIRECT,
    params: o.uiLocales ? { ui_locales: o.uiLocales } : undefined,
  });
  const context = await browser.newContext({
    locale: o.locale,
    viewport: { width: o.width ?? 1280, height: 900 },
    bypassCSP: o.bypassCSP,
  });
  contexts.push(context);
  const page = await context.newPage();
  await page.goto(rp.authorizeUrl.href);
  await page.locator('#prompt').waitFor();
  return page;
}

const docLang = (page: Page) =>
  page.evaluate(() => ({
    lang: document.documentElement.lang,
    dir: document.documentElement.dir,
    direction: getComputedStyle(document.documentElement).direction,
  }));

run("the prompt in the holder's language", () => {
  it('English by default (an English browser, no ui_locales)', async () => {
    const page = await prompt({ locale: 'en-US' });
    expect(await docLang(page)).toEqual({ lang: 'en', dir: 'ltr', direction: 'ltr' });
    await expect.poll(() => page.locator('h1').innerText()).toBe('Add your credential to your wallet');
    expect(await page.locator('.cred-name').innerText()).toBe('Employee badge');
    expect(await page.locator('.chip').allInnerTexts()).toEqual(['First name', 'Last name']);
  });

  it("German chosen by ui_locales over an English browser, with the config's German names", async () => {
    const page = await prompt({ uiLocales: 'de', locale: 'en-US' });
    expect(await docLang(page)).toEqual({ lang: 'de', dir: 'ltr', direction: 'ltr' });
    expect(await page.locator('h1').innerText()).toBe('Nachweis zu Ihrer Wallet hinzufügen');
    expect(await page.locator('.eyebrow').innerText()).toContain('Anfrage von PKCE Issuer');
    expect(await page.locator('.cred-name').innerText()).toBe('Mitarbeiterausweis');
    // a label given per language, and one given once (humanised) beside it
    expect(await page.locator('.chip').allInnerTexts()).toEqual(['Vorname', 'Last name']);
    expect(await page.locator('#pin-notice').innerText()).toContain('4-stelligen PIN');
    expect(await page.locator('#wallet-link').innerText()).toBe('In der Wallet auf diesem Gerät öffnen');
    expect(await page.title()).toBe('Nachweis zu Ihrer Wallet hinzufügen – PKCE Issuer');
  });

  it("German chosen by the browser's Accept-Language when the request names no language", async () => {
    const page = await prompt({ locale: 'de-DE' });
    expect((await docLang(page)).lang).toBe('de');
    expect(await page.locator('h1').innerText()).toBe('Nachweis zu Ihrer Wallet hinzufügen');
  });

  it('ui_locales beats Accept-Language: French for a German browser', async () => {
    const page = await prompt({ uiLocales: 'fr-CA de', locale: 'de-DE' });
    expect((await docLang(page)).lang).toBe('fr');
    expect(await page.locator('h1').innerText()).toBe('Ajouter votre attestation à votre portefeuille');
    expect(await page.locator('.cred-name').innerText()).toBe('Badge d’employé');
  });

  it("a wrong PIN is worded with the language's plural rules, from the server", async () => {
    const page = await prompt({ uiLocales: 'de', locale: 'en-US' });
    const offer = await page.locator('#wallet-link').getAttribute('href');
    const wallet = await newWallet();
    await expect(wallet.receive(offer!, { pin: '0000' })).rejects.toThrow(/invalid_grant/);
    await expect
      .poll(() => page.locator('#status-text').innerText(), { timeout: 10_000 })
      .toBe('Falsche PIN. Noch 2 Versuche übrig.');
    await expect(wallet.receive(offer!, { pin: '0001' })).rejects.toThrow(/invalid_grant/);
    await expect
      .poll(() => page.locator('#status-text').innerText(), { timeout: 10_000 })
      .toBe('Falsche PIN. Noch 1 Versuch übrig.');
  });

  it('right to left: the Arabic sample catalogue sets dir="rtl" and the layout mirrors', async () => {
    for (const width of [1280, 390]) {
      const page = await prompt({ uiLocales: 'ar', locale: 'en-US', width });
      expect(await docLang(page)).toEqual({ lang: 'ar', dir: 'rtl', direction: 'rtl' });
      expect(await page.locator('h1').innerText()).not.toMatch(/[A-Za-z]/);
      expect(await page.locator('.cred-name').innerText()).toBe('بطاقة الموظف');
      // the client's badge comes first in reading order: on the right of the text
      const avatar = (await page.locator('.eyebrow .avatar').boundingBox())!;
      const text = (await page.locator('.eyebrow > span:not(.avatar)').boundingBox())!;
      expect(avatar.x).toBeGreaterThan(text.x);
      // the heading starts at the right edge of the card
      const card = (await page.locator('#prompt').boundingBox())!;
      const h1 = await page.locator('h1').evaluate((el) => {
        const r = document.createRange();
        r.selectNodeContents(el);
        const b = r.getBoundingClientRect();
        return { left: b.left, right: b.right };
      });
      expect(card.x + card.width - h1.right).toBeLessThan(h1.left - card.x);
      // nothing overflows sideways
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(width);
      await page.screenshot({ path: `test-results/prompt-ar-${width}.png`, fullPage: true });
    }
  });

  it('passes axe in German and in the right-to-left sample (light and dark, 1280 and 390 px)', async () => {
    for (const uiLocales of ['de', 'ar']) {
      const page = await prompt({ uiLocales, locale: 'en-US', bypassCSP: true });
      expect(await axeViolations(page), uiLocales).toBe('');
    }
  });

  it("copy link puts the wallet link on the clipboard and says so in the page's language", async () => {
    const page = await prompt({ uiLocales: 'de', locale: 'en-US' });
    await page.context().grantPermissions(['clipboard-read', 'clipboard-write'], { origin: t.url });
    const link = await page.locator('#wallet-link').getAttribute('href');
    await expect.poll(() => page.locator('#copy-link').isVisible()).toBe(true);
    expect(await page.locator('#copy-link').innerText()).toBe('Link kopieren');
    await page.locator('#copy-link').click();
    await expect.poll(() => page.locator('#copy-status').innerText()).toBe('Link kopiert');
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(link);
  });

  it('message pages too: a link that can no longer be used, by Accept-Language; an error at authorise, by ui_locales', async () => {
    const context = await browser.newContext({ locale: 'de-DE' });
    contexts.push(context);
    const page = await context.newPage();
    const gone = await page.goto(`${t.url}/interaction/v2/no-such-request`);
    expect(gone?.status()).toBe(400);
    expect(await docLang(page)).toEqual({ lang: 'de', dir: 'ltr', direction: 'ltr' });
    expect(await page.locator('h1').innerText()).toBe('Dieser Link kann nicht mehr verwendet werden');
    const refused = await page.goto(
      `${t.url}/v2.0/oidc/authorize?client_id=no-such-client&ui_locales=fr&response_type=code&scope=openid`,
    );
    expect(refused?.status()).toBe(400);
    expect((await docLang(page)).lang).toBe('fr');
    expect(await page.locator('h1').innerText()).toBe('Cette demande ne peut pas aboutir');
    expect(await page.locator('.message-code').innerText()).toMatch(/invalid_client|invalid_request/);
  });
});
