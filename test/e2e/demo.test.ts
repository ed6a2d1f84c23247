import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { launchChromium } from '../helpers/browser.js';
import { startTestService, testConfig, VERIFIER_TRUST, type TestService } from '../helpers/service.js';
import { demoClients, demoIdentity, demoVerifier } from '../helpers/demoService.js';
import { Webhook } from 'standardwebhooks';
import { newWallet } from '../helpers/flows.js';
import { webhookSecret } from '../helpers/webhookReceiver.js';
import { DevWallet } from '../../src/wallet/holder.js';
import { run as walletCli } from '../../src/wallet/cli.js';

/**
 * The README's "try it" path: the built-in demo relying party (config demo: true) in Chromium, the dev
 * wallet as the holder. Issue, then verify, and read the ID token the relying party received; then the
 * same with the External option (D13), where the demo's own receiver gets the webhook; then the identity
 * flows (D12) with config/demo.yaml's identity blocks: a demo PID from /demo/pid, and the built-in
 * identity provider at /demo/idv.
 */
let t: TestService;
let browser: Browser;
let wallet: DevWallet;
const secret = webhookSecret();

/** config/demo.yaml's test registrar and demo-issuer's registration certificate, made on first start (issue 50) */
const registrarDir = mkdtempSync(join(tmpdir(), 'vc-demo-registrar-'));

beforeAll(async () => {
  const identityFor = await demoIdentity();
  t = await startTestService((baseUrl) => ({
    demo: true,
    // verifiers use a status list for a second: the revocation test does not wait five minutes
    statusList: { ttl: 1 },
    identity: identityFor(baseUrl),
    verifier: { ...demoVerifier(), registrars: [join(registrarDir, 'demo-registrar-ca.pem')] },
    // a boolean attribute, as config/demo.yaml's MembershipCard has (Premium); offered as an mdoc too
    credentialTypes: (testConfig(0).credentialTypes as { name: string; attributes: Record<string, unknown> }[]).map(
      (type) =>
        type.name === 'MembershipCard'
          ? {
              ...type,
              mdoc: { doctype: 'org.example.membership.1', namespace: 'org.example.membership.1' },
              attributes: {
                ...type.attributes,
                Premium: { type: 'boolean', required: false, label: 'Premium member' },
              },
            }
          : type,
    ),
    clients: demoClients(baseUrl, secret, {
      subject: 'LEIXG-DEMO-HR-PORTAL-0001',
      certificates: [join(registrarDir, 'demo-registration.jwt')],
    }),
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

/**
 * The wallet answers the page's "Open in wallet on this device" link, and, as a wallet on the holder's device
 * does, sends this browser to the address the verifier names (OpenID4VP 1.0 §8.2).
 */
async function presentSameDevice(page: Page, holder: DevWallet): Promise<void> {
  const answer = await holder.present(await walletLink(page, 'openid4vp://'));
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  expect(answer.redirectUri).toBeTruthy();
  await page.goto(answer.redirectUri!);
}

describe('the demo relying party', () => {
  it("carries a registration certificate from the demo's test registrar (issue 50, verifier_info)", async () => {
    const [registration] = t.service.registrations.of('issuer-pkce');
    expect(registration).toMatchObject({
      subject: 'LEIXG-DEMO-HR-PORTAL-0001',
      registrar: 'CN=Demo registrar (test only), O=VC OpenID Provider demo',
    });
    // what the demo's verification scopes ask for, and nothing else, is registered
    const credentials = registration.credentials.map((c) => `${c.format} ${c.vctValues?.[0] ?? c.doctype}`);
    expect(credentials).toEqual(
      expect.arrayContaining([`dc+sd-jwt ${t.url}/types/EmployeeBadge`, 'mso_mdoc org.example.membership.1']),
    );
  });

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

  it('asks yes or no for a boolean attribute, and refuses anything else rather than turning it into false (issue 22)', async () => {
    const form = await (await fetch(`${t.url}/demo`)).text();
    expect(form).toMatch(
      /<select name="attr\.Premium"><option value="">\(leave out\)<\/option><option value="true" selected>Yes<\/option><option value="false">No<\/option><\/select>/,
    );
    const refused = await fetch(`${t.url}/demo/start`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        type: 'MembershipCard',
        'attr.MemberName': 'Ada',
        'attr.MemberNumber': '7',
        'attr.Premium': 'yes',
        mode: 'v2-par',
      }),
      redirect: 'manual',
    });
    expect(refused.headers.get('location')).toBeNull();
    expect(await refused.text()).toContain('Premium member: choose yes or no');
  });

  it('verifies it through Version 1 without PAR and shows the verified attributes', async () => {
    const page = await browser.newPage();
    await page.goto(`${t.url}/demo`);
    const form = page.locator('form', { has: page.locator('input[name="kind"][value="verify"]') });
    await form.locator('select[name="mode"]').selectOption('v1');
    await form.locator('button').click();
    await presentSameDevice(page, wallet);
    await page.waitForURL(/\/demo\/callback/, { timeout: 15_000 });
    const shown = JSON.parse(await page.locator('pre').innerText());
    expect(shown).toMatchObject({ FirstName: 'Katherine', iss: `${t.url}/oidc`, aud: 'issuer-pkce' });
    await page.close();
  });

  it('lets the operator revoke an issued credential from its result; a verification then refuses it (D18)', async () => {
    const page = await browser.newPage();
    const holder = await newWallet();
    await page.goto(`${t.url}/demo`);
    const form = page.locator('form', { has: page.locator('input[name="type"][value="EmployeeBadge"]') });
    await form.locator('input[name="attr.FirstName"]').fill('Dorothy');
    await form.locator('input[name="pin"]').fill('4321');
    await form.locator('button').click();
    await holder.receive(await walletLink(page, 'openid-credential-offer://'), { pin: '4321' });
    await page.waitForURL(/\/demo\/callback/, { timeout: 15_000 });
    const { SerialNumber } = JSON.parse(await page.locator('pre').innerText());
    // revoking is final: the page asks first (issue 36: Revoke confirms and looks unlike Suspend and Reinstate)
    expect(await page.getByRole('button', { name: 'Revoke for good' }).isVisible()).toBe(false);
    await page.locator('summary', { hasText: 'Revoke' }).click();
    await page.getByRole('button', { name: 'Revoke for good' }).click();
    await expect.poll(() => page.locator('h1').innerText()).toBe('The credential is revoked');
    expect(JSON.parse(await page.locator('pre').innerText())).toEqual({
      serialNumber: SerialNumber,
      status: 'revoked',
    });

    // a form not made by the demo changes nothing
    const forged = await page.request.post(`${t.url}/demo/credential-status`, {
      form: { serialNumber: SerialNumber, action: 'reinstate', mac: 'x' },
    });
    expect(forged.status()).toBe(400);

    await new Promise((r) => setTimeout(r, 1100)); // the verifier's cached status list (statusList.ttl) runs out
    await page.goto(`${t.url}/demo`);
    const verify = page.locator('form', { has: page.locator('input[name="kind"][value="verify"]') });
    await verify.locator('button').click();
    const answer = await holder.present(await walletLink(page, 'openid4vp://'));
    expect(answer.status).toBe(400);
    await page.goto(answer.redirectUri!);
    await page.waitForURL(/\/demo\/callback/, { timeout: 15_000 });
    expect(JSON.parse(await page.locator('pre').innerText())).toMatchObject({
      error: 'access_denied',
      error_description: expect.stringMatching(/credential revoked/),
    });
    await page.close();
  });
});

describe('the demo relying party, an mdoc (docs/decisions.md, "mdocs without status")', () => {
  it("says that revoking an mdoc reaches this service's verifier only, and until when others accept it", async () => {
    const page = await browser.newPage();
    const holder = await newWallet();
    await page.goto(`${t.url}/demo`);
    const form = page.locator('form', { has: page.locator('input[name="type"][value="MembershipCard"]') });
    await form.locator('input[name="attr.MemberName"]').fill('Dorothy');
    await form.locator('input[name="attr.MemberNumber"]').fill('7');
    await form.locator('button').click();
    await holder.receiveMdoc(await walletLink(page, 'openid-credential-offer://'));
    await page.waitForURL(/\/demo\/callback/, { timeout: 15_000 });
    const { SerialNumber, ExpiresAt } = JSON.parse(await page.locator('pre').innerText());
    await page.locator('summary', { hasText: 'Revoke' }).click();
    await page.getByRole('button', { name: 'Revoke for good' }).click();
    await expect
      .poll(() => page.locator('h1').innerText())
      .toBe("The mdoc is revoked for this service's verifier only");
    expect(JSON.parse(await page.locator('pre').innerText())).toEqual({
      serialNumber: SerialNumber,
      status: 'revoked',
      note: `SerialNumber: credential ${SerialNumber} was issued as an mdoc without status, valid until ${ExpiresAt}: it is revoked for this service's verifier only, and other verifiers accept it until then`,
    });
    await page.close();
  });
});

/** The demo's waiting page, once the relying party's server has what the webhook led to (it reloads itself). */
async function externalResult(page: Page): Promise<{ title: string; shown: Record<string, unknown>; log: string }> {
  await expect
    .poll(
      () =>
        page
          .locator('h1')
          .innerText()
          .catch(() => ''),
      { timeout: 15_000 },
    )
    .not.toBe('External Client flow');
  return {
    title: await page.locator('h1').innerText(),
    shown: JSON.parse(await page.locator('pre').innerText()),
    log: await page.locator('ol.log').innerText(),
  };
}

/** The holder's prompt, opened from the demo's waiting page in a new tab as the page offers. */
async function openPrompt(page: Page): Promise<Page> {
  await page.waitForURL(/\/demo\/external\?state=/);
  const [prompt] = await Promise.all([
    page.waitForEvent('popup'),
    page.getByRole('link', { name: "Open the holder's prompt" }).click(),
  ]);
  return prompt;
}

describe('the demo relying party, External option (D13)', () => {
  it('issues through the External Client flow: the prompt stays, the demo gets the webhook, continues with context_id and shows the ID token', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${t.url}/demo`);
    await page.screenshot({ path: '/tmp/demo-external-start.png', fullPage: true });
    const form = page.locator('form', { has: page.locator('input[name="type"][value="EmployeeBadge"]') });
    await form.locator('input[name="attr.FirstName"]').fill('Grace');
    await form.locator('select[name="mode"]').selectOption('v2-par-external');
    await form.locator('button').click();
    const prompt = await openPrompt(page);
    await page.screenshot({ path: '/tmp/demo-external-waiting.png', fullPage: true });
    await wallet.receive(await walletLink(prompt, 'openid-credential-offer://'), { pin: '1234' });
    await expect
      .poll(() => prompt.locator('#status-text').innerText(), { timeout: 10_000 })
      .toContain('will continue from here');

    const { title, shown, log } = await externalResult(page);
    expect(title).toBe('The relying party received this ID token');
    expect(shown).toMatchObject({ FirstName: 'Grace', LastName: 'Lovelace', iss: t.url, aud: 'issuer-pkce' });
    expect(shown.sub).toBe(shown.SerialNumber);
    expect(log).toContain('flow.completed');
    expect(log).toContain('context_id=…&request_uri=…: 302');
    expect(log).not.toMatch(/context_id=[A-Za-z0-9_-]{43}/); // the context's value is not shown
    await page.screenshot({ path: '/tmp/demo-external-result.png', fullPage: true });
    // the holder's tab never went to the relying party
    expect(prompt.url()).toContain('/interaction/');
    await prompt.close();
    await page.close();
  });

  it('verifies through the External Client flow without PAR', async () => {
    const page = await browser.newPage();
    await page.goto(`${t.url}/demo`);
    const form = page.locator('form', { has: page.locator('input[name="kind"][value="verify"]') });
    await form.locator('select[name="mode"]').selectOption('v2-external');
    await form.locator('button').click();
    const prompt = await openPrompt(page);
    await presentSameDevice(prompt, wallet);
    const { shown, log } = await externalResult(page);
    expect(shown).toMatchObject({ FirstName: expect.any(String), iss: t.url, aud: 'issuer-pkce' });
    expect(log).not.toContain('request_uri');
    await prompt.close();
    await page.close();
  });

  it('shows flow.failed when the holder used up the PIN attempts', async () => {
    const page = await browser.newPage({ viewport: { width: 1280, height: 900 } });
    await page.goto(`${t.url}/demo`);
    const form = page.locator('form', { has: page.locator('input[name="type"][value="EmployeeBadge"]') });
    await form.locator('select[name="mode"]').selectOption('v2-par-external');
    await form.locator('button').click();
    const prompt = await openPrompt(page);
    const offer = await walletLink(prompt, 'openid-credential-offer://');
    const holder = await newWallet();
    for (let i = 0; i < 3; i++) await holder.receive(offer, { pin: '0000' }).catch(() => undefined);
    const { title, shown, log } = await externalResult(page);
    expect(title).toBe('The flow failed');
    expect(shown).toMatchObject({ type: 'flow.failed', error: 'access_denied', error_description: expect.any(String) });
    expect(log).toContain('flow.failed');
    await page.screenshot({ path: '/tmp/demo-external-failed.png', fullPage: true });
    await prompt.close();
    await page.close();
  });

  /** An External flow started through the demo, as its form does (no browser): its state. */
  async function startExternal(): Promise<string> {
    const started = await fetch(`${t.url}/demo/start`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ kind: 'verify', 'type.EmployeeBadge': '1', mode: 'v2-par-external' }),
      redirect: 'manual',
    });
    const state = new URL(started.headers.get('location')!).searchParams.get('state')!;
    expect(state).toMatch(/^[A-Za-z0-9_-]{22}$/);
    return state;
  }
  const event = (type: string, state: string, description: string) =>
    JSON.stringify({
      type,
      timestamp: new Date().toISOString(),
      data: {
        state,
        client_id: 'issuer-pkce',
        flow: 'verification',
        error: 'access_denied',
        error_description: description,
      },
    });
  /** Standard Webhooks headers for `payload`, signed with `key` as the service signs. */
  const signed = (key: string, payload: string) => {
    const id = `msg_${Math.random().toString(16).slice(2)}`;
    const now = new Date();
    return {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(now.getTime() / 1000)),
      'webhook-signature': new Webhook(key).sign(id, now, payload),
    };
  };
  const postHook = (headers: Record<string, string>, payload: string) =>
    fetch(`${t.url}/demo/webhook`, { method: 'POST', headers, body: payload });

  it('shows flow.expired, and takes a redelivery once', async () => {
    const state = await startExternal();
    // what the service sends once the wallet step expired (5 minutes here): signed with the client's secret
    const body = event('flow.expired', state, 'the wallet step expired before the wallet answered');
    const headers = signed(secret, body);
    expect((await postHook(headers, body)).status).toBe(204);
    const shown = await (await fetch(`${t.url}/demo/external?state=${state}`)).text();
    expect(shown).toContain('The flow expired');
    expect(shown).toContain('the wallet step expired before the wallet answered');
    const outcome = await t.service.store.get(`demo:${state}:outcome`);
    // a redelivery (same webhook-id and body) is answered 204 and changes nothing
    expect((await postHook(headers, body)).status).toBe(204);
    expect(await t.service.store.get(`demo:${state}:outcome`)).toEqual(outcome);
  });

  it('refuses a webhook that does not verify with 400, and it changes nothing', async () => {
    const state = await startExternal();
    const body = event('flow.failed', state, 'forged');
    const post = (headers: Record<string, string>, payload = body) => postHook(headers, payload);

    const forged = [
      signed(webhookSecret(), body), // another secret
      { ...signed(secret, body), 'webhook-signature': signed(webhookSecret(), body)['webhook-signature'] },
      { 'content-type': 'application/json' }, // no signature at all
    ];
    for (const headers of forged) expect((await post(headers)).status).toBe(400);
    // signed, then changed on the way
    expect((await post(signed(secret, body), body.replace('forged', 'changed'))).status).toBe(400);
    // signed too long ago
    const old = new Date(Date.now() - 10 * 60_000);
    expect(
      (
        await post({
          ...signed(secret, body),
          'webhook-timestamp': String(Math.floor(old.getTime() / 1000)),
          'webhook-signature': new Webhook(secret).sign('msg_old', old, body),
          'webhook-id': 'msg_old',
        })
      ).status,
    ).toBe(400);

    // an oversized body is refused before anything is verified
    const oversized = await post(signed(secret, body), body + ' '.repeat(100 * 1024));
    expect(oversized.status).toBe(400);
    expect(await oversized.json()).toMatchObject({
      error: 'invalid_request',
      error_description: expect.stringContaining('request body exceeds'),
    });

    expect(await t.service.store.get(`demo:${state}:outcome`)).toBeUndefined();
    const waiting = await (await fetch(`${t.url}/demo/external?state=${state}`)).text();
    expect(waiting).toContain('Waiting for the webhook');

    // the same event signed with the client's secret is taken: the 400s were the signature's
    expect((await post(signed(secret, body))).status).toBe(204);
    const after = await (await fetch(`${t.url}/demo/external?state=${state}`)).text();
    expect(after).toContain('The flow failed');
    expect(after).toContain('forged');
  });
});

describe('the demo relying party, Verify identity (D12)', () => {
  /** A demo PID from /demo/pid, received with the command the page shows (the dev wallet CLI, as `npm run wallet --` runs it). */
  async function demoPid(page: Page, givenName: string): Promise<DevWallet> {
    await page.goto(`${t.url}/demo`);
    await page.getByRole('link', { name: 'get a demo PID first' }).click();
    await page.waitForURL(`${t.url}/demo/pid`);
    await page.getByLabel('Given name').fill(givenName);
    await page.getByRole('button', { name: 'Create the offer' }).click();
    const link = await walletLink(page, 'openid-credential-offer://');
    const command = await page.locator('pre').innerText();
    expect(command).toBe(`npm run wallet -- receive '${link}'`);
    const file = join(mkdtempSync(join(tmpdir(), 'vc-wallet-')), 'wallet.json');
    const said: string[] = [];
    await walletCli(['receive', /^npm run wallet -- receive '(.*)'$/.exec(command)![1], '--wallet', file], (line) =>
      said.push(line),
    );
    expect(said.join('\n')).toContain('urn:eudi:pid:1');
    return DevWallet.open(file, { trust: VERIFIER_TRUST });
  }

  /** The demo's Verify identity card, submitted with a flow and an interface. */
  async function startIdentity(
    page: Page,
    flow: 'VerifiedIdentity' | 'VerifiedIdentity_Other',
    mode: string,
  ): Promise<void> {
    await page.goto(`${t.url}/demo`);
    const form = page.locator('form', { has: page.locator('input[name="kind"][value="identity"]') });
    await form.locator('select[name="flow"]').selectOption(flow);
    await form.locator('select[name="mode"]').selectOption(mode);
    await form.locator('button').click();
  }

  it('issues a demo PID at /demo/pid into the dev wallet, which presents it for VerifiedIdentity; the result shows the PID claims', async () => {
    const page = await browser.newPage();
    const holder = await demoPid(page, 'Augusta');
    const [pid] = holder.list();
    expect(pid).toMatchObject({
      vct: 'urn:eudi:pid:1',
      issuer: `${t.url}/demo-pid`,
      claims: { given_name: 'Augusta', family_name: 'Lovelace', birthdate: '1815-12-10', nationalities: ['GB'] },
    });

    await startIdentity(page, 'VerifiedIdentity', 'v2-par');
    await presentSameDevice(page, holder);
    await page.waitForURL(/\/demo\/callback/, { timeout: 15_000 });
    const shown = JSON.parse(await page.locator('pre').innerText());
    expect(shown).toMatchObject({
      given_name: 'Augusta',
      family_name: 'Lovelace',
      birthdate: '1815-12-10',
      nationalities: ['GB'],
      iss: t.url,
      aud: 'issuer-pkce',
    });
    expect(shown.personal_administrative_number).toBeUndefined(); // it makes the sub, and is not a claim the block lists
    expect(shown.sub).toMatch(/^[A-Za-z0-9_-]{43}$/);

    // another demo PID of the same person (the form's fixed number), in another wallet, through Version 1 without PAR: the same sub
    const again = await demoPid(page, 'Augusta Ada');
    await startIdentity(page, 'VerifiedIdentity', 'v1');
    await presentSameDevice(page, again);
    await page.waitForURL(/\/demo\/callback/, { timeout: 15_000 });
    const second = JSON.parse(await page.locator('pre').innerText());
    expect(second).toMatchObject({ given_name: 'Augusta Ada', iss: `${t.url}/oidc`, sub: shown.sub });
    await page.close();
  });

  it('runs VerifiedIdentity_Other through the built-in identity provider at /demo/idv; the result shows its claims', async () => {
    const page = await browser.newPage();
    await startIdentity(page, 'VerifiedIdentity_Other', 'v2');
    // the holder's prompt: a button to the provider, and (without PAR) the "continue on another device" link
    await expect.poll(() => page.locator('#resume-link').count(), { timeout: 10_000 }).toBe(1);
    expect(await page.locator('#resume-link').getAttribute('href')).toContain('context_id=');
    await page.getByRole('link', { name: 'Continue with Example ID check (demo)' }).click();
    await page.waitForURL(new RegExp(`^${t.url}/demo/idv/`), { timeout: 10_000 });
    await page.getByLabel(/given name/i).fill('Grace');
    await page.getByLabel(/family name/i).fill('Hopper');
    await page.getByLabel(/birth date/i).fill('1906-12-09');
    await page.getByRole('button', { name: 'Confirm identity' }).click();
    await page.waitForURL(/\/demo\/callback/, { timeout: 15_000 });
    const shown = JSON.parse(await page.locator('pre').innerText());
    expect(shown).toMatchObject({
      given_name: 'Grace',
      family_name: 'Hopper',
      birthdate: '1906-12-09',
      iss: t.url,
      aud: 'issuer-pkce',
    });
    expect(shown.sub).toMatch(/^[A-Za-z0-9_-]{43}$/);
    await page.close();
  });

  it('offers both flows, External for VerifiedIdentity only, and refuses VerifiedIdentity_Other with External itself', async () => {
    const demo = await (await fetch(`${t.url}/demo`)).text();
    expect(demo).toContain('VerifiedIdentity (PID from your wallet)');
    expect(demo).toContain('VerifiedIdentity_Other (Example ID check (demo))');
    expect(demo).toContain('External (VerifiedIdentity only)');
    const refused = await fetch(`${t.url}/demo/start`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ kind: 'identity', flow: 'VerifiedIdentity_Other', mode: 'v2-external' }),
      redirect: 'manual',
    });
    expect(refused.status).toBe(200);
    expect(await refused.text()).toContain('VerifiedIdentity_Other does not combine with External');
  });

  it('/demo/pid says what is wrong with a form, its values escaped, and creates no offer', async () => {
    const res = await fetch(`${t.url}/demo/pid`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        given_name: '<b>Ada</b>',
        family_name: 'Lovelace',
        birthdate: '1815-02-30',
        nationalities: 'GB',
        personal_administrative_number: '1',
      }),
    });
    expect(res.status).toBe(400);
    const page = await res.text();
    expect(page).toContain('Enter the birth date as YYYY-MM-DD');
    expect(page).toContain('value="&lt;b&gt;Ada&lt;/b&gt;"');
    expect(page).not.toContain('openid-credential-offer://');
  });
});

describe('the demo without identity blocks', () => {
  it('starts, and offers no Verify identity card', async () => {
    const plain = await startTestService((baseUrl) => ({
      demo: true,
      clients: (testConfig(0).clients as { clientId: string; redirectUris: string[] }[]).map((c) =>
        c.clientId === 'issuer-pkce' ? { ...c, redirectUris: [...c.redirectUris, `${baseUrl}/demo/callback`] } : c,
      ),
    }));
    try {
      const demo = await (await fetch(`${plain.url}/demo`)).text();
      expect(demo).toContain('Verify');
      expect(demo).not.toContain('Verify identity');
      expect((await fetch(`${plain.url}/demo/idv/.well-known/openid-configuration`)).status).toBe(404);
    } finally {
      await plain.stop();
    }
  });
});

describe('the demo with Version 1 off (versions.v1: false)', () => {
  it('offers Version 2 only, and a Version 1 mode sent anyway starts a Version 2 flow', async () => {
    const v2only = await startTestService((baseUrl) => ({
      demo: true,
      versions: { v1: false },
      clients: (testConfig(0).clients as { clientId: string; redirectUris: string[] }[]).map((c) =>
        c.clientId === 'issuer-pkce' ? { ...c, redirectUris: [...c.redirectUris, `${baseUrl}/demo/callback`] } : c,
      ),
    }));
    try {
      const demo = await (await fetch(`${v2only.url}/demo`)).text();
      expect(demo).toContain('value="v2-par"');
      expect(demo).not.toContain('value="v1-par"');
      expect(demo).not.toContain('value="v1"');
      const start = await fetch(`${v2only.url}/demo/start`, {
        method: 'POST',
        redirect: 'manual',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams({ kind: 'verify', 'type.EmployeeBadge': 'on', mode: 'v1' }),
      });
      expect(start.status, await start.clone().text()).toBe(302);
      expect(start.headers.get('location')).toMatch(new RegExp(`^${v2only.url}/v2\\.0/oidc/authorize\\?`));
    } finally {
      await v2only.stop();
    }
  });
});
