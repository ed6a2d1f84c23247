import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { launchChromium } from '../helpers/browser.js';
import { axeViolations } from '../helpers/axe.js';
import { startTestService, SECRETS, REDIRECT, type TestService } from '../helpers/service.js';
import { demoClients, demoIdentity, demoVerifier } from '../helpers/demoService.js';
import { makeHint, pkcePair } from '../helpers/rp.js';
import { holderCompletesIssuance, newWallet, pushAuthorization } from '../helpers/flows.js';
import { webhookSecret } from '../helpers/webhookReceiver.js';
import type { DevWallet } from '../../src/wallet/holder.js';

/**
 * Accessibility: axe-core, in Chromium, on every HTML page the service renders (the holder's prompts in
 * their states, the message pages, the demo relying party, its PID issuer and its identity provider), in
 * the light and the dark colour scheme, at a desktop and a phone width. Any violation of any impact fails.
 *
 * axe is injected as a script tag; the pages' CSP (script-src 'nonce-…') would block it, so the browser
 * contexts bypass CSP. The pages do not depend on the store: the test runs once, in the memory project.
 */
const ONCE = process.env.TEST_STORE === 'redis' ? describe.skip : describe;

let t: TestService;
let browser: Browser;
/** a holder with an EmployeeBadge, for the verification prompts, and for the demo's issuances */
let wallet: DevWallet;
/** the demo client's webhook secret: the demo's receiver at /demo/webhook verifies with it */
const secret = webhookSecret();

beforeAll(async () => {
  const identityFor = await demoIdentity();
  // the demo (demo: true) with both identity flows and the External option, as in test/e2e/demo.test.ts
  t = await startTestService((baseUrl) => ({
    demo: true,
    identity: identityFor(baseUrl),
    verifier: demoVerifier(),
    clients: demoClients(baseUrl, secret),
  }));
  browser = await launchChromium();
  wallet = await newWallet();
  await holderCompletesIssuance(
    await par({
      scope: 'openid issue.EmployeeBadge',
      id_token_hint: await hint({ FirstName: 'Grace', LastName: 'Hopper' }),
    }),
    { redirectUri: REDIRECT, wallet },
  );
}, 60_000);
afterAll(async () => {
  await browser?.close();
  await t?.stop();
});

// ---- how the pages are reached -------------------------------------------------------------------------

const hint = (claims: Record<string, unknown>) =>
  makeHint({ clientId: 'issuer-pkce', secret: SECRETS.pkceIssuer, audience: t.url, claims });

/** A pushed request of the PKCE client (its redirect URI is never served: these pages never go back to it). */
async function par(params: Record<string, string>): Promise<string> {
  const { challenge } = pkcePair();
  const { authorizeUrl } = await pushAuthorization(t.url, {
    state: randomBytes(12).toString('base64url'),
    nonce: 'n',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...params,
  });
  return authorizeUrl;
}

/** The same request at authorise without PAR. */
function plainAuthorize(params: Record<string, string>): string {
  const { challenge } = pkcePair();
  return `${t.url}/v2.0/oidc/authorize?${new URLSearchParams({
    client_id: 'issuer-pkce',
    response_type: 'code',
    redirect_uri: REDIRECT,
    state: randomBytes(12).toString('base64url'),
    nonce: 'n',
    code_challenge: challenge,
    code_challenge_method: 'S256',
    ...params,
  })}`;
}

const issuanceWithPin = async (external = false) =>
  par({
    scope: `openid issue.EmployeeBadge${external ? ' External' : ''}`,
    id_token_hint: await hint({ FirstName: 'Ada', LastName: 'Lovelace', PinCode: '2468' }),
  });

/** The prompt's wallet link (the same-device button). */
const walletLink = async (page: Page) => (await page.locator('#wallet-link').getAttribute('href'))!;
/** Waits until the prompt's script shows `state` (the status it polls). */
const promptState = (page: Page, state: string) =>
  expect.poll(() => page.locator('#prompt').getAttribute('data-state'), { timeout: 10_000 }).toBe(state);

/**
 * Opens `url` with its Refresh header taken off, so that a page that reloads or moves on by itself holds
 * still for axe. (A route sees the requests a page starts, not those a redirect leads to: hence a navigation of its own.)
 */
async function openHeld(page: Page, url: string): Promise<void> {
  await page.route(url, async (route) => {
    const response = await route.fetch({ maxRedirects: 0 });
    const { refresh: _, ...headers } = response.headers();
    await route.fulfill({ response, headers });
  });
  await page.goto(url);
}

/** A demo form, found by one of its hidden fields, submitted with the interface `mode`. */
async function submitDemoForm(page: Page, hidden: string, mode?: string): Promise<void> {
  await page.goto(`${t.url}/demo`);
  const form = page.locator('form', { has: page.locator(hidden) });
  if (mode) await form.locator('select[name="mode"]').selectOption(mode);
  await form.locator('button').click();
}

async function toDemoIdv(page: Page): Promise<void> {
  await page.getByRole('link', { name: 'Continue with Example ID check (demo)' }).click();
  await page.waitForURL(new RegExp(`^${t.url}/demo/idv/interaction/`));
}

interface Target {
  /** where the browser goes first */
  url: () => Promise<string> | string;
  /** what happens on the page before it is checked (a state reached, a form sent) */
  setup?: (page: Page) => Promise<void>;
  /** the page's heading, to be sure the right page is checked */
  h1: string | RegExp;
}

const PAGES: Record<string, Target> = {
  // the holder's prompts (src/interaction/views/prompt.ts)
  'issuance prompt with the PIN notice': {
    url: () => issuanceWithPin(),
    h1: 'Add your credential to your wallet',
  },
  'issuance prompt after a wrong PIN': {
    url: () => issuanceWithPin(),
    setup: async (page) => {
      await expect((await newWallet()).receive(await walletLink(page), { pin: '0000' })).rejects.toThrow(
        /invalid_grant/,
      );
      await promptState(page, 'pin_retry');
    },
    h1: 'Add your credential to your wallet',
  },
  'issuance prompt, done (External: the page stays)': {
    url: () => issuanceWithPin(true),
    setup: async (page) => {
      await (await newWallet()).receive(await walletLink(page), { pin: '2468' });
      await promptState(page, 'done');
    },
    h1: 'Add your credential to your wallet',
  },
  'issuance prompt, failed after the last PIN attempt (External)': {
    url: () => issuanceWithPin(true),
    setup: async (page) => {
      const holder = await newWallet();
      const link = await walletLink(page);
      for (const pin of ['0000', '0001', '0002'])
        await expect(holder.receive(link, { pin })).rejects.toThrow(/invalid_grant/);
      await promptState(page, 'failed');
      await expect.poll(() => page.locator('#error').innerText()).not.toBe('');
    },
    h1: 'Add your credential to your wallet',
  },
  'verification prompt': {
    url: () => par({ scope: 'openid EmployeeBadge' }),
    h1: 'Share your credential',
  },
  'verification prompt, presented on this device': {
    url: () => par({ scope: 'openid EmployeeBadge' }),
    setup: async (page) => {
      expect((await wallet.present(await walletLink(page))).status).toBe(200);
      await expect
        .poll(() => page.locator('#status-text').innerText(), { timeout: 10_000 })
        .toMatch(/Finishing in the browser your wallet opened/);
    },
    h1: 'Share your credential',
  },
  'PID identity prompt (VerifiedIdentity)': {
    url: () => par({ scope: 'openid VerifiedIdentity' }),
    h1: 'Prove your identity',
  },
  'VerifiedIdentity_Other prompt without PAR (with the continue-on-another-device code)': {
    url: () => plainAuthorize({ scope: 'openid VerifiedIdentity_Other' }),
    setup: async (page) => expect(await page.locator('#resume-link').count()).toBe(1),
    h1: 'Verify your identity',
  },
  'VerifiedIdentity_Other prompt with PAR (one column)': {
    url: () => par({ scope: 'openid VerifiedIdentity_Other' }),
    h1: 'Verify your identity',
  },

  // the demo's identity provider (src/demo/idvPages.ts)
  'demo identity provider: login page': {
    url: () => par({ scope: 'openid VerifiedIdentity_Other' }),
    setup: toDemoIdv,
    h1: 'Example ID check (demo)',
  },
  'demo identity provider: login page saying what is wrong': {
    url: () => par({ scope: 'openid VerifiedIdentity_Other' }),
    setup: async (page) => {
      await toDemoIdv(page);
      await page.getByLabel('Given name').fill(' '); // passes `required`, is empty once trimmed
      await page.getByRole('button', { name: 'Confirm identity' }).click();
      await page.getByRole('alert').waitFor();
    },
    h1: 'Example ID check (demo)',
  },
  'demo identity provider: ended page': {
    url: () => `${t.url}/demo/idv/interaction/unknownuid`,
    h1: 'This identity check has ended',
  },

  // message pages (src/interaction/views/message.ts)
  'message: this link can no longer be used': {
    url: () => `${t.url}/interaction/v2/unknownuid`,
    h1: 'This link can no longer be used',
  },
  'message: error page at authorise (unknown client)': {
    url: () =>
      `${t.url}/v2.0/oidc/authorize?${new URLSearchParams({ client_id: 'no-such-client', response_type: 'code', scope: 'openid', redirect_uri: REDIRECT })}`,
    h1: 'This request cannot be completed',
  },
  'message: an identity provider answer that matches no journey': {
    url: () => `${t.url}/identity/callback?code=anything&state=whatever`,
    h1: 'This sign-in could not be matched',
  },
  'message: identity check finished, with a Continue button': {
    url: () => par({ scope: 'openid VerifiedIdentity_Other' }),
    setup: async (page) => {
      await toDemoIdv(page);
      // the person confirms, as the form posts, through this browser's cookies (page.request shares them); the
      // redirects are followed by hand up to the service's callback, which is then opened without its Refresh header
      const action = (await page.locator('form').getAttribute('action'))!;
      let res = await page.request.post(action, {
        form: { given_name: 'Ada', family_name: 'Lovelace', birthdate: '1815-12-10', decision: 'confirm' },
        maxRedirects: 0,
      });
      let url = action;
      while (!url.startsWith(`${t.url}/identity/callback`)) {
        expect(res.status(), url).toBeGreaterThanOrEqual(300);
        url = new URL(res.headers().location, url).href;
        if (!url.startsWith(`${t.url}/identity/callback`)) res = await page.request.get(url, { maxRedirects: 0 });
      }
      await openHeld(page, url);
    },
    h1: 'Identity check finished',
  },
  'message: all done, the app continues (External)': {
    url: () => issuanceWithPin(true),
    setup: async (page) => {
      await (await newWallet()).receive(await walletLink(page), { pin: '2468' });
      await promptState(page, 'done');
      await page.goto(`${new URL(page.url()).href.replace(/\/$/, '')}/continue`);
    },
    h1: 'All done',
  },

  // the demo relying party (src/demo/routes.ts) and its PID issuer (src/demo/pid.ts)
  'demo: start page': {
    url: () => `${t.url}/demo`,
    h1: 'Try it',
  },
  'demo: result page (unknown state)': {
    url: () => `${t.url}/demo/callback?state=unknown`,
    h1: 'Unknown or used state',
  },
  "demo: result page with the ID token and the operator's forms": {
    url: () => `${t.url}/demo`,
    setup: async (page) => {
      await submitDemoForm(page, 'input[name="type"][value="EmployeeBadge"]');
      await wallet.receive(await walletLink(page), { pin: '1234' });
      await page.waitForURL(/\/demo\/callback/, { timeout: 15_000 });
      // with the revocation's confirmation open, so its danger button is checked too
      await page.locator('summary', { hasText: 'Revoke' }).click();
      await page.getByRole('button', { name: 'Revoke for good' }).waitFor();
    },
    h1: 'The relying party received this ID token (signature verified)',
  },
  'demo: External flow, waiting for the webhook': {
    url: () => `${t.url}/demo`,
    setup: async (page) => {
      await submitDemoForm(page, 'input[name="type"][value="EmployeeBadge"]', 'v2-par-external');
      await page.waitForURL(/\/demo\/external\?state=/);
      await openHeld(page, page.url());
    },
    h1: 'External Client flow',
  },
  'demo: External flow, what the webhook led to': {
    url: () => `${t.url}/demo`,
    setup: async (page) => {
      await submitDemoForm(page, 'input[name="kind"][value="verify"]', 'v2-external');
      await page.waitForURL(/\/demo\/external\?state=/);
      // what the service posts once the wallet step expired, signed with the client's secret
      const state = new URL(page.url()).searchParams.get('state')!;
      const body = JSON.stringify({
        type: 'flow.expired',
        timestamp: new Date().toISOString(),
        data: {
          state,
          client_id: 'issuer-pkce',
          flow: 'verification',
          error: 'access_denied',
          error_description: 'the wallet step expired before the wallet answered',
        },
      });
      const id = `msg_${randomBytes(8).toString('hex')}`;
      const now = new Date();
      const res = await fetch(`${t.url}/demo/webhook`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          'webhook-id': id,
          'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
          'webhook-signature': new Webhook(secret).sign(id, now, body),
        },
        body,
      });
      expect(res.status).toBe(204);
      await openHeld(page, page.url());
    },
    h1: 'The flow expired',
  },
  'demo PID issuer: form': {
    url: () => `${t.url}/demo/pid`,
    h1: 'Get a demo PID',
  },
  'demo PID issuer: form saying what is wrong': {
    url: () => `${t.url}/demo/pid`,
    setup: async (page) => {
      const birthdate = page.getByLabel('Birth date');
      await birthdate.evaluate((input: HTMLInputElement) => (input.type = 'text'));
      await birthdate.fill('1815-02-30');
      await page.getByRole('button', { name: 'Create the offer' }).click();
      await page.getByRole('alert').waitFor();
    },
    h1: 'Get a demo PID',
  },
  'demo PID issuer: the offer': {
    url: () => `${t.url}/demo/pid`,
    setup: async (page) => {
      await page.getByRole('button', { name: 'Create the offer' }).click();
      await page.locator('img[alt="QR code of the credential offer"]').waitFor();
    },
    h1: 'Your demo PID offer',
  },
};

// ---- the check --------------------------------------------------------------------------------------

ONCE('accessibility (axe-core, no violations of any impact)', () => {
  // one load per page; each colour scheme and width is then emulated on it (a new page per case would
  // spend most of the time making flows, not checking them)
  it.each(Object.keys(PAGES))(
    '%s, light and dark, 1280 and 390 px',
    async (name) => {
      const target = PAGES[name];
      const context = await browser.newContext({ bypassCSP: true, viewport: { width: 1280, height: 900 } });
      try {
        const page = await context.newPage();
        const response = await page.goto(await target.url());
        expect(response?.headers()['content-type']).toMatch(/^text\/html/);
        await target.setup?.(page);
        const found = await axeViolations(page, async () =>
          expect(await page.locator('h1').innerText()).toMatch(target.h1),
        );
        expect(found, `axe violations on ${name} at ${page.url()}`).toBe('');
      } finally {
        await context.close();
      }
    },
    60_000,
  );
});
