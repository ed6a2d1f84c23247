/**
 * Behaviour of the prompt's inline script in a real browser, under the production CSP: status polling,
 * PIN retry, completion, errors, backoff, expiry, same-origin rule, and the no-JavaScript fallback.
 * Needs Chromium (scripts/install-chromium.sh); skipped when it is not installed.
 */
import { existsSync } from 'node:fs';
import QRCode from 'qrcode';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { renderPrompt, type PromptView } from '../../../src/interaction/views/prompt.js';
import { CHROMIUM_PATH, launchChromium } from '../../helpers/browser.js';
import { recordStatusLine, startHarness, watchPage, type Harness, type PageWatch, type StatusStep } from './harness.js';

const URI = 'openid-credential-offer://?credential_offer_uri=https%3A%2F%2Fissuer.example%2Foffers%2F1';

describe.skipIf(!existsSync(CHROMIUM_PATH))('prompt script (Chromium)', () => {
  // The tests run one after the other on purpose: they assert the script's timing (1 s polling,
  // backoff, 3 s error delay), and concurrent browser windows get throttled as hidden pages.
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

  /** Registers /p/<id> (a prompt polling /status/<id>, continuing to /continue/<id>). */
  function prompt(
    id: string,
    steps: StatusStep[],
    over: Partial<PromptView> = {},
    onRender?: (view: PromptView) => void,
  ): string {
    harness.status(id, steps);
    harness.page(`/p/${id}`, {
      render: (nonce) => {
        const view: PromptView = {
          nonce,
          kind: 'issuance',
          clientName: 'Acme Bank',
          credentialTypes: [{ name: 'Badge', displayName: 'Employee badge', attributes: ['given_name'] }],
          walletUri: URI,
          qrSvg,
          pin: { length: 4 },
          statusUrl: `/status/${id}`,
          continueUrl: `/continue/${id}`,
          expiresAt: Date.now() + 5 * 60_000,
          ...over,
        };
        onRender?.(view);
        return renderPrompt(view);
      },
    });
    return `${harness.origin}/p/${id}`;
  }

  async function open(
    url: string,
    options: { javaScriptEnabled?: boolean } = {},
  ): Promise<{ context: BrowserContext; page: Page; watch: PageWatch; status: string[] }> {
    const context = await browser.newContext({ viewport: { width: 390, height: 844 }, ...options });
    const page = await context.newPage();
    const watch = await watchPage(page, harness.origin);
    const status = options.javaScriptEnabled === false ? [] : await recordStatusLine(page);
    await page.goto(url);
    return { context, page, watch, status };
  }

  it('walks pending → scanned → wrong PIN → done and continues on its own', async () => {
    const url = prompt('happy', [
      { status: 'pending' },
      { status: 'scanned' },
      // the server words the attempts left in the page's language (src/interaction/actions/status.ts forBrowser)
      { status: 'pin_retry', attemptsLeft: 2, message: 'Wrong PIN. 2 attempts left.' },
      { status: 'pin_retry', attemptsLeft: 1, message: 'Wrong PIN. 1 attempt left.' },
      { status: 'done' },
    ]);
    const { context, page, watch, status } = await open(url);
    try {
      await page.waitForFunction(
        () => document.getElementById('prompt')?.getAttribute('data-state') === 'pin_retry',
        undefined,
        { polling: 50 },
      );
      await page.screenshot({ path: '/tmp/views-preview-state-pin-retry.png' });
      await page.waitForURL(`${harness.origin}/continue/happy`, { timeout: 15_000 });
      expect(status).toEqual([
        'Waiting for your wallet…',
        'Wallet connected…',
        'Wrong PIN. 2 attempts left.',
        'Wrong PIN. 1 attempt left.',
        'Done. Returning you to Acme Bank…',
      ]);
      expect(await page.locator('#continued').textContent()).toBe('continued happy');
      expect(await watch.cspViolations()).toEqual([]);
      expect(watch.pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 30_000);

  it('goes to the resume URL the done status names (same origin), not to the continue step', async () => {
    const url = prompt('resume', [
      { status: 'pending' },
      { status: 'done', next: `${harness.origin}/continue/resumed-at-provider` },
    ]);
    const { context, page, watch } = await open(url);
    try {
      await page.waitForURL(`${harness.origin}/continue/resumed-at-provider`, { timeout: 10_000 });
      expect(await page.locator('#continued').textContent()).toBe('continued resumed-at-provider');
      expect(watch.pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 20_000);

  it('ignores a resume URL on another origin and continues as usual', async () => {
    const cross = harness.origin.replace('127.0.0.1', 'localhost');
    const url = prompt('resume-cross', [{ status: 'done', next: `${cross}/continue/elsewhere` }]);
    const { context, page } = await open(url);
    try {
      await page.waitForURL(`${harness.origin}/continue/resume-cross`, { timeout: 10_000 });
    } finally {
      await context.close();
    }
  }, 20_000);

  it('shows a failure as an error panel, then continues after about 3 s', async () => {
    const url = prompt('failed', [
      { status: 'pending' },
      { status: 'failed', message: 'Your wallet declined the credential.' },
    ]);
    const { context, page, watch, status } = await open(url);
    try {
      await page.waitForFunction(() => (document.getElementById('error')?.textContent ?? '').includes('declined'));
      const shownAt = Date.now();
      expect(await page.locator('#error').getAttribute('role')).toBe('alert');
      expect(await page.locator('#error .alert-title').textContent()).toBe('Something went wrong');
      expect(await page.locator('#error').textContent()).toContain('Your wallet declined the credential.');
      expect(await page.locator('#wallet-link').getAttribute('aria-disabled')).toBe('true');
      await page.screenshot({ path: '/tmp/views-preview-state-failed.png' });
      const pollsAtFailure = harness.polls('failed').length;
      await page.waitForURL(`${harness.origin}/continue/failed`, { timeout: 10_000 });
      expect(Date.now() - shownAt).toBeGreaterThanOrEqual(2500);
      expect(harness.polls('failed').length).toBe(pollsAtFailure); // polling stopped
      expect(status).toEqual(['Waiting for your wallet…', 'Returning you to Acme Bank…']);
      expect(await watch.cspViolations()).toEqual([]);
    } finally {
      await context.close();
    }
  }, 30_000);

  it('renders a hostile server message as text', async () => {
    const url = prompt('hostile', [{ status: 'expired', message: '<img src=x onerror="window.__pwned=1">Expired' }], {
      clientName: '<b>Evil</b>',
    });
    const { context, page, watch } = await open(url);
    try {
      await page.waitForFunction(() => document.getElementById('prompt')?.getAttribute('data-state') === 'expired');
      expect(await page.locator('#error .alert-title').textContent()).toBe('This request has expired');
      expect(await page.locator('#error').textContent()).toContain('<img src=x onerror="window.__pwned=1">Expired');
      expect(await page.locator('#error img').count()).toBe(0);
      expect(await page.locator('#status-text').textContent()).toBe('Returning you to <b>Evil</b>…');
      expect(await page.evaluate(() => (window as unknown as { __pwned?: number }).__pwned)).toBeUndefined();
      expect(await watch.cspViolations()).toEqual([]);
    } finally {
      await context.close();
    }
  }, 30_000);

  it('shows names outside ASCII as they are, from a page sent as pure ASCII', async () => {
    const name = 'Caf\u00e9 Z\u00fcrich \u{1F3E6} \u0420\u043e\u0441';
    let html = '';
    const url = prompt('unicode', [{ status: 'done' }], { clientName: name }, (view) => {
      html = renderPrompt(view);
    });
    const { context, page, watch, status } = await open(url);
    try {
      await page.waitForURL(`${harness.origin}/continue/unicode`, { timeout: 15_000 });
      expect(/^[\x00-\x7f]*$/.test(html)).toBe(true);
      expect(status).toContain(`Done. Returning you to ${name}\u2026`);
      expect(watch.pageErrors).toEqual([]);
    } finally {
      await context.close();
    }
  }, 30_000);

  it('backs off on network errors (2 s, 4 s, capped at 5 s) and recovers to 1 s', async () => {
    const url = prompt('flaky', ['drop', 'drop', 'drop', { status: 'pending' }]);
    const { context, page, watch, status } = await open(url);
    try {
      await page.waitForFunction(
        () => document.getElementById('status-text')?.textContent === 'Connection problem. Trying again…',
      );
      await page.waitForFunction(
        () => document.getElementById('status-text')?.textContent === 'Waiting for your wallet…',
        undefined,
        {
          timeout: 20_000,
          polling: 100,
        },
      );
      await page.waitForTimeout(1300);
      const t = harness.polls('flaky');
      const gaps = t.slice(1, 5).map((x, i) => x - t[i]);
      const expected = [2000, 4000, 5000, 1000];
      gaps.forEach((g, i) => {
        expect(g, `gap ${i}: ${gaps.join(', ')}`).toBeGreaterThan(expected[i] - 300);
        expect(g, `gap ${i}: ${gaps.join(', ')}`).toBeLessThan(expected[i] + 1500);
      });
      expect(status).toContain('Connection problem. Trying again…');
      expect(status[status.length - 1]).toBe('Waiting for your wallet…');
      expect(await watch.cspViolations()).toEqual([]);
    } finally {
      await context.close();
    }
  }, 40_000);

  it('at the end of the countdown polls once more, then reports expiry and continues', async () => {
    let deadline = 0;
    const url = prompt('timeout', [{ status: 'pending' }], {}, (view) => {
      view.expiresAt = Date.now() + 3000; // relative to the moment the page is served
      deadline = view.expiresAt;
    });
    const { context, page, watch } = await open(url);
    try {
      await page.waitForFunction(() => document.getElementById('prompt')?.classList.contains('is-expiring'));
      expect(await page.locator('#expiry-announce').textContent()).toContain('Less than a minute left');
      await page.waitForFunction(
        () => document.getElementById('prompt')?.getAttribute('data-state') === 'expired',
        undefined,
        {
          timeout: 10_000,
        },
      );
      expect(await page.locator('#error .alert-title').textContent()).toBe('This request has expired');
      await page.screenshot({ path: '/tmp/views-preview-state-expired.png' });
      await page.waitForURL(`${harness.origin}/continue/timeout`, { timeout: 10_000 });
      const after = harness.polls('timeout').filter((x) => x >= deadline - 100);
      expect(after.length).toBe(1);
      expect(Date.now() - deadline).toBeGreaterThanOrEqual(2900);
      expect(await watch.cspViolations()).toEqual([]);
    } finally {
      await context.close();
    }
  }, 30_000);

  it('never polls a status URL on another origin', async () => {
    const cross = harness.origin.replace('127.0.0.1', 'localhost');
    const url = prompt('cross', [{ status: 'done' }], { statusUrl: `${cross}/status/cross` });
    const { context, page, watch } = await open(url);
    try {
      await page.waitForTimeout(1200);
      expect(harness.polls('cross')).toEqual([]);
      expect(page.url()).toBe(url);
      expect(await watch.cspViolations()).toEqual([]);
    } finally {
      await context.close();
    }
  }, 30_000);

  it('without JavaScript shows the QR code, the wallet link and a Continue link', async () => {
    const url = prompt('nojs', [{ status: 'pending' }]);
    const { context, page, watch } = await open(url, { javaScriptEnabled: false });
    try {
      expect(await page.locator('.status').isVisible(), 'status box').toBe(false); // no spinner that never moves
      expect(await page.locator('.noscript p').textContent()).toContain('This request expires in about 5 minutes.');
      const cont = page.getByRole('link', { name: 'Continue', exact: true });
      expect(await cont.isVisible()).toBe(true);
      expect(await cont.getAttribute('href')).toBe('/continue/nojs');
      expect(await page.getByRole('link', { name: 'Open in wallet on this device' }).getAttribute('href')).toBe(URI);
      expect(await page.getByRole('img', { name: 'QR code for your wallet app' }).isVisible()).toBe(true);
      await page.screenshot({ path: '/tmp/views-preview-state-nojs.png', fullPage: true });
      expect(await watch.cspViolations()).toEqual([]);
    } finally {
      await context.close();
    }
  }, 30_000);

  it('the CSP watcher does report violations (control)', async () => {
    harness.page('/control', {
      render: (nonce) =>
        `<!doctype html><html lang="en"><head><title>control</title><style>body{color:red}</style><style nonce="${nonce}">p{}</style></head><body><p>x</p></body></html>`,
    });
    const { context, page, watch } = await open(`${harness.origin}/control`);
    try {
      await page.waitForLoadState('load');
      await page.waitForTimeout(200);
      expect((await watch.cspViolations()).length).toBeGreaterThan(0);
    } finally {
      await context.close();
    }
  }, 30_000);
});
