/**
 * Visual preview of the holder pages in a real browser, under the production CSP.
 * Writes /tmp/views-preview-<page>-<viewport>.png for design review.
 * Needs Chromium (scripts/install-chromium.sh); skipped when it is not installed.
 */
import { existsSync } from 'node:fs';
import QRCode from 'qrcode';
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderMessage } from '../../../src/interaction/views/message.js';
import { renderPrompt } from '../../../src/interaction/views/prompt.js';
import { CHROMIUM_PATH, launchChromium } from '../../helpers/browser.js';
import { startHarness, watchPage, type Harness } from './harness.js';

const VIEWPORTS = [
  { name: 'mobile', width: 390, height: 844 },
  { name: 'desktop', width: 1280, height: 800 },
] as const;

const OFFER_URI =
  'openid-credential-offer://?credential_offer_uri=https%3A%2F%2Fissuer.example.com%2Fv2.0%2Foffers%2F6f1c0a8e-3b7d-4a59-9a1e-2c4d8f0b7e31';
const VP_URI =
  'openid4vp://?client_id=x509_san_dns%3Averifier.example.com&request_uri=https%3A%2F%2Fverifier.example.com%2Fv2.0%2Frequests%2F0b7e31c4d8f';

describe.skipIf(!existsSync(CHROMIUM_PATH))('views preview (Chromium)', () => {
  let browser: Browser;
  let harness: Harness;
  const written: string[] = [];

  beforeAll(async () => {
    harness = await startHarness();
    const issuanceQr = await QRCode.toString(OFFER_URI, { type: 'svg', margin: 1 });
    const verificationQr = await QRCode.toString(VP_URI, { type: 'svg', margin: 1 });
    harness.page('/issuance', {
      render: (nonce) =>
        renderPrompt({
          nonce,
          kind: 'issuance',
          clientName: 'Contoso Human Resources',
          credentialTypes: [
            {
              name: 'VerifiedEmployee',
              displayName: 'Verified employee',
              attributes: ['given_name', 'family_name', 'email', 'jobTitle', 'employeeNumber'],
            },
          ],
          walletUri: OFFER_URI,
          qrSvg: issuanceQr,
          pin: { length: 4 },
          statusUrl: '/status/issuance',
          continueUrl: '/continue/issuance',
          expiresAt: Date.now() + 5 * 60_000,
        }),
    });
    harness.page('/verification', {
      render: (nonce) =>
        renderPrompt({
          nonce,
          kind: 'verification',
          clientName: 'Fabrikam Rentals',
          credentialTypes: [
            {
              name: 'PID',
              displayName: 'Personal ID',
              attributes: ['given_name', 'family_name', 'birth_date', 'age_over_18'],
            },
            {
              name: 'DrivingLicence',
              displayName: 'Driving licence',
              attributes: ['document_number', 'driving_privileges'],
            },
          ],
          walletUri: VP_URI,
          qrSvg: verificationQr,
          statusUrl: '/status/verification',
          continueUrl: '/continue/verification',
          expiresAt: Date.now() + 4 * 60_000 + 30_000,
        }),
    });
    harness.page('/error', {
      status: 410,
      render: (nonce) =>
        renderMessage({
          nonce,
          title: 'This link has expired',
          message: 'For your security, links to add or share a credential only work for a few minutes.',
          status: 410,
        }),
    });
    browser = await launchChromium();
  }, 60_000);

  afterAll(async () => {
    await browser?.close();
    await harness?.close();
    if (written.length) console.log(`views preview screenshots:\n  ${written.join('\n  ')}`);
  });

  for (const page of ['issuance', 'verification', 'error'] as const) {
    for (const vp of VIEWPORTS) {
      it(`${page} at ${vp.width}x${vp.height}: no CSP violations${page === 'error' ? '' : ', live status shown'}`, async () => {
        const context = await browser.newContext({
          viewport: { width: vp.width, height: vp.height },
          deviceScaleFactor: 1,
        });
        try {
          const p = await context.newPage();
          const watch = await watchPage(p, harness.origin);
          const res = await p.goto(`${harness.origin}/${page}`);
          expect(res?.headers()['content-security-policy']).toContain("script-src 'nonce-");
          expect(p.locator('h1')).toBeDefined();
          if (page === 'error') {
            expect(res?.status()).toBe(410);
            expect(await p.locator('h1').textContent()).toBe('This link has expired');
          } else {
            // The status line only reads this after the first successful poll: the script ran under CSP.
            await p.waitForFunction(
              () =>
                document.getElementById('status-text')?.textContent === 'Waiting for your wallet\u2026' &&
                document.getElementById('prompt')?.getAttribute('data-state') === 'pending',
            );
            await p.waitForFunction(() => /^\d+:\d\d$/.test(document.getElementById('countdown')?.textContent ?? ''));
            expect(await p.locator('#status-text').getAttribute('aria-live')).toBe('polite');
            expect(harness.polls(page).length).toBeGreaterThan(0);
            // The stylesheet applied (a blocked <style> would leave the QR code full-width and unstyled).
            const qrWidth = await p.locator('.qr-code').evaluate((el) => el.getBoundingClientRect().width);
            expect(qrWidth).toBeLessThanOrEqual(250);
            expect(qrWidth).toBeGreaterThan(150);
          }
          const file = `/tmp/views-preview-${page}-${vp.name}.png`;
          await p.screenshot({ path: file, fullPage: true });
          written.push(file);
          expect(await watch.cspViolations()).toEqual([]);
          expect(watch.pageErrors).toEqual([]);
          expect(watch.foreignRequests).toEqual([]);
        } finally {
          await context.close();
        }
      }, 30_000);
    }
  }

  it('issuance in dark mode at 390x844', async () => {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, colorScheme: 'dark' });
    try {
      const p = await context.newPage();
      const watch = await watchPage(p, harness.origin);
      await p.goto(`${harness.origin}/issuance`);
      await p.waitForFunction(
        () => document.getElementById('status-text')?.textContent === 'Waiting for your wallet\u2026',
      );
      const file = '/tmp/views-preview-issuance-mobile-dark.png';
      await p.screenshot({ path: file, fullPage: true });
      written.push(file);
      expect(await watch.cspViolations()).toEqual([]);
    } finally {
      await context.close();
    }
  }, 30_000);
});
