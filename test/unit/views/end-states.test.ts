/**
 * What the holder is told, in Chromium under the production CSP, at 1280 and 390 px, in English, German and
 * an RTL language (the Arabic test catalogue): the prompt's headings count what is asked, a PID's claims are
 * named in the page's language, a finished, expired or failed prompt shows one message and one next step,
 * and the other-provider journey waits for a click without a spinner or words about wallets. Every state is
 * checked with axe (zero violations) and screenshotted to /tmp/holder-told-*.png.
 */
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import QRCode from 'qrcode';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Catalogues, type Texts } from '../../../src/i18n/catalogues.js';
import { pidClaimLabels, pidOptionalClaims } from '../../../src/identity/pid.js';
import { identitySchema } from '../../../src/config/schema.js';
import { renderPrompt, type PromptView } from '../../../src/interaction/views/prompt.js';
import { renderIdentityJourneyBytes } from '../../../src/interaction/views/identityJourney.js';
import { CHROMIUM_PATH, launchChromium } from '../../helpers/browser.js';
import { axeViolations } from '../../helpers/axe.js';
import { startHarness, watchPage, type Harness } from './harness.js';

const URI = 'openid4vp://?client_id=x509_hash%3Aabc&request_uri=https%3A%2F%2Fverifier.example%2Fr%2F1';
const catalogues = Catalogues.load('en', fileURLToPath(new URL('../../fixtures/locales/', import.meta.url)));
const LANGS = ['en', 'de', 'ar'] as const;
const WIDTHS = [1280, 390] as const;
const texts = (lang: string): Texts => catalogues.texts(lang)!;

const pid = identitySchema.parse({
  VerifiedIdentity: {
    claims: ['given_name', 'family_name', 'birthdate'],
    optionalClaims: ['nationalities'],
    labels: { family_name: { en: 'Surname', de: 'Familienname (laut Ausweis)' } },
    trustedIssuers: [{ issuer: 'https://pid.example' }],
  },
}).VerifiedIdentity!;

describe('PID claim labels', () => {
  it('come from the block per language, then from the catalogue, else stay unnamed', () => {
    const names = [...pid.claims, ...pidOptionalClaims(pid), 'a_claim_nobody_names'];
    expect(pidClaimLabels(pid, texts('de'), names)).toEqual({
      given_name: 'Vorname',
      family_name: 'Familienname (laut Ausweis)',
      birthdate: 'Geburtsdatum',
      nationalities: 'Staatsangehörigkeiten',
    });
    expect(pidClaimLabels(pid, catalogues.texts('fr')!, names)).toEqual({
      given_name: 'Prénom',
      family_name: 'Surname',
      birthdate: 'Date de naissance',
      nationalities: 'Nationalités',
    });
    expect(pidClaimLabels(pid, texts('en'), names)).toEqual({
      given_name: 'Given name',
      family_name: 'Surname',
      birthdate: 'Birthdate',
      nationalities: 'Nationalities',
    });
  });

  it('every shipped catalogue names the EU PID standard claims', () => {
    for (const lang of ['de', 'fr']) {
      const t = catalogues.texts(lang)!;
      for (const name of [
        'given_name',
        'family_name',
        'birthdate',
        'nationalities',
        'place_of_birth',
        'resident_street',
        'resident_city',
        'resident_postal_code',
        'resident_country',
      ]) {
        expect(t.t(`claim.${name}` as never), `${lang} ${name}`).not.toBe(texts('en').t(`claim.${name}` as never));
      }
    }
  });
});

/** The pages write characters outside ASCII as references. */
const decode = (page: string) =>
  page.replace(/&#(x[0-9a-f]+|\d+);/gi, (_, n: string) =>
    String.fromCodePoint(n[0].toLowerCase() === 'x' ? parseInt(n.slice(1), 16) : Number(n)),
  );

describe('headings', () => {
  const view = (lang: string, kind: PromptView['kind'], count: number): string =>
    decode(
      renderPrompt({
        nonce: 'n',
        lang,
        texts: texts(lang),
        kind,
        clientName: 'Acme',
        credentialTypes: Array.from({ length: count }, (_, i) => ({ name: `T${i}`, attributes: ['a'] })),
        walletUri: URI,
        qrSvg: '<svg xmlns="http://www.w3.org/2000/svg"></svg>',
        statusUrl: '/s',
        continueUrl: '/c',
        expiresAt: Date.now() + 60_000,
      }),
    );
  it('count what is asked, in every catalogue', () => {
    expect(view('en', 'verification', 1)).toContain('<h1>Share your credential</h1>');
    expect(view('en', 'verification', 2)).toContain('<h1>Share your credentials</h1>');
    expect(view('en', 'issuance', 2)).toContain('<h1>Add your credentials to your wallet</h1>');
    expect(view('de', 'verification', 2)).toContain('<h1>Nachweise teilen</h1>');
    expect(view('fr', 'verification', 2)).toContain('<h1>Partager vos attestations</h1>');
    expect(view('fr', 'issuance', 1)).toContain('<h1>Ajouter votre attestation à votre portefeuille</h1>');
  });
});

describe.skipIf(!existsSync(CHROMIUM_PATH))('end states and the journey (Chromium)', () => {
  let browser: Browser;
  let harness: Harness;
  let qrSvg: string;

  beforeAll(async () => {
    harness = await startHarness();
    qrSvg = await QRCode.toString(URI, { type: 'svg', margin: 1 });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await harness?.close();
  });

  /** A PID prompt whose status answers `status`; its continue step answers 204, so the page stays to be looked at. */
  function prompt(id: string, lang: string, status: { status: string; message?: string }): string {
    const t = texts(lang);
    harness.status(id, [{ status: 'pending' }, status]);
    harness.page(`/stay/${id}`, { render: () => '', status: 204 });
    harness.page(`/p/${id}`, {
      render: (nonce) =>
        renderPrompt({
          nonce,
          lang,
          texts: t,
          kind: 'identity',
          clientName: 'Acme Bank',
          credentialTypes: [
            {
              name: 'VerifiedIdentity',
              displayName: 'PID',
              attributes: [...pid.claims],
              optional: pidOptionalClaims(pid),
              labels: pidClaimLabels(pid, t, [...pid.claims, 'nationalities']),
            },
          ],
          walletUri: URI,
          qrSvg,
          statusUrl: `/status/${id}`,
          continueUrl: `/stay/${id}`,
          expiresAt: Date.now() + 5 * 60_000,
        }),
    });
    return `${harness.origin}/p/${id}`;
  }

  async function visible(page: Page, selector: string): Promise<number> {
    return page
      .locator(selector)
      .evaluateAll(
        (els) =>
          els.filter((e) => (e as HTMLElement).offsetParent !== null || getComputedStyle(e).position === 'fixed')
            .length,
      );
  }

  for (const lang of LANGS) {
    for (const state of ['done', 'expired', 'failed'] as const) {
      it(`${lang}: ${state} shows one message and one next step`, async () => {
        const t = texts(lang);
        // as the status step words them for the page (src/interaction/actions/status.ts): an expiry without a message
        const message = state === 'failed' ? t.t('status.walletDeclined') : undefined;
        const url = prompt(`${lang}-${state}`, lang, { status: state, ...(message ? { message } : {}) });
        const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
        const page = await context.newPage();
        const watch = await watchPage(page, harness.origin);
        try {
          await page.goto(url);
          await page.waitForFunction(
            (s) => document.getElementById('prompt')?.getAttribute('data-state') === s,
            state,
            { polling: 50 },
          );
          // the page's own step back to the relying party (answered 204 here) has been taken for expired/failed
          if (state !== 'done') await page.waitForTimeout(3200);
          for (const width of WIDTHS) {
            await page.setViewportSize({ width, height: width === 1280 ? 900 : 844 });
            await page.screenshot({ path: `/tmp/holder-told-${lang}-${state}-${width}.png`, fullPage: true });
            // no way into the wallet is left: no "or", no QR code, no wallet link, no countdown
            expect(await visible(page, '.divider'), `${width} px`).toBe(0);
            expect(await visible(page, '.qr-code'), `${width} px`).toBe(0);
            expect(await visible(page, '#wallet-link'), `${width} px`).toBe(0);
            expect(await visible(page, '#expiry'), `${width} px`).toBe(0);
            // the PID's claims in the page's language
            await expect
              .poll(() => page.locator('[data-attribute="given_name"]').innerText())
              .toBe(t.t('claim.given_name'));
          }
          const alert = await page.locator('#error p').allInnerTexts();
          const statusLine = await page.locator('#status-text').innerText();
          if (state === 'done') {
            expect(alert).toEqual([]);
            expect(statusLine).toBe(t.t('progress.doneReturning', { client: 'Acme Bank' }));
          } else {
            // one message: an expiry is said once, a failure has its title and reason; the next step is the status line's
            expect(alert).toEqual(
              state === 'expired' ? [t.t('progress.expiredTitle')] : [t.t('progress.failedTitle'), message],
            );
            expect(statusLine).toBe(t.t('progress.backTo', { client: 'Acme Bank' }));
            if (lang === 'en') expect(await page.locator('main').innerText()).not.toMatch(/start again|try again/i);
          }
          expect(await axeViolations(page)).toBe('');
          expect(watch.pageErrors).toEqual([]);
        } finally {
          await context.close();
        }
      }, 60_000);
    }

    it(`${lang}: the other-provider journey waits for a click, without a spinner or words about wallets`, async () => {
      const t = texts(lang);
      const id = `${lang}-journey`;
      harness.status(id, [{ status: 'pending' }]);
      harness.page(`/j/${id}`, {
        render: (nonce) =>
          renderIdentityJourneyBytes({
            nonce,
            lang,
            texts: t,
            clientName: 'Acme Bank',
            providerName: 'Example national identity check service',
            startUrl: '/start',
            resumeUri: `${harness.origin}/authorize?client_id=acme&context_id=abc`,
            resumeQrSvg: qrSvg,
            statusUrl: `/status/${id}`,
            continueUrl: `/continue/${id}`,
            expiresAt: Date.now() + 5 * 60_000,
          }).toString('utf8'),
      });
      const context = await browser.newContext({ viewport: { width: 1280, height: 900 }, bypassCSP: true });
      const page = await context.newPage();
      try {
        await page.goto(`${harness.origin}/j/${id}`);
        await page.waitForTimeout(1500);
        for (const width of WIDTHS) {
          await page.setViewportSize({ width, height: width === 1280 ? 900 : 844 });
          await page.screenshot({ path: `/tmp/holder-told-${lang}-journey-${width}.png`, fullPage: true });
          expect(await visible(page, '.spinner')).toBe(0);
          expect(await page.locator('footer').count()).toBe(0);
          expect(await page.locator('body').innerText()).not.toContain(t.t('page.footer'));
          // the button's icon stays next to its label's first line (in either direction)
          const gap = await page.locator('#provider-link').evaluate((a) => {
            const icon = a.querySelector('svg')!.getBoundingClientRect();
            const range = document.createRange();
            range.selectNodeContents(a.querySelector('.button-label')!.lastChild!);
            const middle = icon.top + icon.height / 2;
            const sameLine = [...range.getClientRects()].filter(
              (r) => r.width > 0 && r.top <= middle && r.bottom >= middle,
            );
            return Math.min(...sameLine.map((r) => Math.max(r.left - icon.right, icon.left - r.right)));
          });
          expect(gap, `${width} px`).toBeGreaterThanOrEqual(0);
          expect(gap, `${width} px`).toBeLessThanOrEqual(16);
        }
        expect(await axeViolations(page)).toBe('');
      } finally {
        await context.close();
      }
    }, 60_000);
  }
});
