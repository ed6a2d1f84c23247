import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import * as oidc from 'openid-client';
import { createService } from '../../src/app.js';
import { loadConfig } from '../../src/config/load.js';
import type { Config } from '../../src/config/schema.js';
import { createLogger } from '../../src/log.js';
import { listen, type RunningServer } from '../../src/server.js';
import { testConfig } from '../helpers/service.js';
import { testStore } from '../helpers/stores.js';
import { Browser, makeHint, offerFromPage, resolveOfferLink } from '../helpers/rp.js';
import { newWallet, requestFromPage } from '../helpers/flows.js';
import { startWebhookReceiver } from '../helpers/webhookReceiver.js';
import { DEMO_CONFIG, JOURNEY, knownNeedles, leaks, type Needle } from '../helpers/logSecrets.js';

/**
 * Issue 21, D17: a full journey through the demo configuration (config/demo.yaml: its clients, secrets,
 * credential types and identity flows) with logging at debug, and every line the service wrote searched
 * for what must never be logged: the demo's client, webhook and identity provider secrets, the PINs and
 * attribute values sent, and what the journey made on the way (id_token_hints, offer references and
 * pre-authorized codes, request object references, authorization codes, ID and access tokens, PKCE
 * verifiers, credentials, the ContinuationContext, the context_id). The journey: an issuance with a PIN
 * (one wrong first), a verification, an External Client flow with its webhook, VerifiedIdentity with a PID
 * from the demo's PID issuer, and VerifiedIdentity_Other through the demo's identity provider.
 *
 * This test fails when a value it knows is logged by its own service; the whole run's log (every service,
 * every process) is checked for the values known before the run by test/logCapture.ts.
 */
const REDIRECT = 'http://localhost:8080/callback'; // one of demo-issuer's redirect URIs, never served
const CLIENT = 'demo-issuer';

let server: RunningServer;
let base: string;
let secret: string;
const lines: string[] = [];
/** the values the journey made, to be searched for */
const made: Needle[] = [];
const keep = (what: string, value: string | null | undefined) => void (value && made.push({ what, value }));
let receiver: Awaited<ReturnType<typeof startWebhookReceiver>>;

beforeAll(async () => {
  const probe = await import('node:http').then((http) => http.createServer());
  await new Promise<void>((resolve) => probe.listen(0, '127.0.0.1', resolve));
  const port = (probe.address() as { port: number }).port;
  await new Promise<void>((resolve) => probe.close(() => resolve()));
  base = `http://127.0.0.1:${port}`;

  // config/demo.yaml as `npm start` reads it with BASE_URL set; the test run's keys, store and port
  const demo = await loadConfig(DEMO_CONFIG, { BASE_URL: base });
  const issuer = demo.config.clients.find((c) => c.clientId === CLIENT)!;
  secret = issuer.clientSecret!;
  // its webhooks go to a receiver of the test's (with the demo's secret), which reads the ContinuationContext
  receiver = await startWebhookReceiver(issuer.webhook!.secret!);
  const test = testConfig(port) as { keys: Config['keys']; verifier: Config['verifier'] };
  const registrarDir = mkdtempSync(join(tmpdir(), 'vc-log-registrar-'));
  const config: Config = {
    ...demo.config,
    port,
    logLevel: 'debug',
    keys: { ...demo.config.keys, ...test.keys },
    // the demo's test registrar and registration certificate too (made on start), in a folder of the run's
    verifier: { ...demo.config.verifier, ...test.verifier, registrars: [join(registrarDir, 'registrar.pem')] },
    clients: demo.config.clients.map((c) =>
      c.clientId === CLIENT
        ? {
            ...c,
            webhook: { ...c.webhook!, url: receiver.url },
            ...(c.registration
              ? { registration: { ...c.registration, certificates: [join(registrarDir, 'registration.jwt')] } }
              : {}),
          }
        : c,
    ),
  };
  const sink = new Writable({
    write(chunk, _enc, done) {
      lines.push(...String(chunk).split('\n').filter(Boolean));
      done();
    },
  });
  const service = await createService(
    { config, file: DEMO_CONFIG, baseDir: dirname(DEMO_CONFIG) },
    { store: await testStore(), logger: createLogger('debug', sink) },
  );
  server = await listen(service, port, '127.0.0.1');
});
afterAll(async () => {
  await server?.stop(1_000);
  await receiver?.close();
});

const discover = () =>
  oidc.discovery(
    new URL(`${base}/v2.0/.well-known/openid-configuration`),
    CLIENT,
    secret,
    oidc.ClientSecretPost(secret),
    { execute: [oidc.allowInsecureRequests] },
  );

/** A relying party's authorisation request (PAR unless `par: false`), its PKCE verifier, state and nonce kept. */
async function authorise(config: oidc.Configuration, params: Record<string, string>, par = true) {
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  keep('PKCE verifier', verifier);
  const all = {
    redirect_uri: REDIRECT,
    state,
    nonce,
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    ...params,
  };
  const url = par ? await oidc.buildAuthorizationUrlWithPAR(config, all) : oidc.buildAuthorizationUrl(config, all);
  keep('request_uri', url.searchParams.get('request_uri'));
  return { url, verifier, state, nonce };
}

/** The code exchange after the browser arrived at the redirect URI; every value it made is kept. */
async function redeem(
  config: oidc.Configuration,
  callback: string,
  a: { verifier: string; state: string; nonce: string },
) {
  const url = new URL(callback);
  expect(url.searchParams.get('error'), url.searchParams.get('error_description') ?? '').toBeNull();
  keep('authorization code', url.searchParams.get('code'));
  const tokens = await oidc.authorizationCodeGrant(config, url, {
    pkceCodeVerifier: a.verifier,
    expectedState: a.state,
    expectedNonce: a.nonce,
    idTokenExpected: true,
  });
  keep('ID token', tokens.id_token);
  keep('access token', tokens.access_token);
  return tokens.claims()!;
}

async function prompt(browser: Browser, url: string): Promise<{ final: string; html: string }> {
  const page = await browser.follow(url);
  if (!page.html) throw new Error(`expected the prompt page, arrived at ${page.final}`);
  return { final: page.final, html: page.html };
}

/** An offer link: its reference and the pre-authorized code behind it are kept. */
async function keepOffer(link: string): Promise<void> {
  const reference = new URL(link).searchParams.get('credential_offer_uri')!;
  keep('offer reference', new URL(reference).pathname.split('/').pop());
  const offer = await resolveOfferLink(link);
  keep(
    'pre-authorized code',
    offer.grants['urn:ietf:params:oauth:grant-type:pre-authorized_code']['pre-authorized_code'],
  );
}

/** A form post in the browser (its cookies), answered with a redirect the browser then follows. */
async function submit(
  browser: Browser,
  url: string,
  form: Record<string, string>,
): Promise<{ final: string; html?: string }> {
  const res = await fetch(url, {
    method: 'POST',
    redirect: 'manual',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      cookie: [...browser.cookies].map(([k, v]) => `${k}=${v}`).join('; '),
    },
    body: new URLSearchParams(form),
  });
  for (const line of res.headers.getSetCookie()) {
    const [pair] = line.split(';');
    const i = pair.indexOf('=');
    browser.cookies.set(pair.slice(0, i).trim(), pair.slice(i + 1));
  }
  expect(res.status, await res.clone().text()).toBe(303);
  return browser.follow(new URL(res.headers.get('location')!, url).href);
}

describe('D17: the log of a full demo journey at debug', () => {
  it(
    'carries none of the secrets, PINs, attribute values, hints, codes, tokens or references of the journey',
    { timeout: 60_000 },
    async () => {
      const config = await discover();
      const wallet = await newWallet();

      // 1. issuance with a PIN (Version 2, PAR), a wrong PIN first
      const hint = await makeHint({
        clientId: CLIENT,
        secret,
        audience: base,
        claims: { ...JOURNEY.badge, PinCode: JOURNEY.pins.issuance },
      });
      keep('id_token_hint', hint);
      const issuance = await authorise(config, { scope: 'openid issue.EmployeeBadge', id_token_hint: hint });
      const issuanceBrowser = new Browser(REDIRECT);
      const issuancePrompt = await prompt(issuanceBrowser, issuance.url.href);
      const offer = offerFromPage(issuancePrompt.html);
      await keepOffer(offer);
      await expect(wallet.receive(offer, { pin: '0000' })).rejects.toThrow('attempt(s) left');
      const [badge] = [await wallet.receive(offer, { pin: JOURNEY.pins.issuance })];
      keep('credential', badge.credential);
      keep('credential (issuer-signed part)', badge.credential.split('~')[0]);
      const issued = await redeem(
        config,
        (await issuanceBrowser.follow(`${issuancePrompt.final}/continue`)).final,
        issuance,
      );
      expect(issued.FirstName).toBe(JOURNEY.badge.FirstName);

      // 2. verification (Version 2, PAR) of that credential
      const verification = await authorise(config, { scope: 'openid EmployeeBadge' });
      const verificationBrowser = new Browser(REDIRECT);
      const verificationPrompt = await prompt(verificationBrowser, verification.url.href);
      const request = requestFromPage(verificationPrompt.html);
      keep(
        'request object reference',
        new URL(new URL(request).searchParams.get('request_uri')!).pathname.split('/').pop(),
      );
      expect((await wallet.present(request)).status).toBe(200);
      await redeem(
        config,
        (await verificationBrowser.follow(`${verificationPrompt.final}/continue`)).final,
        verification,
      );

      // 3. an External Client flow (issuance with a PIN): the webhook, then context_id
      const externalHint = await makeHint({
        clientId: CLIENT,
        secret,
        audience: base,
        claims: { ...JOURNEY.badge, PinCode: JOURNEY.pins.external },
      });
      keep('id_token_hint (External)', externalHint);
      const external = await authorise(config, {
        scope: 'openid issue.EmployeeBadge External',
        id_token_hint: externalHint,
      });
      const externalPrompt = await prompt(new Browser(REDIRECT), external.url.href);
      const externalOffer = offerFromPage(externalPrompt.html);
      await keepOffer(externalOffer);
      keep('credential (External)', (await wallet.receive(externalOffer, { pin: JOURNEY.pins.external })).credential);
      const hook = await receiver.next((h) => h.payload.data.state === external.state);
      const contextId = hook.payload.data.ContinuationContext;
      keep('ContinuationContext', contextId);
      const continued = await fetch(
        `${base}/v2.0/oidc/authorize?${new URLSearchParams({ client_id: CLIENT, context_id: contextId, request_uri: external.url.searchParams.get('request_uri')! })}`,
        { redirect: 'manual' },
      );
      expect(continued.status).toBe(302);
      await redeem(config, continued.headers.get('location')!, external);

      // 4. VerifiedIdentity: a PID from the demo's PID issuer, presented
      const pidPage = await fetch(`${base}/demo/pid`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(JOURNEY.pid),
      });
      expect(pidPage.status).toBe(200);
      const pidOffer = offerFromPage(await pidPage.text());
      await keepOffer(pidOffer);
      const holder = await newWallet();
      keep('PID', (await holder.receive(pidOffer)).credential);
      const pid = await authorise(config, { scope: 'openid VerifiedIdentity' });
      const pidBrowser = new Browser(REDIRECT);
      const pidPrompt = await prompt(pidBrowser, pid.url.href);
      const pidRequest = requestFromPage(pidPrompt.html);
      keep(
        'request object reference (PID)',
        new URL(new URL(pidRequest).searchParams.get('request_uri')!).pathname.split('/').pop(),
      );
      expect((await holder.present(pidRequest)).status).toBe(200);
      const identified = await redeem(config, (await pidBrowser.follow(`${pidPrompt.final}/continue`)).final, pid);
      expect(identified.given_name).toBe(JOURNEY.pid.given_name);

      // 5. VerifiedIdentity_Other (Version 2, without PAR: a context_id too) through the demo's identity provider
      const other = await authorise(config, { scope: 'openid VerifiedIdentity_Other' }, false);
      const otherBrowser = new Browser(REDIRECT);
      const otherPrompt = await prompt(otherBrowser, other.url.href);
      const resume = /id="resume-link" href="([^"]+)"/.exec(otherPrompt.html)?.[1]?.replaceAll('&amp;', '&');
      keep('context_id', resume && new URL(resume).searchParams.get('context_id'));
      expect(made.at(-1)?.what).toBe('context_id');
      const login = await otherBrowser.follow(`${otherPrompt.final}/identity`);
      expect(login.final).toContain('/demo/idv/interaction/');
      const back = await submit(otherBrowser, login.final, { decision: 'confirm', ...JOURNEY.idvPerson });
      expect(back.final).toContain('/identity/callback');
      const verifiedOther = await redeem(
        config,
        (await otherBrowser.follow(`${otherPrompt.final}/continue`)).final,
        other,
      );
      expect(verifiedOther.given_name).toBe(JOURNEY.idvPerson.given_name);

      // the service logged the journey (requests, audit lines), and nothing of the above
      expect(lines.length).toBeGreaterThan(40);
      expect(lines.filter((l) => l.includes('"audit"')).length).toBeGreaterThanOrEqual(5);
      const found = leaks(lines, [...(await knownNeedles()), ...made]);
      expect(found).toEqual([]);
    },
  );
});
