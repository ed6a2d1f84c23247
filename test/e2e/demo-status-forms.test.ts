import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser.js';
import { startTestService, type TestService } from '../helpers/service.js';
import { demoClients, demoIdentity, demoVerifier } from '../helpers/demoService.js';
import { newWallet } from '../helpers/flows.js';
import { webhookSecret } from '../helpers/webhookReceiver.js';

/**
 * Issue 31, the demo's status forms (D18: revoke, suspend, reinstate a credential from its issuance
 * result). Each form's MAC covers its action and the SerialNumber, and a form posted from another site is
 * refused (403) whatever MAC it carries. In Chromium: the demo at http://127.0.0.1:<port>, a hostile page
 * at http://localhost:<port> (another site).
 */
let t: TestService;
let browser: Browser;
let hostile: Server;
let hostileUrl: string;
/** what the hostile site's page holds: a form to the demo, with the fields it was given */
let hostileForm: { fields: Record<string, string>; noReferrer: boolean } = { fields: {}, noReferrer: false };

beforeAll(async () => {
  const identityFor = await demoIdentity();
  t = await startTestService((baseUrl) => ({
    demo: true,
    identity: identityFor(baseUrl),
    verifier: demoVerifier(),
    clients: demoClients(baseUrl, webhookSecret()),
  }));
  browser = await launchChromium();
  hostile = createServer((_req, res) => {
    const inputs = Object.entries(hostileForm.fields)
      .map(([name, value]) => `<input type="hidden" name="${name}" value="${value}">`)
      .join('');
    res.setHeader('content-type', 'text/html');
    if (hostileForm.noReferrer) res.setHeader('Referrer-Policy', 'no-referrer');
    res.end(
      `<!doctype html><html><head><title>Win a prize</title></head><body><form method="post" action="${t.url}/demo/credential-status">${inputs}<button type="submit">Claim prize</button></form></body></html>`,
    );
  });
  await new Promise<void>((resolve) => hostile.listen(0, '127.0.0.1', resolve));
  hostileUrl = `http://localhost:${(hostile.address() as AddressInfo).port}/`;
});
afterAll(async () => {
  await browser?.close();
  await t?.stop();
  await new Promise<void>((resolve) => (hostile ? hostile.close(() => resolve()) : resolve()));
});

/** Issues an EmployeeBadge from the demo page into a new wallet; the page ends on the result with the status forms. */
async function issued(page: Page): Promise<string> {
  const holder = await newWallet();
  await page.goto(`${t.url}/demo`);
  const form = page.locator('form', { has: page.locator('input[name="type"][value="EmployeeBadge"]') });
  await form.locator('input[name="attr.FirstName"]').fill('Dorothy');
  await form.locator('input[name="pin"]').fill('4321');
  await form.locator('button').click();
  const link = page.locator('a[href^="openid-credential-offer://"]');
  await expect.poll(() => link.count(), { timeout: 10_000 }).toBe(1);
  await holder.receive((await link.getAttribute('href'))!, { pin: '4321' });
  await page.waitForURL(/\/demo\/callback/, { timeout: 15_000 });
  return (JSON.parse(await page.locator('pre').innerText()) as { SerialNumber: string }).SerialNumber;
}

/** The POST of a status form (a predicate: a string would be read as a URL pattern, its `:port` a parameter). */
const statusPost = (res: { url(): string; request(): { method(): string } }) =>
  res.url() === `${t.url}/demo/credential-status` && res.request().method() === 'POST';

/**
 * Posts a status form with `fields` from a page of the demo, as its result page would (that page is the
 * callback's answer to a one-time code, so it cannot be shown again): a same-origin form post by Chromium.
 * Returns the answer's heading.
 */
async function postFromDemo(page: Page, fields: Record<string, string>): Promise<string> {
  await page.goto(`${t.url}/demo`);
  const [response] = await Promise.all([
    page.waitForResponse(statusPost),
    page.evaluate(
      ({ action, fields }) => {
        const form = document.createElement('form');
        form.method = 'post';
        form.action = action;
        for (const [name, value] of Object.entries(fields)) {
          const input = document.createElement('input');
          Object.assign(input, { type: 'hidden', name, value });
          form.append(input);
        }
        document.body.append(form);
        form.submit();
      },
      { action: `${t.url}/demo/credential-status`, fields },
    ),
  ]);
  expect(response.status()).toBe(200);
  await page.waitForURL(`${t.url}/demo/credential-status`);
  return page.locator('h1').innerText();
}

/** The hidden fields of the result page's form for `action`. */
async function formFields(page: Page, action: string): Promise<Record<string, string>> {
  const form = page.locator('form', { has: page.locator(`input[name="action"][value="${action}"]`) });
  const fields: Record<string, string> = {};
  for (const name of ['serialNumber', 'mac', 'action'])
    fields[name] = (await form.locator(`input[name="${name}"]`).getAttribute('value'))!;
  return fields;
}

describe("the demo's status forms (issue 31, Also)", () => {
  it("a reinstate form's MAC does not revoke: the form, changed to action revoke, is refused and the credential can still be suspended", async () => {
    const page = await browser.newPage();
    try {
      const serialNumber = await issued(page);
      const suspend = await formFields(page, 'suspend');
      // a hidden input's value is its attribute: the form is found by its button, which stays Reinstate
      const reinstate = page.locator('form', { has: page.getByRole('button', { name: 'Reinstate' }) });
      await reinstate.locator('input[name="action"]').evaluate((input: HTMLInputElement) => (input.value = 'revoke'));
      const [response] = await Promise.all([page.waitForResponse(statusPost), reinstate.getByRole('button').click()]);
      expect(response.status()).toBe(400);
      expect(await page.locator('h1').innerText()).toBe('This form was not made by this demo');

      // not revoked (that is final): its own suspend form still suspends it
      expect(await postFromDemo(page, suspend)).toBe('The credential is suspended');
      expect(JSON.parse(await page.locator('pre').innerText())).toEqual({ serialNumber, status: 'suspended' });
    } finally {
      await page.close();
    }
  });

  it.each([
    ['with its origin in Origin', false],
    ['with Origin null (its page sends no referrer)', true],
  ])(
    'a page of another site posting the genuine revoke form (%s) gets 403 and revokes nothing',
    async (_, noReferrer) => {
      const page = await browser.newPage();
      try {
        await issued(page);
        hostileForm = { fields: await formFields(page, 'revoke'), noReferrer };
        await page.goto(hostileUrl);
        const [response] = await Promise.all([
          page.waitForResponse(statusPost),
          page.getByRole('button', { name: 'Claim prize' }).click(),
        ]);
        expect(response.status()).toBe(403);
        expect(await page.locator('h1').innerText()).toBe('This form was not sent from this demo');

        // the same form posted from the demo's own page still revokes it, for the first time
        expect(await postFromDemo(page, hostileForm.fields)).toBe('The credential is revoked');
      } finally {
        await page.close();
      }
    },
  );

  it('an HTTP client naming another Origin gets 403; one naming none is judged by the MAC alone', async () => {
    const page = await browser.newPage();
    try {
      await issued(page);
      const fields = await formFields(page, 'suspend');
      const post = (headers: Record<string, string>, body = fields) =>
        fetch(`${t.url}/demo/credential-status`, {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
          body: new URLSearchParams(body),
        });
      expect((await post({ origin: 'https://evil.example' })).status).toBe(403);
      expect((await post({ origin: 'null', 'sec-fetch-site': 'cross-site' })).status).toBe(403);
      expect((await post({}, { ...fields, action: 'revoke' })).status).toBe(400);
      const genuine = await post({});
      expect(genuine.status).toBe(200);
      expect(await genuine.text()).toContain('The credential is suspended');
    } finally {
      await page.close();
    }
  });
});
